"""How gapscope reaches a model.

* `engine`: plain torch/transformers generation with KV-cache reuse across turns,
  dynamic batching and per-call forward hooks (no Inspect imports).
* `hooks`: the `forward_hooks` context manager used by steering.
* `checkpoints`: offline checkpoint loading and the embedded SmolLM2 cache.
* `inspect_api` / `providers`: the Inspect provider `gapscope/embedded`,
  `gapscope/hf/<checkpoint>`.
* `scripted`: the provider `scripted/<name>`, replies from a Python function (tests and
  benchmarks; registered only where imported).

Import the submodules directly; this package stays import-light because Inspect
imports `providers` on every model lookup.
"""
