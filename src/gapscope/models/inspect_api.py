"""The Inspect `ModelAPI` for `gapscope/embedded[/<name>]` and `gapscope/hf/<checkpoint>`.

A thin adapter: it turns Inspect messages and `GenerateConfig` into an engine request,
hands it to the engine from a worker thread (the engine batches concurrent requests),
and wraps the reply as a `ModelOutput`. Model args (`-M key=value`):

    device          auto | cpu | cuda | cuda:N | mps            (default auto)
    dtype           auto | float32 | float16 | bfloat16 | int8 | fastest
                    (default auto: float32 on the CPU, the faithful format; int8 and
                    fastest change the replies, see ``gapscope.models.calibration``)
    kv_reuse        reuse KV caches across calls                 (default true)
    batch_size      most concurrent requests per forward pass    (default 8)
    cache_entries   KV-cache entries kept (LRU)                  (default 16)
    cache_mb        most MB of keys/values the KV cache keeps    (default 2048 on the
                    CPU, where they are files; 256 in device memory elsewhere)
    allow_download  let hub names download (offline otherwise)   (default false)

Provider instances with identical arguments share one engine (and so one model in
memory and one KV cache): Inspect creates a provider per distinct `GenerateConfig`.
The engine is reachable as `get_model(...).api.engine` (e.g. for steering). Every reply's
metadata (``ModelOutput.metadata["gapscope_engine"]``) records the weight format used, its
measured agreement with fp32 and the torch threads, so every log says what computed it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import anyio
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from gapscope.models.embedded import embedded_checkpoint, find_embedded
from gapscope.models.engine import Engine, EngineConfig, GenerationRequest, SamplingParams
from gapscope.models.hooks import current_hooks

EMBEDDED_SOURCE = "embedded"
"""The provider-relative name of the embedded models (``gapscope/embedded[/<name>]``)."""
HF_PREFIX = "hf/"
DEFAULT_MAX_TOKENS = 512


@dataclass(frozen=True)
class ModelArgs:
    """Validated `-M` model args of the gapscope provider."""

    device: str = "auto"
    dtype: str = "auto"
    kv_reuse: bool = True
    batch_size: int = 8
    cache_entries: int = 16
    cache_mb: int | None = None
    allow_download: bool = False

    @classmethod
    def parse(cls, args: dict[str, Any]) -> ModelArgs:
        """From raw model args (strings from the CLI, typed values from Python)."""
        unknown = sorted(set(args) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(
                f"unknown gapscope model arg(s) {', '.join(unknown)}; "
                f"known: {', '.join(cls.__dataclass_fields__)}"
            )
        parsed = cls(
            device=str(args.get("device", cls.device)),
            dtype=str(args.get("dtype", cls.dtype)),
            kv_reuse=_as_bool("kv_reuse", args.get("kv_reuse", cls.kv_reuse)),
            batch_size=_as_int("batch_size", args.get("batch_size", cls.batch_size)),
            cache_entries=_as_int("cache_entries", args.get("cache_entries", cls.cache_entries)),
            cache_mb=None if "cache_mb" not in args else _as_int("cache_mb", args["cache_mb"]),
            allow_download=_as_bool(
                "allow_download", args.get("allow_download", cls.allow_download)
            ),
        )
        if parsed.batch_size < 1 or parsed.cache_entries < 0 or (parsed.cache_mb or 0) < 0:
            raise ValueError(
                "model args need batch_size >= 1, cache_entries >= 0 and cache_mb >= 0"
            )
        return parsed


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "1", "yes", "on"}:
        return True
    if text in {"false", "0", "no", "off"}:
        return False
    raise ValueError(f"model arg {name}={value!r} is not a boolean (use true or false)")


def _as_int(name: str, value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"model arg {name}={value!r} is not an integer") from None


@dataclass(frozen=True)
class ModelSource:
    """The checkpoint a gapscope model name refers to, and stop strings it always needs."""

    checkpoint: str
    stop: tuple[str, ...] = ()


def model_source(model_name: str) -> ModelSource:
    """Resolve `embedded`, `embedded/<name>` (converting its GGUF once) or `hf/<checkpoint>`."""
    if model_name == EMBEDDED_SOURCE or model_name.startswith(f"{EMBEDDED_SOURCE}/"):
        embedded = find_embedded(model_name[len(EMBEDDED_SOURCE) + 1 :])
        return ModelSource(str(embedded_checkpoint(embedded)), embedded.stop)
    if model_name.startswith(HF_PREFIX) and len(model_name) > len(HF_PREFIX):
        return ModelSource(model_name[len(HF_PREFIX) :])
    raise ValueError(
        f"unknown gapscope model {model_name!r}: use gapscope/embedded, "
        "gapscope/embedded/gemma3-270m or gapscope/hf/<checkpoint directory or hub name>"
    )


_engines: dict[tuple[ModelSource, ModelArgs], Engine] = {}
_engines_lock = threading.Lock()


def shared_engine(source: ModelSource, args: ModelArgs) -> Engine:
    """The process-wide engine for a checkpoint and arguments, loaded on first use."""
    with _engines_lock:
        engine = _engines.get((source, args))
        if engine is None:
            engine = Engine.from_pretrained(
                source.checkpoint,
                device=args.device,
                dtype=args.dtype,
                allow_download=args.allow_download,
                config=EngineConfig(
                    kv_reuse=args.kv_reuse,
                    batch_size=args.batch_size,
                    cache_entries=args.cache_entries,
                    cache_bytes=None if args.cache_mb is None else args.cache_mb << 20,
                ),
            )
            _engines[(source, args)] = engine
        return engine


class GapscopeModelAPI(ModelAPI):
    """Inspect provider over `gapscope.models.engine.Engine`."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        self.args = ModelArgs.parse(model_args)
        self.source = model_source(model_name)
        self.engine = shared_engine(self.source, self.args)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        if tools:
            raise ValueError("the gapscope provider does not support tool calling")
        request = GenerationRequest(
            messages=tuple({"role": m.role, "content": m.text} for m in input),
            params=SamplingParams(
                max_tokens=config.max_tokens or DEFAULT_MAX_TOKENS,
                temperature=config.temperature,
                top_p=config.top_p,
                top_k=config.top_k,
                seed=config.seed,
                stop=(*(config.stop_seqs or ()), *self.source.stop),
            ),
            hooks=current_hooks(),
            cancel=threading.Event(),
        )
        started = time.monotonic()
        try:
            # abandon_on_cancel: Ctrl-C must not wait for the decode loop; the event stops it
            result = await anyio.to_thread.run_sync(
                self.engine.submit, request, abandon_on_cancel=True
            )
        except anyio.get_cancelled_exc_class():
            assert request.cancel is not None
            request.cancel.set()
            raise
        return ModelOutput(
            model=self.model_name,
            choices=[
                ChatCompletionChoice(
                    message=ChatMessageAssistant(
                        content=result.text, model=self.model_name, source="generate"
                    ),
                    stop_reason=result.stop_reason,
                )
            ],
            usage=ModelUsage(
                input_tokens=result.prompt_tokens,
                output_tokens=len(result.tokens),
                total_tokens=result.prompt_tokens + len(result.tokens),
                input_tokens_cache_read=result.reused_tokens,
            ),
            time=time.monotonic() - started,
            metadata={"gapscope_engine": self.engine.info()},
        )

    def max_tokens(self) -> int | None:
        return DEFAULT_MAX_TOKENS

    def max_connections(self) -> int:
        """Twice the batch size, so the next batch fills while one runs."""
        return 2 * self.args.batch_size

    def connection_key(self) -> str:
        return f"gapscope/{self.model_name}"
