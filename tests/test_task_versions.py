"""Every task gapscope ships says its version (``Task(version=...)``), and the version moves
when the task's prompts or scorer do.

``tests/data/task_versions.json`` records, per task, the version and the fingerprint of what
that version covers (each task module's ``BEHAVIOUR``, :mod:`gapscope.task_version`). A
fingerprint that moved under the same version fails here with the version to bump to, so a
log's ``eval.task_version`` always names the revision of the prompts and scorer behind it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from inspect_ai.util import registry_info

from gapscope.task_version import Behaviour, code_tree

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
EXAMPLE_SRC = ROOT / "examples" / "gapscope-parity" / "src"
TABLE = Path(__file__).parent / "data" / "task_versions.json"
TASK_DECORATOR = re.compile(r"^@task\b", re.MULTILINE)


def _task_modules() -> Iterator[tuple[str, ModuleType]]:
    """Every module of gapscope and of the shipped plugin example that defines an ``@task``,
    with the bare name of its task."""
    if str(EXAMPLE_SRC) not in sys.path:
        sys.path.insert(0, str(EXAMPLE_SRC))
    for root in (SRC, EXAMPLE_SRC):
        for file in sorted(root.rglob("*.py")):
            if not TASK_DECORATOR.search(file.read_text(encoding="utf-8")):
                continue
            name = ".".join(file.relative_to(root).with_suffix("").parts)
            module = importlib.import_module(name)
            for value in vars(module).values():
                try:
                    info = registry_info(value)
                except ValueError:
                    continue
                if info.type == "task" and value.__module__ == name:
                    yield info.name.split("/")[-1], module


TASKS = dict(_task_modules())


def _table() -> dict[str, dict[str, object]]:
    return dict(json.loads(TABLE.read_text(encoding="utf-8")))


def test_every_task_is_found_and_in_the_table() -> None:
    assert {"s2b_lm", "oracle_ladder", "onng", "prove", "t2", "parity"} <= set(TASKS)
    assert sorted(TASKS) == sorted(_table()), "add or drop the task's entry in " + str(TABLE)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_task_built_carries_its_version(name: str) -> None:
    """Each ``Task(...)`` its module builds passes ``version=BEHAVIOUR.version``."""
    module = TASKS[name]
    assert isinstance(getattr(module, "BEHAVIOUR", None), Behaviour), f"{name}: no BEHAVIOUR"
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Task"
    ]
    assert calls, f"{name}: builds no Task"
    for call in calls:
        versions = [k.value for k in call.keywords if k.arg == "version"]
        assert [ast.unparse(v) for v in versions] == ["BEHAVIOUR.version"], (
            f"{module.__name__}:{call.lineno}: Task(...) without version=BEHAVIOUR.version"
        )


@pytest.mark.parametrize("name", sorted(TASKS))
def test_a_changed_prompt_or_scorer_moves_the_version(name: str) -> None:
    behaviour: Behaviour = TASKS[name].BEHAVIOUR
    recorded = _table()[name]
    now = {"version": behaviour.version, "fingerprint": behaviour.fingerprint()}
    if now["fingerprint"] != recorded["fingerprint"] and now["version"] == recorded["version"]:
        bumped = {"version": behaviour.version + 1, "fingerprint": now["fingerprint"]}
        pytest.fail(
            f"task {name}'s prompt/scorer changed: bump its version to {behaviour.version + 1}"
            f" (BEHAVIOUR in {TASKS[name].__name__}) and update the fingerprint: set its entry"
            f' in {TABLE.relative_to(ROOT)} to "{name}": {json.dumps(bumped)}'
        )
    assert now == recorded, (
        f'set the entry in {TABLE.relative_to(ROOT)} to "{name}": {json.dumps(now)}'
    )


def _module(tmp_path: Path, source: str) -> ModuleType:
    path = tmp_path / f"probe_{abs(hash(source))}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCORER = '''
def score(reply: str) -> bool:
    """Right when the reply says even."""
    return reply.strip() == "even"  # exact, no substring
'''


def test_the_fingerprint_ignores_docstrings_comments_and_layout(tmp_path: Path) -> None:
    base = code_tree(_module(tmp_path, SCORER).score)
    reworded = SCORER.replace("Right when", "Correct iff").replace("# exact", "# whole word")
    reflowed = SCORER.replace(
        'return reply.strip() == "even"',
        'return (\n        reply.strip()\n        == "even"\n    )',
    )
    assert code_tree(_module(tmp_path, reworded).score) == base
    assert code_tree(_module(tmp_path, reflowed).score) == base
    changed = SCORER.replace('== "even"', '.startswith("even")')
    assert code_tree(_module(tmp_path, changed).score) != base


def test_the_fingerprint_moves_with_a_prompt_or_the_version_covered(tmp_path: Path) -> None:
    prompt = tmp_path / "system.txt"
    prompt.write_text("Answer with one word.\n", encoding="utf-8")
    scorer = _module(tmp_path, SCORER).score
    before = Behaviour(version=1, prompts=(prompt,), code=(scorer,)).fingerprint()
    prompt.write_text("Answer with one word, even or odd.\n", encoding="utf-8")
    assert Behaviour(version=1, prompts=(prompt,), code=(scorer,)).fingerprint() != before
    assert Behaviour(version=1, texts=("Is {n} even?",)).fingerprint() != (
        Behaviour(version=1, texts=("Is {n} odd?",)).fingerprint()
    )
