"""Where an attempt's cgroup is made, what is written into it, and how an OOM kill is read,
on a cgroup v2 tree laid out in a temporary folder (the real v1 path runs in
tests/ladder/test_code_sandbox.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gapscope.lean.cgroup import AttemptCgroup, Bounds, CgroupLayout

V1_MEMBERSHIP = "9:name=systemd:/\n8:pids:/\n4:memory:/jobs/a1\n1:cpu:/\n0::/\n"
V1_MOUNTS = (
    "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n"
    "cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n"
    "cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0\n"
    "cgroup2 /nonexistent/unified cgroup2 rw 0 0\n"
)


def test_v1_hierarchies_are_found_under_this_process_own_cgroups() -> None:
    layout = CgroupLayout.find(V1_MEMBERSHIP, V1_MOUNTS)
    assert layout is not None and layout.version == 1
    assert layout.parents == {
        "memory": Path("/sys/fs/cgroup/memory/jobs/a1"),
        "pids": Path("/sys/fs/cgroup/pids"),
        "cpu": Path("/sys/fs/cgroup/cpu"),
    }
    # without a pids hierarchy (and no usable v2) there is no cgroup per attempt
    assert CgroupLayout.find(V1_MEMBERSHIP, V1_MOUNTS.replace(",pids", "")) is None


def _v2_tree(tmp_path: Path) -> Path:
    own = tmp_path / "user.slice" / "me"
    own.mkdir(parents=True)
    (own / "cgroup.subtree_control").write_text("memory pids cpu\n")
    return own


def test_a_v2_attempt_cgroup_gets_its_bounds_and_reports_an_oom_kill(tmp_path: Path) -> None:
    own = _v2_tree(tmp_path)
    mounts = f"cgroup2 {tmp_path} cgroup2 rw 0 0\n"
    layout = CgroupLayout.find("0::/user.slice/me\n", mounts)
    assert layout == CgroupLayout(2, {"": own})
    cgroup = AttemptCgroup(layout, Bounds(memory_mb=1024, processes=16, cpus=0.5))
    (folder,) = cgroup.folders.values()
    assert folder.parent == own
    written = {f.name: f.read_text() for f in folder.iterdir()}
    assert written["memory.max"] == str(1024 << 20) and written["pids.max"] == "16"
    assert written["memory.swap.max"] == "0" and written["cpu.max"] == "50000 100000"
    assert cgroup.oom_kills() == 0
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\n")
    assert cgroup.oom_kills() == 1
    assert cgroup.describe() == "per attempt (cgroup v2): memory 1024 MB, 16 processes, 0.5 CPU"


def test_a_v2_tree_whose_controllers_cannot_be_enabled_is_not_used(tmp_path: Path) -> None:
    own = _v2_tree(tmp_path)
    control = own / "cgroup.subtree_control"
    control.unlink()
    control.mkdir()  # neither readable nor writable as a file: as a cgroup not delegated to us
    assert CgroupLayout.find("0::/user.slice/me\n", f"cgroup2 {tmp_path} cgroup2 rw 0 0\n") is None


def test_the_command_joins_every_cgroup_before_it_execs(tmp_path: Path) -> None:
    own = _v2_tree(tmp_path)
    cgroup = AttemptCgroup(CgroupLayout(2, {"": own}), Bounds(64, 4))
    done = subprocess.run(
        cgroup.wrap(["/bin/sh", "-c", "echo $$"]), capture_output=True, text=True, check=True
    )
    (folder,) = cgroup.folders.values()
    # the shell that execs the command is the process that joined: the same PID
    assert (folder / "cgroup.procs").read_text().strip() == done.stdout.strip()
