"""Unbiased pass@k (Chen et al., 2021, "Evaluating Large Language Models Trained on Code").

With ``n`` samples of which ``c`` are correct, pass@k = 1 - C(n-c, k) / C(n, k): the chance
that a uniformly chosen k-subset of the n samples holds at least one correct one. Drawing
n >= k samples and using this estimator has far less variance than drawing exactly k.
The binomial ratio is evaluated as a product, prod_{i=n-c+1}^{n} (1 - k/i), which never
forms the huge binomials (C(256, 32) overflows a float).
"""

from __future__ import annotations

from collections.abc import Iterable


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k of one problem with ``c`` correct among ``n`` samples.

    Raises ValueError for k > n: fewer samples than k cannot estimate pass@k without bias.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1 sample, got {n}")
    if not 0 <= c <= n:
        raise ValueError(f"c (correct samples) must be in [0, n={n}], got {c}")
    if not 1 <= k <= n:
        raise ValueError(
            f"pass@{k} needs k in [1, n]; with n={n} samples per problem, k > n cannot be "
            "estimated without bias: draw at least k samples (raise n) or lower k"
        )
    if n - c < k:
        return 1.0
    miss = 1.0
    for i in range(n - c + 1, n + 1):
        miss *= 1.0 - k / i
    return 1.0 - miss


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """pass@k of a benchmark: the mean over problems of each problem's pass@k.

    ``counts`` holds one ``(n, c)`` per problem; problems may have different n (e.g. after a
    failed check was excluded), each must have n >= k.
    """
    values = [pass_at_k(n, c, k) for n, c in counts]
    if not values:
        raise ValueError("pass@k over no problems is undefined")
    return sum(values) / len(values)
