"""Activation steering: the CLB direction (CAA) and its controls, the dosage statistics.

* ``pairs`` / ``extract``: correct vs corrupted S2B traces -> mean span activations -> v;
* ``controls``: seeded orthogonal and random directions of the same norm;
* ``dosage``: the grid's points, their bootstrap CIs and each direction's trend.

What steering *applies* lives on the models floor, so the S2B-LM and prove tasks can take a
direction without importing this package: :mod:`gapscope.models.direction` (the direction type
and its file format, safetensors + card), :mod:`gapscope.models.steering` (``steering(vector,
alpha)``: alpha * v on the residual stream through scoped forward hooks) and
:mod:`gapscope.models.task_steering` (the tasks' ``steer``/``alpha`` options). The sweep that
runs the grid and the commands are in :mod:`gapscope.app.sweep` and :mod:`gapscope.app.steer`.
"""
