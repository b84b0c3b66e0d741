"""A known effect: the sweep sees a direction that moves the listener's decision, and does not
see its controls - with the decision made at a generated token, not at the prompt.

The listener is a tiny Llama whose unembedding knows three words: the ``same`` row is +u, the
``different`` row -u and the ``so`` row +w (w orthogonal to u; every other row is 0). The
embedding of ``assistant``, the last prompt token, carries W = 4M along w and nothing along
u, so the first generated token is ``so`` whatever the steering; the embedding of ``so`` carries
+M along u, so the second token - the decision - is the sign of u . h at the position of
``so``, a generated position; ``same`` and ``different`` carry W along w, so the third token is
``so`` again. Replies read ``so same so``: the decision is the last same/different word. A
steering hook that acted on the prompt alone would leave every decision "same".

The planted direction is the unembedding difference (``different`` - ``same``) rescaled to norm
M, added at the last layer at every position: alpha = +2 moves u . h at ``so`` to about -M
(every answer "different"), alpha = -2 to +3M; at ``assistant`` it moves u . h by 2M < W, so
``so`` still comes first. With three query games per episode (one "same", two "different"),
ZSCT goes 33 -> 33 -> 67 over alpha -2, 0, +2. A control of the same norm moves u . h by
2M cos(control, u): the orthogonal one by nothing, the random one by about 2M / 8 at hidden
size 64, too little to flip an answer.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import torch
from inspect_ai.log import read_eval_log
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

from gapscope.app.kit import run_tasks
from gapscope.app.sweep import SweepResult, SweepSpec, run_sweep
from gapscope.models.direction import DirectionCard, ModelIdentity, SteeringVector
from gapscope.models.engine import Engine
from gapscope.steer.dosage import Trend
from tests.models.tiny import CHAT_TEMPLATE, EOS_ID, SPECIAL, WORDS

HIDDEN, LAYERS, MARGIN = 64, 2, 4.0
FILLER = 4 * MARGIN
"""W: how far ``so`` leads at the positions that are not the decision."""
REPLY_TOKENS = 3
QUERIES = {"query_size": 3, "k_shot": 1}
"""floor(3 / 2) = 1 "same" query game and 2 "different" ones per episode."""


def _listener(directory: Path) -> Path:
    vocab = {token: i for i, token in enumerate([*SPECIAL, *WORDS, "same", "different", "so"])}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=backend, pad_token="<pad>", bos_token="<s>", eos_token="<|im_end|>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=HIDDEN,
        intermediate_size=2 * HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=1,
        eos_token_id=EOS_ID,
        pad_token_id=0,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    u = torch.nn.functional.normalize(torch.randn(HIDDEN), dim=0)
    w = torch.randn(HIDDEN)
    w = torch.nn.functional.normalize(w - (w @ u) * u, dim=0)
    with torch.no_grad():
        model.lm_head.weight.zero_()
        model.lm_head.weight[vocab["same"]] = 50.0 * u
        model.lm_head.weight[vocab["different"]] = -50.0 * u
        model.lm_head.weight[vocab["so"]] = 50.0 * w
        embed = model.model.embed_tokens.weight
        embed[vocab["assistant"]] += FILLER * w
        embed[vocab["so"]] += MARGIN * u
        for word in ("same", "different"):
            embed[vocab[word]] += FILLER * w
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def listener(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _listener(tmp_path_factory.mktemp("listener"))


def _decision_direction(checkpoint: Path, out: Path) -> Path:
    """The unembedding difference ``different`` - ``same`` at the last layer, norm MARGIN."""
    engine = Engine.from_pretrained(checkpoint, device="cpu")
    vocab = engine.tokenizer.get_vocab()
    head = engine.model.lm_head.weight.detach()
    difference = head[vocab["different"]] - head[vocab["same"]]
    layer = LAYERS - 1
    direction = {layer: (MARGIN * difference / difference.norm()).float()}
    card = DirectionCard(
        model=ModelIdentity.of(engine.model, LAYERS, "listener"),
        layers=(layer,),
        norms={layer: MARGIN},
    )
    return SteeringVector(direction, card).save(out)


def _sees_an_effect(result: Trend) -> bool:
    """What a reader concludes from a trend: monotone, and a slope CI away from 0."""
    return (
        result.rho is not None
        and result.rho > 0.5
        and result.slope_low is not None
        and result.slope_low > 0
    )


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("known-effect")


def _planted_grid(listener: Path, tmp: Path) -> SweepSpec:
    """The grid over the planted direction (both controls by default), written under
    ``tmp``."""
    return SweepSpec(
        model=f"gapscope/hf/{listener}",
        out=tmp / "sweep",
        alphas=(-2.0, 0.0, 2.0),
        steer=_decision_direction(listener, tmp / "planted"),
        preset="demo",
        seeds=4,
        max_tokens=REPLY_TOKENS,
        overrides=QUERIES,
    )


@pytest.fixture(scope="module")
def sweep(listener: Path, sweep_dir: Path) -> SweepResult:
    spec = _planted_grid(listener, sweep_dir)
    return run_sweep(spec, lambda tasks, model: run_tasks(tasks, model, sweep_dir / "logs"))


def test_the_sweep_sees_a_direction_that_moves_the_decision(sweep: SweepResult) -> None:
    means = {(p.direction, p.alpha): p.mean for p in sweep.points}
    assert means[("baseline", 0.0)] == pytest.approx(100 / 3)  # "same" everywhere
    assert means[("clb", -2.0)] == pytest.approx(100 / 3)
    assert means[("clb", 2.0)] == pytest.approx(200 / 3)  # "different" everywhere
    trends = {t.direction: t for t in sweep.trends}
    clb = trends["clb"]
    assert _sees_an_effect(clb)
    assert clb.slope == pytest.approx(100 / 3 / 4)  # +33 points over 4 units of alpha
    assert clb.dropped == 0 and clb.resamples == 2000  # every unit saw every alpha
    with Path(sweep.files["csv"]).open(encoding="utf-8") as fh:
        rows = {(r["direction"], float(r["alpha"])): r for r in csv.DictReader(fh)}
    assert float(rows[("clb", 2.0)]["relative_drop"]) == pytest.approx(-1.0)  # doubled
    assert {r["overlaps_extraction"] for r in rows.values()} == {"False"}  # no card seeds


@pytest.mark.parametrize("kind", ["orthogonal", "random"])
def test_a_control_of_the_same_norm_stays_flat(sweep: SweepResult, kind: str) -> None:
    trends = {t.direction: t for t in sweep.trends}
    control = trends[kind]
    assert not _sees_an_effect(control)  # the same reading that finds the planted direction
    assert control.slope_low is not None and control.slope_high is not None
    assert control.slope_low <= 0.0 <= control.slope_high
    for point in sweep.points:
        if point.direction == kind:
            assert point.mean == pytest.approx(100 / 3)


def test_the_controls_are_two_directions_of_the_planted_norm(sweep: SweepResult) -> None:
    directions = Path(sweep.files["json"]).parent / "directions"
    planted, orthogonal, random = (
        SteeringVector.load(directions / kind).directions[LAYERS - 1].double()
        for kind in ("clb", "orthogonal", "random")
    )
    for vector in (orthogonal, random):
        assert float(vector.norm()) == pytest.approx(MARGIN, rel=1e-5)
    cos = float(orthogonal @ random / (orthogonal.norm() * random.norm()))
    assert abs(cos) < 0.5  # two controls, not one drawn twice
    assert abs(float(orthogonal @ planted)) < 1e-5


def test_the_decision_is_a_generated_token_after_the_first(
    sweep: SweepResult, sweep_dir: Path
) -> None:
    """Every reply is ``so <decision> so``: the first generated token never moves, the second
    is steered, so the effect above comes from steering at generated positions."""
    replies: dict[tuple[str, float], set[str]] = {}
    logs = sorted((sweep_dir / "logs").rglob("*.eval"))
    assert logs
    for path in logs:
        log = read_eval_log(str(path))
        args = log.eval.task_args or {}
        direction = Path(str(args.get("steer") or "baseline")).name
        condition = (direction, float(args.get("alpha") or 0.0))
        for sample in log.samples or []:
            for message in sample.messages:
                if message.role != "assistant" or "answer:" in message.text.lower():
                    continue  # an exemplar is the verbalizer's, not the model's
                words = message.text.split()
                assert len(words) == REPLY_TOKENS and words[0] == "so", (condition, words)
                replies.setdefault(condition, set()).add(words[1])
    assert replies[("baseline", 0.0)] == {"same"}
    assert replies[("clb", 2.0)] == {"different"}  # the second token moved
    assert replies[("clb", -2.0)] == {"same"}


def test_a_grid_run_inside_a_study_reads_the_same_curve(
    listener: Path, sweep: SweepResult, tmp_path: Path
) -> None:
    """``make demo`` runs the grid's cells among a study's tasks (one eval_set, shared
    batches); each cell's log is found by its direction and alpha among logs that include an
    unsteered run with the baseline's very arguments but no sweep, and the curve is the one
    ``run_sweep`` reads."""
    from gapscope.analysis import load_all
    from gapscope.app.study import Study, StudyProgress, StudyTask, plan_of, run_study
    from gapscope.app.sweep import cell_logs, finish_sweep, prepare_directions, sweep_cells
    from gapscope.s2b import s2b_lm

    spec = _planted_grid(listener, tmp_path)
    directions = prepare_directions(spec)
    cells = sweep_cells(spec, directions)
    profile = s2b_lm(preset="demo", seeds=4, max_tokens=REPLY_TOKENS, **QUERIES)
    tasks = [profile, *(cell.task for cell in reversed(cells))]
    study = Study([StudyTask(plan_of(t, spec.model, "s2b", "x"), t, spec.model) for t in tasks])
    ending = run_study(study, tmp_path / "logs", StudyProgress(study, lambda line: None))
    assert ending.complete
    finished = load_all([Path(t.log) for t in ending.finished]).logs
    assert len(finished) == len(cells) + 1
    logs = cell_logs(spec, cells, finished)
    assert [log.info and log.info.task_args.get("alpha") for log in logs] == [
        c.alpha for c in cells
    ]
    result = finish_sweep(spec, directions, cells, logs)
    assert [(p.direction, p.alpha, p.mean) for p in result.points] == [
        (p.direction, p.alpha, p.mean) for p in sweep.points
    ]
    planted = next(i for i, c in enumerate(cells) if (c.direction, c.alpha) == ("clb", 2.0))
    unplanted = [log for log in finished if log.path != logs[planted].path]
    with pytest.raises(RuntimeError, match="no finished run of clb alpha=2"):
        cell_logs(spec, cells, unplanted)
    without_baseline = [log for log in finished if log.path != logs[0].path]
    with pytest.raises(RuntimeError, match="no finished run of baseline alpha=0"):
        cell_logs(spec, cells, without_baseline)  # the profile's own run is not taken for it
