"""The engine's one compiled kernel (``block_kernel.cpp``), built on first use for this CPU.

Why compiled here and not shipped: the kernel is worth having only with the CPU's widest
vector instructions (``-march=native``), which no wheel can assume. It is one small C++ file
with no dependency beyond the C++ compiler (``g++``, or ``$CXX``); building takes 2-3
seconds and the library is kept in gapscope's cache, keyed by the source, the compiler, its
flags and the CPU's feature flags, so a changed CPU (a copied cache, another node) gets its
own build. Where no compiler works the kernel is unavailable and the engine keeps fp32
weights (``gapscope.models.block_linear``), saying why in every log's model info.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import threading
from functools import cache
from pathlib import Path

from gapscope.models.checkpoints import cache_root

SOURCE = Path(__file__).with_name("block_kernel.cpp")
FLAGS = ("-O3", "-march=native", "-ffp-contract=off", "-fopenmp", "-fPIC", "-shared", "-Wno-psabi")
"""``-ffp-contract=off``: a weight is a product then a sum, each rounded (the GGUF's
dequantization), never one fma; the kernel asks for fma by name where it may use one."""
_BUILD_LOCK = threading.Lock()


class KernelUnavailable(RuntimeError):
    """The kernel could not be built or loaded here; the message says why."""


def _cpu_flags() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _compiler() -> str:
    compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not compiler:
        raise KernelUnavailable("no C++ compiler found (g++ or $CXX) to build the kernel")
    return compiler


def _compiler_version(compiler: str) -> str:
    try:
        done = subprocess.run(
            [compiler, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise KernelUnavailable(f"cannot run the C++ compiler {compiler}: {error}") from None
    return done.stdout.splitlines()[0] if done.stdout else compiler


def library_path() -> Path:
    """Where the kernel built for this source, compiler and CPU lives (built if missing)."""
    compiler = _compiler()
    key = hashlib.sha256(
        "\n".join(
            (SOURCE.read_text(), _compiler_version(compiler), " ".join(FLAGS), _cpu_flags())
        ).encode()
    ).hexdigest()[:16]
    target = cache_root() / "kernels" / f"block_kernel-{key}.so"
    with _BUILD_LOCK:
        if not target.is_file():
            _build(compiler, target)
    return target


def _build(compiler: str, target: Path) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise KernelUnavailable(f"cannot write the kernel into {target.parent}: {error}") from None
    staging = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        done = subprocess.run(
            [compiler, *FLAGS, str(SOURCE), "-o", str(staging)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise KernelUnavailable(f"building the kernel failed: {error}") from None
    if done.returncode != 0:
        staging.unlink(missing_ok=True)
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise KernelUnavailable(f"building the kernel with {compiler} failed: {last}")
    staging.replace(target)  # atomic: a concurrent process sees no half-written library


@cache
def kernel() -> ctypes.CDLL:
    """The loaded kernel library, with its functions' argument types declared."""
    import torch  # torch first: its libgomp is the OpenMP runtime the kernel then shares

    del torch
    try:
        library = ctypes.CDLL(str(library_path()))
    except OSError as error:
        raise KernelUnavailable(f"loading the built kernel failed: {error}") from None
    # argument types, p a pointer and i an int64, in block_kernel.cpp's order:
    # gs_block_matmul(x, rows, inputs, codes, nibbles, scale, offset, block, out, outputs)
    # gs_dequantize(codes, nibbles, scale, offset, inputs, block, index, count, out)
    # gs_rotary(x, rows, heads, dim, row_stride, head_stride, cos, sin, out)
    # gs_rms_scale(x, outer, inner, dim, outer_stride, inner_stride, variance, eps, weight,
    #              plus_one, out), f a float
    # gs_decode_attention(q, rows, heads, kv_heads, dim, key, value, row_stride, head_stride,
    #                     seq_stride, starts, length, scale, out)
    # gs_norm_product(x, rows, dim, variance, eps, weight, plus_one, codes, nibbles, scale,
    #                 offset, block, out, outputs)
    # gs_product_add(x, rows, inputs, codes, nibbles, scale, offset, block, residual, out,
    #                outputs)
    # gs_norm_add(x, rows, dim, variance, eps, weight, plus_one, residual, out)
    # gs_attention_step(qkv, rows, heads, kv_heads, dim, q_variance, k_variance, q_eps, k_eps,
    #                   q_weight, k_weight, cos, sin, key, value, row_stride, head_stride,
    #                   seq_stride, column, starts, scale, out)
    types: dict[str, type[ctypes.c_void_p | ctypes.c_int64 | ctypes.c_float]] = {
        "p": ctypes.c_void_p,
        "i": ctypes.c_int64,
        "f": ctypes.c_float,
    }
    for function, signature in (
        (library.gs_block_matmul, "piipippipi"),
        (library.gs_dequantize, "pippiipip"),
        (library.gs_rotary, "piiiiippp"),
        (library.gs_rms_scale, "piiiiipfpip"),
        (library.gs_decode_attention, "piiiippiiipifp"),
        (library.gs_norm_product, "piipfpipippipi"),
        (library.gs_product_add, "piipippippi"),
        (library.gs_norm_add, "piipfpipp"),
        (library.gs_attention_step, "piiiippffppppppiiiipfp"),
    ):
        function.argtypes = [types[t] for t in signature]
        function.restype = None
    return library
