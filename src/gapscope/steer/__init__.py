"""Activation steering: the CLB direction (CAA), its controls, the dosage sweep, the transfer.

* ``vector``: the direction type and its file format (safetensors + card);
* ``apply``: ``steering(vector, alpha)``, alpha * v on the residual stream via model hooks;
* ``controls``: seeded orthogonal and random directions of the same norm;
* ``pairs`` / ``extract``: correct vs corrupted S2B traces -> mean span activations -> v;
* ``dosage`` / ``figure`` / ``sweep``: the grid, its statistics and its figure;
* ``task``: the ``steer``/``alpha`` options of the Inspect tasks; ``cli``: the commands.

Import the submodules directly: this package stays import-light (``vector`` and ``apply``
load torch; ``s2b`` and ``prove`` import only ``task``).
"""
