"""Natural-language descriptions of mined targets, written by any Inspect model (T2's
informalize step, protocol brief §2.3).

T2 asks a model (Claude Sonnet 4.5, temperature 0.6, top-p 0.95, 8192 tokens) to describe
each target from its header, the code before it, the target itself, the code after it and its
name, in one ``plaintext`` block without the Lean identifier; the reply's last fenced block is
the description, stored as a one-element list. Our prompt says the same in our own words
(``t2/prompts/informalize*.txt``); ``--nl-prompt`` replaces the user turn with a file of the
same placeholders (``{name}``, ``{kind}``, ``{header}``, ``{before}``, ``{target}``,
``{after}``; write ``{{`` and ``}}`` for literal braces).

Generation goes through Inspect's model API, so every provider Inspect knows works. A reply
that fails (a provider error, no text) is reported by record and left out; the others are kept.
Every description is also appended to a journal as soon as it arrives, keyed by a hash of the
whole request (model, prompts, sampling): a rerun after a crash or a failure asks again only
for what is missing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gapscope.t2.extract import fenced_blocks
from gapscope.t2.records import T2Record
from gapscope.t2.successors import target_identity
from gapscope.templates import Templates

template = Templates(Path(__file__).parent.parent / "prompts")
PLACEHOLDERS = frozenset({"name", "kind", "header", "before", "target", "after"})


@dataclass(frozen=True)
class Sampling:
    """T2's informalize sampling (its values are the defaults)."""

    temperature: float = 0.6
    top_p: float = 0.95
    max_tokens: int = 8192
    max_connections: int = 10


def read_prompt(path: Path | None) -> str:
    """The user-turn template: ``path``'s text, or the shipped one. ValueError naming the file
    when it uses a placeholder we do not fill or is not a format string."""
    if path is None:
        return template("informalize")
    text = path.read_text(encoding="utf-8")
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}
    except ValueError as exc:
        raise ValueError(f"--nl-prompt {path}: not a format template: {exc}") from None
    unknown = sorted(fields - PLACEHOLDERS)
    if unknown:
        raise ValueError(
            f"--nl-prompt {path}: unknown placeholder(s) {', '.join(unknown)}; "
            f"use {', '.join(sorted(PLACEHOLDERS))} (and {{{{ }}}} for literal braces)"
        )
    return text


def prompt_for(record: T2Record, user_template: str) -> str:
    """The user turn describing ``record``'s target."""
    target = target_identity(record)
    return user_template.format(
        name=target.name,
        kind=target.kind or "declaration",
        header=record.header.strip("\n"),
        before=record.before_target_code.strip("\n"),
        target=record.target_code.strip("\n"),
        after=record.after_target_code.strip("\n"),
    )


def description(reply: str) -> str | None:
    """The last ``plaintext`` block of a reply, else its last fenced block, else the whole
    reply (T2's code-block parser); None when that is empty."""
    blocks = fenced_blocks(reply)
    plain = [body for tag, body in blocks if tag == "plaintext"]
    text = plain[-1] if plain else blocks[-1][1] if blocks else reply
    return text.strip() or None


@dataclass(frozen=True)
class Informalized:
    """Descriptions by record id (in record order), for each record without one why, and how
    many descriptions came from the journal instead of the model."""

    descriptions: dict[str, str]
    failures: dict[str, str]
    reused: int = 0


@dataclass(frozen=True)
class Journal:
    """Descriptions received so far, one JSON line each: ``{"request", "id", "text"}``."""

    path: Path

    def load(self) -> dict[str, str]:
        """Request hash -> description; lines that do not read (a write cut by a crash) are
        skipped, so their requests are simply asked again."""
        found: dict[str, str] = {}
        if not self.path.is_file():
            return found
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and isinstance(row.get("text"), str):
                found[str(row.get("request"))] = row["text"]
        return found

    def add(self, request: str, record_id: str, text: str) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"request": request, "id": record_id, "text": text}) + "\n")


def request_key(model: str, system: str, user: str, sampling: Sampling) -> str:
    """What identifies a request: the model string, both prompts and the sampling."""
    parts = [model, system, user, sampling.temperature, sampling.top_p, sampling.max_tokens]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def informalize(
    records: Sequence[T2Record],
    model: str,
    user_template: str,
    sampling: Sampling = Sampling(),
    advance: Callable[[int], None] = lambda n: None,
    journal: Journal | None = None,
) -> Informalized:
    """Ask ``model`` (any Inspect model string) for each record's description; what
    ``journal`` already holds for the same request is reused."""
    from inspect_ai.model import (
        ChatMessage,
        ChatMessageSystem,
        ChatMessageUser,
        GenerateConfig,
        get_model,
    )

    llm = get_model(model)
    config = GenerateConfig(
        temperature=sampling.temperature, top_p=sampling.top_p, max_tokens=sampling.max_tokens
    )
    system_text = template("informalize_system")
    system = ChatMessageSystem(content=system_text)
    gate = asyncio.Semaphore(sampling.max_connections)
    known = journal.load() if journal is not None else {}
    users = [prompt_for(r, user_template) for r in records]
    keys = [request_key(model, system_text, u, sampling) for u in users]

    async def one(record: T2Record, user: str, key: str) -> str:
        if key in known:
            advance(1)
            return known[key]
        async with gate:
            messages: list[ChatMessage] = [system, ChatMessageUser(content=user)]
            output = await llm.generate(messages, config=config)
        advance(1)
        if output.error:
            raise RuntimeError(output.error)
        text = description(output.completion)
        if text is None:
            raise RuntimeError("the reply has no description")
        if journal is not None:
            journal.add(key, record.id, text)
        return text

    async def run() -> list[str | BaseException]:
        jobs = (one(r, u, k) for r, u, k in zip(records, users, keys, strict=True))
        return await asyncio.gather(*jobs, return_exceptions=True)

    results = asyncio.run(run())
    found: dict[str, str] = {}
    failed: dict[str, str] = {}
    for record, result in zip(records, results, strict=True):
        if isinstance(result, BaseException):
            failed[record.id] = f"{type(result).__name__}: {result}"
        else:
            found[record.id] = result
    return Informalized(found, failed, reused=sum(k in known for k in keys))
