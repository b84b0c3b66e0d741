"""How gapscope reaches a model.

* `providers` / `inspect_api`: the Inspect provider `gapscope/embedded[/<name>]`,
  `gapscope/hf/<checkpoint>`; `scripted`: the provider `scripted/<name>`, replies from a
  Python function (tests and benchmarks; registered only where imported).
* `engine`: plain torch/transformers generation with KV-cache reuse across turns (`kvcache`),
  dynamic batching (`batching`) and per-call forward hooks (`hooks`); no Inspect imports.
  `weight_format`: its CPU weights (`gguf`: a GGUF's own codes evaluated exactly, with
  `gguf_codes`, `block_linear` and the compiled kernel of `native_kernel`; fp32; or int8
  with int8 activations). `lean_layers`: Llama and Gemma 3 decoder layers without their
  sub-modules' call machinery (the same bits, fewer Python calls), their rotary embeddings
  and norms' elementwise tails in the kernel (`layer_ops`, the same bits again).
* `checkpoints`: offline checkpoint loading; `embedded`: the small shipped models;
  `model_cache`: the verified on-disk cache of their converted copies.
* `window`: a model's context window where it is known before a run (the plan's check).
* `endpoint`, `http_guard`, `replies`: a served model reached with bounds (capped, checked
  replies; a failure said in one line; the preflight probe).
* `direction`, `steering`, `task_steering`: steering vectors, their file format, adding them
  to the residual stream, and the `steer`/`alpha` options of the tasks.
* `solvers`: solvers the diagnostics' tasks share.

Other packages import the names below from this package (its face, `gapscope._face`), which
loads each module only when one of its names is first used: the package stays import-light,
because Inspect imports `providers` on every model lookup and must not pay for torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gapscope._face import lazy_face

if TYPE_CHECKING:
    from gapscope.models import providers
    from gapscope.models.direction import DirectionCard, ModelIdentity, SteeringVector
    from gapscope.models.embedded import GEMMA3_270M
    from gapscope.models.endpoint import (
        PREFLIGHT_REQUESTS,
        EndpointError,
        Preflight,
        Probe,
        describe_missing_settings,
        guarded_model_args,
        is_served,
        probe,
    )
    from gapscope.models.engine import Engine
    from gapscope.models.replies import excerpt
    from gapscope.models.solvers import system_first, within_run_cap
    from gapscope.models.task_steering import (
        SteeringRecord,
        check_options,
        engine_for,
        load_direction,
        steered,
        steered_generate,
    )
    from gapscope.models.window import Window, context_window

__all__ = [
    "GEMMA3_270M",
    "PREFLIGHT_REQUESTS",
    "DirectionCard",
    "EndpointError",
    "Engine",
    "ModelIdentity",
    "Preflight",
    "Probe",
    "SteeringRecord",
    "SteeringVector",
    "Window",
    "check_options",
    "context_window",
    "describe_missing_settings",
    "engine_for",
    "excerpt",
    "guarded_model_args",
    "is_served",
    "load_direction",
    "probe",
    "providers",
    "steered",
    "steered_generate",
    "system_first",
    "within_run_cap",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "providers": ".providers",
        "DirectionCard": ".direction",
        "EndpointError": ".endpoint",
        "Engine": ".engine",
        "GEMMA3_270M": ".embedded",
        "ModelIdentity": ".direction",
        "PREFLIGHT_REQUESTS": ".endpoint",
        "Preflight": ".endpoint",
        "Probe": ".endpoint",
        "SteeringRecord": ".task_steering",
        "SteeringVector": ".direction",
        "Window": ".window",
        "check_options": ".task_steering",
        "context_window": ".window",
        "describe_missing_settings": ".endpoint",
        "engine_for": ".task_steering",
        "excerpt": ".replies",
        "guarded_model_args": ".endpoint",
        "is_served": ".endpoint",
        "load_direction": ".task_steering",
        "probe": ".endpoint",
        "steered": ".task_steering",
        "steered_generate": ".task_steering",
        "system_first": ".solvers",
        "within_run_cap": ".solvers",
    },
)
