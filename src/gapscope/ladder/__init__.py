"""OracleLadder: milestone families, oracle probes, a symbolic verifier and the gap taxonomy.

Each parent problem carries a fixed roadmap of milestones written by a teacher. The evaluated
model is probed with increasing help (C1 direct, C2 roadmap, C3 roadmap + gold answers) and on
each milestone alone (Stage 0); crossing the two sorts every failure into one of five gaps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gapscope._face import lazy_face

if TYPE_CHECKING:
    from gapscope.ladder import contract
    from gapscope.ladder.agreement import Agreement, run_agreement
    from gapscope.ladder.anchors import (
        AnchorAgreement,
        AnchorRule,
        TieRule,
        anchor_agreement,
        screen,
    )
    from gapscope.ladder.code import CODE_CONDITIONS, CodeCondition
    from gapscope.ladder.code_task import ladder_code
    from gapscope.ladder.compile import Stage, funnel_counts
    from gapscope.ladder.compile_task import ladder_compile
    from gapscope.ladder.containment import (
        Containment,
        ContainmentFamily,
        Match,
        Rate,
        measure_containment,
    )
    from gapscope.ladder.contract import (
        CODE_TASK,
        COMPILE_TASK,
        REVIEW_TASK,
        TASK,
        CodeProbeMetadata,
        CodeRunMetadata,
        CompileStore,
        ProbeMetadata,
        ReviewCaseMetadata,
        ReviewRunMetadata,
        ReviewVerdictMetadata,
        RunMetadata,
    )
    from gapscope.ladder.families import FamiliesVersion, Family, load_families
    from gapscope.ladder.probes import CONTROLS, LADDER, PAPER_MAX_TOKENS, Condition, family_of
    from gapscope.ladder.review import (
        GRADING,
        PRIORITY,
        Attempt,
        ModelReview,
        ModelTotals,
        ReviewCase,
        ReviewLabel,
        ReviewSet,
        model_review,
        parse_removed,
    )
    from gapscope.ladder.review_task import ladder_review
    from gapscope.ladder.sandbox import bwrap_status
    from gapscope.ladder.task import oracle_ladder
    from gapscope.ladder.taxonomy import (
        GAP_ORDER,
        OUTCOME_ORDER,
        FamilyCounts,
        Gap,
        LadderOutcome,
        MilestoneTest,
        ModelProfile,
        gap,
        outcome,
        profile,
        tau_sensitivity,
    )

__all__ = [
    "CODE_CONDITIONS",
    "CODE_TASK",
    "COMPILE_TASK",
    "CONTROLS",
    "GAP_ORDER",
    "GRADING",
    "LADDER",
    "OUTCOME_ORDER",
    "PAPER_MAX_TOKENS",
    "PRIORITY",
    "REVIEW_TASK",
    "TASK",
    "Agreement",
    "AnchorAgreement",
    "AnchorRule",
    "Attempt",
    "CodeCondition",
    "CodeProbeMetadata",
    "CodeRunMetadata",
    "CompileStore",
    "Condition",
    "Containment",
    "ContainmentFamily",
    "FamiliesVersion",
    "Family",
    "FamilyCounts",
    "Gap",
    "LadderOutcome",
    "Match",
    "MilestoneTest",
    "ModelProfile",
    "ModelReview",
    "ModelTotals",
    "ProbeMetadata",
    "Rate",
    "ReviewCase",
    "ReviewCaseMetadata",
    "ReviewLabel",
    "ReviewRunMetadata",
    "ReviewSet",
    "ReviewVerdictMetadata",
    "RunMetadata",
    "Stage",
    "TieRule",
    "anchor_agreement",
    "bwrap_status",
    "contract",
    "family_of",
    "funnel_counts",
    "gap",
    "ladder_code",
    "ladder_compile",
    "ladder_review",
    "load_families",
    "measure_containment",
    "model_review",
    "oracle_ladder",
    "outcome",
    "parse_removed",
    "profile",
    "run_agreement",
    "screen",
    "tau_sensitivity",
]

__getattr__, __dir__ = lazy_face(
    __name__,
    {
        "contract": ".contract",
        "Agreement": ".agreement",
        "AnchorAgreement": ".anchors",
        "AnchorRule": ".anchors",
        "Attempt": ".review",
        "CODE_CONDITIONS": ".code",
        "CODE_TASK": ".contract",
        "COMPILE_TASK": ".contract",
        "CONTROLS": ".probes",
        "CodeCondition": ".code",
        "CodeProbeMetadata": ".contract",
        "CodeRunMetadata": ".contract",
        "CompileStore": ".contract",
        "Condition": ".probes",
        "Containment": ".containment",
        "ContainmentFamily": ".containment",
        "FamiliesVersion": ".families",
        "Family": ".families",
        "FamilyCounts": ".taxonomy",
        "GAP_ORDER": ".taxonomy",
        "GRADING": ".review",
        "Gap": ".taxonomy",
        "LADDER": ".probes",
        "LadderOutcome": ".taxonomy",
        "Match": ".containment",
        "MilestoneTest": ".taxonomy",
        "ModelProfile": ".taxonomy",
        "ModelReview": ".review",
        "ModelTotals": ".review",
        "OUTCOME_ORDER": ".taxonomy",
        "PAPER_MAX_TOKENS": ".probes",
        "PRIORITY": ".review",
        "ProbeMetadata": ".contract",
        "REVIEW_TASK": ".contract",
        "Rate": ".containment",
        "ReviewCase": ".review",
        "ReviewCaseMetadata": ".contract",
        "ReviewLabel": ".review",
        "ReviewRunMetadata": ".contract",
        "ReviewSet": ".review",
        "ReviewVerdictMetadata": ".contract",
        "RunMetadata": ".contract",
        "Stage": ".compile",
        "TASK": ".contract",
        "TieRule": ".anchors",
        "anchor_agreement": ".anchors",
        "bwrap_status": ".sandbox",
        "family_of": ".probes",
        "funnel_counts": ".compile",
        "gap": ".taxonomy",
        "ladder_code": ".code_task",
        "ladder_compile": ".compile_task",
        "ladder_review": ".review_task",
        "load_families": ".families",
        "measure_containment": ".containment",
        "model_review": ".review",
        "oracle_ladder": ".task",
        "outcome": ".taxonomy",
        "parse_removed": ".review",
        "profile": ".taxonomy",
        "run_agreement": ".agreement",
        "screen": ".anchors",
        "tau_sensitivity": ".taxonomy",
    },
)
