"""How gapscope reaches a model.

* `providers` / `inspect_api`: the Inspect provider `gapscope/embedded[/<name>]`,
  `gapscope/hf/<checkpoint>`; `scripted`: the provider `scripted/<name>`, replies from a
  Python function (tests and benchmarks; registered only where imported).
* `engine`: plain torch/transformers generation with KV-cache reuse across turns (`kvcache`),
  dynamic batching (`batching`) and per-call forward hooks (`hooks`); no Inspect imports.
  `weight_format`: its CPU weights (fp32, or int8 with int8 activations).
* `checkpoints`: offline checkpoint loading; `embedded`: the small shipped models;
  `model_cache`: the verified on-disk cache of their converted copies.
* `endpoint`, `http_guard`, `replies`: a served model reached with bounds (capped, checked
  replies; a failure said in one line; the preflight probe).
* `direction`, `steering`, `task_steering`: steering vectors, their file format, adding them
  to the residual stream, and the `steer`/`alpha` options of the tasks.
* `solvers`: solvers the diagnostics' tasks share.

Import the submodules directly; this package stays import-light because Inspect
imports `providers` on every model lookup.
"""
