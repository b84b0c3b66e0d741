"""A small inference engine over a `transformers` causal LM, with KV reuse and hooks.

Why not `model.generate`: the diagnostics need three things it does not give together.

* KV-cache reuse across calls. Each turn of an append-only conversation starts with the
  previous turn's prompt and reply; the engine keeps those keys/values (`PrefixCache`)
  and computes only the new suffix, so a 30-game S2B episode costs linear prefill.
* Batching of *independent* requests whose reused prefixes have different lengths.
  Each row is laid out as `[pad][cached prefix][suffix]` with an attention mask over
  real tokens and explicit position ids, so every row's attention sees exactly the
  keys/values and positions a sequential run would. A row's real tokens are kept
  contiguous (no padding between prefix and suffix): sliding-window layers (Gemma 3,
  Mistral) measure their window in cache columns, so a gap would shrink the window.
* Forward hooks that apply to one call only (steering), see `gapscope.models.hooks`.
  Requests steered differently (or not at all) share a forward pass when their hooks are
  additive (`RowAdditions`: each row adds its own vector), so the conditions of a dosage
  sweep run batched together; other hooks get batches of their own.
* Continuous batching: each caller is answered as its row stops, and requests that arrive
  while a batch decodes join it between two steps (``_admit``; docs/models.md, Batching).

This module has no Inspect dependency; `gapscope.models.inspect_api` adapts it.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch
from torch import Tensor, nn

from gapscope.models import lean_layers
from gapscope.models.batching import Batch, BatchQueue
from gapscope.models.block_linear import BlockLinear
from gapscope.models.calibration import format_note
from gapscope.models.checkpoints import cache_root, load_checkpoint
from gapscope.models.compute_turns import ComputeTurns
from gapscope.models.heap import keep_heap_small, release_free_memory
from gapscope.models.hooks import HookSet, RowAdditions, attached, current_hooks, is_additive
from gapscope.models.kvcache import (
    GrowingCache,
    KVEntry,
    PrefixCache,
    as_token_tensor,
    batch_cache,
    extract_row,
)
from gapscope.models.row_attention import KERNEL_ROW_ATTENTION, ROW_ATTENTION
from gapscope.models.weight_format import Int8Linear, apply_cpu_format

StopReason = Literal["stop", "max_tokens", "model_length"]

_PLAIN_NAMESPACE = ""
"""KV-cache namespace of requests made without hooks."""
_SPAN_PREFIXES = 4
"""Sequences ``span_means`` keeps keys/values of, for later ones that share their prefix."""
_ADDITIVE = "additive"
"""The batch group of requests whose hooks are additive (``hooks.is_additive``)."""
_CPU_COMPUTE = ComputeTurns()
"""Held by every CPU engine of the process while it computes a batch: two models (``make demo``
runs SmolLM2 and Gemma 3 side by side) then never run forward passes at once. They share the
same cores, so running them together was no faster, and it kept both models' batch buffers
and activations resident at once (peak memory); one at a time, only one model's are. A
running batch takes no more requests in while another engine waits (``compute_turns``)."""


@dataclass(frozen=True)
class SamplingParams:
    """How to pick tokens. No temperature (or 0) means greedy decoding."""

    max_tokens: int = 256
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    ignore_eos: bool = False
    """Decode to ``max_tokens`` past end-of-sequence (as vLLM's option of that name): for
    benchmarks whose two sides must do the same work whatever the model writes."""

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")


@dataclass(frozen=True)
class GenerationRequest:
    """One chat completion. `hooks` defaults to those active where the request is made.

    Setting `cancel` stops the request between two decode steps (or before it starts): the
    caller that gave up on it (Ctrl-C) must not leave the model decoding for minutes.
    """

    messages: tuple[Mapping[str, str], ...]
    params: SamplingParams = SamplingParams()
    hooks: HookSet | None = field(default_factory=current_hooks)
    cancel: threading.Event | None = field(default=None, compare=False)

    @property
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()


@dataclass(frozen=True)
class GenerationResult:
    """The reply and what it cost. `reused_tokens` of the prompt came from the KV cache."""

    text: str
    tokens: tuple[int, ...]
    prompt_tokens: int
    reused_tokens: int
    stop_reason: StopReason

    @property
    def computed_tokens(self) -> int:
        """Prompt tokens that went through the model in this call."""
        return self.prompt_tokens - self.reused_tokens


_Deliver = Callable[[int, GenerationResult], None]
"""Answers request ``i`` of a batch with its result (the moment its row stops)."""
_Join = Callable[[Callable[[GenerationRequest], bool], int], list[tuple[int, GenerationRequest]]]
"""Takes up to n waiting requests that a predicate accepts into a running batch
(`batching.Batch.join`), with their indices."""


@dataclass
class EngineStats:
    """Cumulative counters; `reset()` zeroes them (e.g. between benchmark phases)."""

    prefill_computed: int = 0
    prefill_reused: int = 0
    generated: int = 0
    requests: int = 0
    batches: int = 0
    decode_seconds: float = 0.0
    """Wall seconds from the end of each batch's prefill (its first tokens on) to its last
    row's stop, requests joining it meanwhile included: a decode rate that does not subtract
    one timed prefill from another (with long prompts their noise swamped it)."""

    def reset(self) -> None:
        self.prefill_computed = self.prefill_reused = self.generated = 0
        self.requests = self.batches = 0
        self.decode_seconds = 0.0


SPILLED_CACHE_BYTES = 2 << 30
"""The KV prefix cache's default bound on the CPU, where its entries are files, not memory:
``make demo`` keeps 13 SmolLM2 conversations going (8 study samples, 5 steering runs) of up
to 100 MB of keys/values each; under 256 MB only 3 % of its prompt tokens came from the cache
(the rest were prefilled again, cold: time, and the activations of 8 long rows at once)."""
IN_MEMORY_CACHE_BYTES = 256 << 20
"""The default bound where the entries stay in device memory (a GPU)."""
_ATTENTION_NOTES = {
    ROW_ATTENTION: "sdpa per row",
    KERNEL_ROW_ATTENTION: "kernel in decode steps (gapscope.models.decode_attention), "
    "sdpa per row in prefill",
}
"""What each attention the engine sets computes, as a log records it."""
_SDPA_LIKE = ("sdpa", ROW_ATTENTION, KERNEL_ROW_ATTENTION)
"""Attention the engine runs per row (``row_attention``): stock SDPA, or a model an engine
already set up (whose weights may since have changed format)."""


@dataclass(frozen=True)
class EngineConfig:
    """`batch_size`: most requests per forward pass; `cache_entries`: KV entries kept, and
    `cache_bytes` the most bytes of keys/values they may hold together (None: 2 GiB of files
    on the CPU, 256 MiB of device memory elsewhere)."""

    kv_reuse: bool = True
    batch_size: int = 8
    cache_entries: int = 16
    cache_bytes: int | None = None


@dataclass
class _Row:
    """Decoding state of one request inside a running batch."""

    index: int
    request: GenerationRequest
    prompt: Tensor
    namespace: str | None
    """Its KV-cache namespace (None: no reuse, no store)."""
    reused: int
    max_tokens: int
    generator: torch.Generator | None
    generated: list[int] = field(default_factory=list)
    stop_reason: StopReason | None = None


class Engine:
    """Chat generation on a shared model; safe to call from many threads."""

    def __init__(self, model: Any, tokenizer: Any, config: EngineConfig = EngineConfig()) -> None:
        if config.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {config.batch_size}")
        self.model = model
        self.weight_format = _weight_format(model)
        """``gguf`` or ``int8`` (see ``gapscope.models.weight_format``), or the weights' torch
        dtype."""
        if getattr(model.config, "_attn_implementation", None) in _SDPA_LIKE:
            # replies independent of the batch; the gguf format's decode steps in the kernel
            gguf = self.weight_format == "gguf"
            model.set_attn_implementation(KERNEL_ROW_ATTENTION if gguf else ROW_ATTENTION)
        self.tokenizer = tokenizer
        self.config = config
        self.stats = EngineStats()
        self._layers: list[nn.Module] = list(_find_decoder_layers(model))
        lean_layers.install(self._layers)  # Llama, Gemma 3: the same bits, fewer Python calls
        on_cpu = self.device.type == "cpu"
        # on the CPU the prefix cache's keys/values wait in files, not in memory (kvfiles)
        bound = config.cache_bytes
        if bound is None:
            bound = SPILLED_CACHE_BYTES if on_cpu else IN_MEMORY_CACHE_BYTES
        self.cache = PrefixCache(
            config.cache_entries if config.kv_reuse else 0, bound, spill=on_cpu
        )
        self._lock = _CPU_COMPUTE if on_cpu else ComputeTurns()
        self._queue: BatchQueue[GenerationRequest, GenerationResult] = BatchQueue(
            self._serve_batch, config.batch_size
        )
        self._eos = _eos_ids(model, tokenizer)
        self._pad = _pad_id(tokenizer, self._eos)
        self._max_positions: int | None = getattr(model.config, "max_position_embeddings", None)
        parameters = inspect.signature(model.forward).parameters
        self._cache_arg = "cache" if "cache" in parameters else "past_key_values"
        self._keep_arg = next(
            (name for name in ("logits_to_keep", "num_logits_to_keep") if name in parameters),
            None,
        )

    @classmethod
    def from_pretrained(
        cls,
        source: str | Path,
        *,
        device: str = "auto",
        dtype: str = "auto",
        cpu_format: str = "auto",
        allow_download: bool = False,
        config: EngineConfig = EngineConfig(),
    ) -> Engine:
        """Load a checkpoint (offline unless `allow_download`) and wrap it.

        On the CPU, `dtype` ``int8`` asks for int8 weights and ``fastest`` for fp32 or int8,
        whichever decodes faster, timed once per checkpoint and machine and remembered
        (`gapscope.models.weight_format`): both change the replies, so they are opt-ins;
        ``auto`` there is ``cpu_format`` (fp32 unless the caller says otherwise).
        """
        keep_heap_small()
        load_dtype = "float32" if dtype in ("int8", "fastest") else dtype
        loaded = load_checkpoint(
            source, device=device, dtype=load_dtype, allow_download=allow_download
        )
        on_cpu = next(loaded.model.parameters()).device.type == "cpu"
        requested = cpu_format if dtype == "auto" and on_cpu else dtype
        apply_cpu_format(loaded.model, loaded.source, requested, cache_root())
        engine = cls(loaded.model, loaded.tokenizer, config)  # stacks some layers' codes
        # the loader's buffers, replaced layers' weights and the codes stacking replaced
        release_free_memory(collect=True)
        return engine

    def info(self) -> dict[str, str | int]:
        """What a log records about the engine: weight format and its measured agreement
        with fp32 (``gapscope.models.calibration``), the attention that ran, device, threads,
        KV-cache bounds."""
        return {
            "weight_format": self.weight_format,
            "agreement_with_fp32": format_note(self.weight_format),
            "attention": _ATTENTION_NOTES.get(
                self.model.config._attn_implementation, self.model.config._attn_implementation
            ),
            "device": str(self.device),
            "torch_threads": torch.get_num_threads(),
            "batch_size": self.config.batch_size,
            "cache_entries": self.cache.max_entries,
            "cache_bytes": self.cache.max_bytes or 0,
            "cache_in_files": self.cache.spills,
        }

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device  # type: ignore[no-any-return]

    def decoder_layers(self) -> list[nn.Module]:
        """The transformer blocks, in order (targets for steering hooks)."""
        return list(self._layers)

    def clear_cache(self) -> None:
        """Forget all cached keys/values."""
        with self._lock:
            self.cache.clear()

    def render(self, messages: Sequence[Mapping[str, str]]) -> list[int]:
        """Prompt token ids: the chat template with the assistant turn opened."""
        message_list = [dict(message) for message in messages]
        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template(
                message_list, add_generation_prompt=True, tokenize=False
            )
            special = False  # the template writes BOS etc. itself
        else:
            text = "".join(f"{m['role']}: {m['content']}\n" for m in message_list) + "assistant:"
            special = True
        ids = self.tokenizer(text, add_special_tokens=special)["input_ids"]
        return [int(token) for token in ids]

    def submit(self, request: GenerationRequest) -> GenerationResult:
        """Generate for one request, batched with requests other threads submit meanwhile."""
        return self._queue.submit(request)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """Generate for `requests` in batches of `batch_size`; results in request order.

        Requests whose hooks are additive (none, or steering) share batches whatever their
        vectors; requests with any other hooks run in batches of their own hooks.
        """
        results: dict[int, GenerationResult] = {}
        self._serve(requests, results.__setitem__, None)
        return [results[index] for index in range(len(requests))]

    def _serve_batch(self, batch: Batch[GenerationRequest, GenerationResult]) -> None:
        """The queue's run: each caller is answered as its row stops, and requests waiting
        meanwhile join the running batch where they fit (see ``_admit``)."""
        self._serve(batch.requests, batch.deliver, batch.join)

    def _serve(
        self, requests: Sequence[GenerationRequest], deliver: _Deliver, join: _Join | None
    ) -> None:
        groups: dict[HookSet | str | None, list[int]] = {}
        for index, request in enumerate(requests):
            key = _ADDITIVE if is_additive(request.hooks) else request.hooks
            groups.setdefault(key, []).append(index)
        size = self.config.batch_size
        with self._lock:
            for indices in groups.values():
                for start in range(0, len(indices), size):
                    chunk = indices[start : start + size]
                    self._run_batch([(i, requests[i]) for i in chunk], deliver, join)
            # a batch's cache buffers (its longest prompt's width) are garbage now
            release_free_memory()

    def span_means(
        self,
        sequences: Sequence[Sequence[int]],
        spans: Sequence[tuple[int, int]],
        layers: Sequence[int],
    ) -> Tensor:
        """Mean output of each of ``layers`` over each sequence's token span ``[start, end)``.

        The hidden-states path for activation extraction: one teacher-forced forward pass per
        sequence, no hooks but capturing ones; the span mean is taken inside the capture so no
        full hidden-state tensor is kept. A sequence that shares a prefix with one computed
        before it in this call reuses that one's keys/values up to its span's start, and only
        its other tokens go through the model: an S2B episode's query games each extend the
        ones before them, so the demo's eight traces cost about 2,500 tokens of prefill
        instead of 15,000 padded ones (68 s on two cores before). The span itself always goes
        through the model, exactly as in a full pass up to float rounding. Returns float32
        ``[len(sequences), len(layers), hidden]`` on the CPU.
        """
        if len(sequences) != len(spans):
            raise ValueError("span_means needs one span per sequence")
        for sequence, (start, end) in zip(sequences, spans, strict=True):
            if not 0 <= start < end <= len(sequence):
                raise ValueError(
                    f"span [{start}, {end}) is empty or outside a {len(sequence)}-token sequence"
                )
        computed = PrefixCache(_SPAN_PREFIXES)
        with self._lock, torch.inference_mode():
            means = [
                self._span_mean(as_token_tensor(sequence), span, layers, computed)
                for sequence, span in zip(sequences, spans, strict=True)
            ]
        return torch.stack(means)

    def _span_mean(
        self, tokens: Tensor, span: tuple[int, int], layers: Sequence[int], computed: PrefixCache
    ) -> Tensor:
        start, end = span
        entry, shared = computed.lookup(_PLAIN_NAMESPACE, tokens)
        reused = min(shared, start)
        cache, _ = batch_cache([(entry, reused)])
        suffix = tokens[reused:]
        weights = torch.zeros(suffix.numel(), dtype=torch.float32)
        weights[start - reused : end - reused] = 1.0 / (end - start)
        device = self.device
        weights = weights.to(device)
        captured: dict[int, Tensor] = {}

        def capture(layer: int) -> Any:
            def hook(module: nn.Module, args: tuple[Any, ...], output: Any) -> None:
                hidden = output[0] if isinstance(output, tuple) else output
                captured[layer] = torch.einsum("t,th->h", weights, hidden[0].float()).cpu()

            return hook

        hooks = HookSet(tuple((layer, capture(layer)) for layer in layers))
        mask = torch.ones((1, tokens.numel()), dtype=torch.long, device=device)
        positions = torch.arange(reused, tokens.numel(), device=device)[None]
        with attached(self.model, self._layers, hooks):
            self._forward(suffix[None].to(device), mask, positions, cache)
        every = torch.arange(tokens.numel(), device=device)
        computed.store(_PLAIN_NAMESPACE, KVEntry(tokens, extract_row(cache, 0, every)))
        return torch.stack([captured[layer] for layer in layers])

    # --- one batch -------------------------------------------------------------------

    def _run_batch(
        self,
        requests: list[tuple[int, GenerationRequest]],
        deliver: _Deliver,
        join: _Join | None,
    ) -> None:
        rows: list[_Row] = []
        for index, request in requests:
            prompt = as_token_tensor(self.render(request.messages))
            row = self._start(index, request, prompt, deliver)
            if row is not None:
                rows.append(row)
        if rows:
            self.stats.batches += 1  # before: its callers are answered as its rows stop
            self._decode_rows(rows, deliver, join)

    def _start(
        self, index: int, request: GenerationRequest, prompt: Tensor, deliver: _Deliver
    ) -> _Row | None:
        """The decoding row of ``request``, or None where it is answered at once: cancelled
        already, or its prompt fills the model's context."""
        if prompt.numel() == 0:
            raise ValueError("the chat template rendered an empty prompt")
        self.stats.requests += 1
        budget = self._token_budget(prompt.numel(), request.params.max_tokens)
        if request.cancelled or budget <= 0:
            reason: StopReason = "stop" if request.cancelled else "model_length"
            deliver(index, GenerationResult("", (), prompt.numel(), 0, reason))
            return None
        return _Row(
            index=index,
            request=request,
            prompt=prompt,
            namespace=_namespace(request.hooks) if self.config.kv_reuse else None,
            reused=0,
            max_tokens=budget,
            generator=_generator(request.params.seed, self.device),
        )

    def _decode_rows(self, rows: list[_Row], deliver: _Deliver, join: _Join | None) -> None:
        """Decode ``rows`` under their hooks: one hook set as is, or differing additive ones
        merged into one per-row addition (each row keeps its own KV namespace)."""
        hook_sets = [row.request.hooks for row in rows]
        additions = None
        hooks = hook_sets[0]
        if any(h != hooks for h in hook_sets):
            additions = RowAdditions(hook_sets, len(self._layers))
            hooks = additions.hook_set()
        with torch.inference_mode(), attached(self.model, self._layers, hooks):
            self._decode(rows, hooks, additions, deliver, join)

    def _token_budget(self, prompt_length: int, requested: int) -> int:
        """Tokens a reply may have: as requested, but within the model's context."""
        if self._max_positions is None:
            return requested
        return min(requested, self._max_positions - prompt_length)

    def _decode(
        self,
        rows: list[_Row],
        hooks: HookSet | None,
        additions: RowAdditions | None,
        deliver: _Deliver,
        join: _Join | None,
    ) -> None:
        """Prefill every row's uncached suffix, then decode until all rows stop, answering
        each as it stops; with ``join``, waiting requests join between steps (``_admit``)."""
        # joiners fill the rows finished ones leave, or rows reserved for them (kvcache)
        cache, mask, logits = self._prefill(rows, self.config.batch_size if join else 0)
        started = time.perf_counter()
        joining = None
        if join is not None:
            joining = _Joining(self, join, hooks, additions)
        live, device = rows, self.device
        while True:
            live, mask = self._advance(live, logits, cache, mask, additions, deliver)
            if not live:
                self.stats.decode_seconds += time.perf_counter() - started
                return
            # no request joins while another engine waits for the CPU (compute_turns)
            if (
                joining is not None
                and len(live) < self.config.batch_size
                and not self._lock.contended
            ):
                live, mask = self._admit(live, cache, mask, joining, deliver)
            step = torch.tensor([[row.generated[-1]] for row in live], device=device)
            positions = [[row.prompt.numel() + len(row.generated) - 1] for row in live]
            mask = torch.cat([mask, mask.new_ones((len(live), 1))], dim=1)
            logits = self._forward(step, mask, torch.tensor(positions, device=device), cache)

    def _prefill(self, rows: list[_Row], reserved_rows: int) -> tuple[GrowingCache, Tensor, Tensor]:
        """One forward pass over every row's uncached suffix, after its reused prefix: the
        cache (room for each row's reply, and for ``reserved_rows`` rows), its attention mask
        and each row's next-token logits. Each row's tokens end at the last column."""
        entries, available = self._lookup(rows)
        # Every row feeds `span` tokens. A row whose cached prefix is longer than needed
        # recomputes a few cached tokens in place of padding: the same work, and its real
        # tokens stay contiguous (see the module docstring).
        span = max(row.prompt.numel() - n for row, n in zip(rows, available, strict=True))
        for row in rows:
            row.reused = max(0, row.prompt.numel() - span)
            self.stats.prefill_reused += row.reused
            self.stats.prefill_computed += row.prompt.numel() - row.reused

        # every column the batch can reach, reserved at once (kvcache.GrowingLayer)
        reach = span + max(row.max_tokens for row in rows)
        cache, width = batch_cache(
            [(entry, row.reused) for entry, row in zip(entries, rows, strict=True)],
            max(row.reused for row in rows) + reach,
            reserved_rows,
        )
        del entries  # a spilled entry's mapping ends here: its columns are in `cache` now
        input_ids = torch.full((len(rows), span), self._pad, dtype=torch.long)
        positions = torch.zeros((len(rows), span), dtype=torch.long)
        mask = torch.zeros((len(rows), width + span), dtype=torch.long)
        for i, row in enumerate(rows):
            suffix = row.prompt[row.reused :]
            input_ids[i, span - suffix.numel() :] = suffix
            positions[i, span - suffix.numel() :] = torch.arange(row.reused, row.prompt.numel())
            mask[i, width - row.reused : width] = 1
            mask[i, width + span - suffix.numel() :] = 1
        device = self.device
        mask = mask.to(device)
        logits = self._forward(input_ids.to(device), mask, positions.to(device), cache)
        return cache, mask, logits

    def _advance(
        self,
        live: list[_Row],
        logits: Tensor,
        cache: GrowingCache,
        mask: Tensor,
        additions: RowAdditions | None,
        deliver: _Deliver,
    ) -> tuple[list[_Row], Tensor]:
        """Choose each live row's next token; answer the rows that stop (storing their keys and
        values) and drop them from the batch. Returns the rows going on and their mask."""
        chosen = self._choose(logits, live)
        keep: list[int] = []
        for slot, row in enumerate(live):
            row.generated.append(chosen[slot])
            row.stop_reason = self._stop_reason(row)
            if row.stop_reason is None:
                keep.append(slot)
                continue
            if row.namespace is not None:
                self._store(row.namespace, row, cache, slot, mask)
            deliver(row.index, self._result(row))
        if keep and len(keep) < len(live):
            index = torch.tensor(keep, device=mask.device)
            cache.batch_select_indices(index)
            if additions is not None:
                additions.select(keep)
            mask = mask[index]
        return [live[slot] for slot in keep], mask

    def _admit(
        self,
        live: list[_Row],
        cache: GrowingCache,
        mask: Tensor,
        joining: _Joining,
        deliver: _Deliver,
    ) -> tuple[list[_Row], Tensor]:
        """Let waiting requests that fit join the running batch between two steps.

        The joiners' uncached suffixes go through a forward pass of their own (after their
        reused prefixes, as a batch's rows do), and their first tokens are chosen from it. The
        keys/values of those that go on are put into the batch's cache as new rows whose tokens
        end at its last column, with padding before them, so from the next step they decode
        with the batch and their real tokens stay contiguous (sliding windows count columns).
        Their prompt must therefore be no wider than the batch's columns (a wider one waits
        for the batch to grow or end). Costs: their prefill, and one copy of their own keys and
        values; the batch's are not copied (the rows were reserved, ``_prefill``), unless a
        joiner's reply reaches past the reserved columns, which reallocates them once.
        """
        width = mask.shape[1]
        new_rows = [
            row
            for index, request, prompt in joining.take(self.config.batch_size - len(live), width)
            if (row := self._start(index, request, prompt, deliver)) is not None
        ]
        if not new_rows:
            return live, mask
        additions = joining.additions
        hook_sets = [row.request.hooks for row in new_rows]
        with additions.joining(hook_sets) if additions is not None else nullcontext():
            own_cache, own_mask, logits = self._prefill(new_rows, 0)
        going, own_mask = self._advance(new_rows, logits, own_cache, own_mask, None, deliver)
        if additions is not None:  # the joiners that stopped at once leave the additions
            kept = [len(live) + new_rows.index(row) for row in going]
            additions.select([*range(len(live)), *kept])
        if not going:
            return live, mask
        cache.append_rows(own_cache)
        padded = own_mask.new_zeros((len(going), width))
        padded[:, width - own_mask.shape[1] :] = own_mask
        return live + going, torch.cat([mask, padded])

    def _lookup(self, rows: list[_Row]) -> tuple[list[KVEntry | None], list[int]]:
        """Each row's cached entry (or None) and how many of its prompt tokens it can reuse."""
        entries: list[KVEntry | None] = []
        available: list[int] = []
        for row in rows:
            entry, length = (None, 0)
            if row.namespace is not None:
                entry, length = self.cache.lookup(row.namespace, row.prompt)
            entries.append(entry)
            # At least one prompt token must go through the model to yield logits.
            available.append(min(length, row.prompt.numel() - 1))
        return entries, available

    def _forward(self, input_ids: Tensor, mask: Tensor, positions: Tensor, cache: Any) -> Tensor:
        """Run the model on new tokens; logits of each row's last position, as float32."""
        kwargs: dict[str, Any] = {self._cache_arg: cache, "use_cache": True}
        if self._keep_arg is not None:
            kwargs[self._keep_arg] = 1
        output = self.model(
            input_ids=input_ids, attention_mask=mask, position_ids=positions, **kwargs
        )
        return output.logits[:, -1, :].float()  # type: ignore[no-any-return]

    def _choose(self, logits: Tensor, rows: list[_Row]) -> list[int]:
        greedy = logits.argmax(dim=-1).tolist()
        return [
            _sample(logits[slot], row.request.params, row.generator)
            if row.request.params.temperature
            else int(greedy[slot])
            for slot, row in enumerate(rows)
        ]

    def _stop_reason(self, row: _Row) -> StopReason | None:
        if row.request.cancelled:
            return "stop"
        if row.generated[-1] in self._eos and not row.request.params.ignore_eos:
            return "stop"
        stops = row.request.params.stop
        if stops and any(stop in self._decode_text(row.generated) for stop in stops):
            return "stop"
        if len(row.generated) >= row.max_tokens:
            return "max_tokens"
        return None

    def _store(self, namespace: str, row: _Row, cache: Any, slot: int, mask: Tensor) -> None:
        """Cache the keys/values of prompt + reply (the last token was never fed)."""
        tokens = torch.cat([row.prompt, as_token_tensor(row.generated[:-1])])
        columns = mask[slot].nonzero().squeeze(1)
        if columns.numel() != tokens.numel():
            raise RuntimeError(
                f"KV bookkeeping error: {columns.numel()} cached positions for "
                f"{tokens.numel()} tokens"
            )
        self.cache.store(namespace, KVEntry(tokens, extract_row(cache, slot, columns)))

    def _result(self, row: _Row) -> GenerationResult:
        reply = row.generated
        if reply and reply[-1] in self._eos:
            reply = reply[:-1]
        text = self._decode_text(reply)
        for stop in row.request.params.stop:
            cut = text.find(stop)
            if cut >= 0:
                text = text[:cut]
        self.stats.generated += len(row.generated)
        return GenerationResult(
            text=text,
            tokens=tuple(row.generated),
            prompt_tokens=row.prompt.numel(),
            reused_tokens=row.reused,
            stop_reason=row.stop_reason or "max_tokens",
        )

    def _decode_text(self, tokens: list[int]) -> str:
        return str(self.tokenizer.decode(tokens, skip_special_tokens=True))


class _Joining:
    """Which waiting requests may join a running batch, and taking them in: those whose hooks
    the batch serves (its own hook set, or an additive set its merged additions cover) and
    whose prompt fits in the batch's columns (see ``Engine._admit``)."""

    def __init__(
        self, engine: Engine, join: _Join, hooks: HookSet | None, additions: RowAdditions | None
    ) -> None:
        self._render = engine.render
        self._join = join
        self._hooks = hooks
        self.additions = additions
        self._prompts: dict[int, Tensor] = {}
        """Prompts of the requests seen waiting, by id: rendered once, however many steps they
        wait (a waiting request stays referenced by the queue, so its id stays its own)."""

    def take(self, limit: int, width: int) -> list[tuple[int, GenerationRequest, Tensor]]:
        """Up to ``limit`` waiting requests that fit ``width`` columns, with index and prompt."""
        taken = self._join(lambda request: self._fits(request, width), limit)
        return [(index, request, self._prompt(request, keep=False)) for index, request in taken]

    def _fits(self, request: GenerationRequest, width: int) -> bool:
        if self.additions is not None:
            served = self.additions.accepts(request.hooks)
        else:
            served = request.hooks == self._hooks
        return served and self._prompt(request, keep=True).numel() <= width

    def _prompt(self, request: GenerationRequest, keep: bool) -> Tensor:
        prompt = self._prompts.pop(id(request), None)
        if prompt is None:  # the same request object may wait twice
            prompt = as_token_tensor(self._render(request.messages))
        if keep:
            self._prompts[id(request)] = prompt
        return prompt


def _namespace(hooks: HookSet | None) -> str | None:
    """KV namespace for a hook configuration; None means: do not reuse or store."""
    if hooks is None:
        return _PLAIN_NAMESPACE
    return None if hooks.cache_key is None else f"hooks:{hooks.cache_key}"


def _generator(seed: int | None, device: torch.device) -> torch.Generator | None:
    if seed is None:
        return None
    return torch.Generator(device=device).manual_seed(seed)


def _sample(logits: Tensor, params: SamplingParams, generator: torch.Generator | None) -> int:
    """Temperature, then top-k, then nucleus (top-p) sampling of one token."""
    scores = logits / float(params.temperature or 1.0)
    if params.top_k is not None and 0 < params.top_k < scores.numel():
        threshold = torch.topk(scores, params.top_k).values[-1]
        scores = scores.masked_fill(scores < threshold, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    if params.top_p is not None and 0 < params.top_p < 1:
        sorted_probs, order = torch.sort(probs, descending=True)
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
        sorted_probs = sorted_probs.masked_fill(before >= params.top_p, 0.0)
        probs = torch.zeros_like(probs).scatter(0, order, sorted_probs)
    return int(torch.multinomial(probs, 1, generator=generator))


def _weight_format(model: nn.Module) -> str:
    if any(isinstance(module, Int8Linear) for module in model.modules()):
        return "int8"
    if any(isinstance(module, BlockLinear) for module in model.modules()):
        return "gguf"
    return str(next(model.parameters()).dtype).removeprefix("torch.")


def _find_decoder_layers(model: nn.Module) -> nn.ModuleList:
    """The model's list of transformer blocks (the ModuleList with one per hidden layer)."""
    expected = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    for _, module in model.named_modules():
        if isinstance(module, nn.ModuleList) and len(module) == expected:
            return module
    raise ValueError(f"cannot find the decoder layers of {type(model).__name__}")


def _eos_ids(model: Any, tokenizer: Any) -> frozenset[int]:
    ids: set[int] = set()
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for value in (configured, tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return frozenset(ids)


def _pad_id(tokenizer: Any, eos: frozenset[int]) -> int:
    """Any valid id works for padding (padded positions are masked); prefer the pad token."""
    if tokenizer.pad_token_id is not None:
        return int(tokenizer.pad_token_id)
    return min(eos) if eos else 0
