"""``make bench``: every benchmark, each reporting ratios against a same-run baseline."""

from __future__ import annotations

from benchmarks import bench_models, bench_s2b, bench_verifier


def main() -> None:
    for name, bench in (
        ("S2B rule listener throughput", bench_s2b.main),
        ("verifier cascade vs math-verify", bench_verifier.main),
        ("embedded model: S2B episode prefill and load time", bench_models.main),
    ):
        print(f"\n== {name} ==")
        bench()


if __name__ == "__main__":
    main()
