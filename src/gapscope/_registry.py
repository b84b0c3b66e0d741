"""Inspect entry point: importing this module registers gapscope's tasks and model providers.

Inspect loads it through ``[project.entry-points.inspect_ai]`` so that
``inspect eval gapscope/s2b_lm`` and ``--model gapscope/embedded`` work without imports.
"""

from gapscope.ladder.code_task import ladder_code  # noqa: F401
from gapscope.ladder.compile_task import ladder_compile  # noqa: F401
from gapscope.ladder.review_task import ladder_review  # noqa: F401
from gapscope.ladder.task import oracle_ladder  # noqa: F401
from gapscope.models import providers  # noqa: F401
from gapscope.onng.task import onng  # noqa: F401
from gapscope.prove.task import prove  # noqa: F401
from gapscope.s2b.task import s2b_lm  # noqa: F401
from gapscope.t2.task import t2  # noqa: F401
