"""How an opt-out environment variable is read: one rule for all of them.

``GAPSCOPE_LEAN_ALLOW_UNSANDBOXED`` and ``GAPSCOPE_LEAN_ALLOW_UNTESTED`` each lift a safety
gate; they used to be read differently (one accepted ``true``, the other only ``1``), so the
same setting opened one gate and silently not the other.
"""

from __future__ import annotations

import os

TRUE_VALUES = frozenset({"1", "true", "yes", "on"})


def env_flag(name: str) -> bool:
    """Whether environment variable ``name`` is set to 1/true/yes/on (any case, spaces)."""
    return os.environ.get(name, "").strip().lower() in TRUE_VALUES
