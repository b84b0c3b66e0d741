"""What a process keeps of the files in a directory, read from ``/proc``: the spilled KV
entries have no name, so their descriptors and mappings are all that holds their disk space
(an unnamed file shows as ``DIR/#INODE (deleted)``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

_MAPPING_HEADER = re.compile(r"[0-9a-f]+-[0-9a-f]+ ")


def opened_files_in(directory: Path, pid: int | str = "self") -> dict[int, int]:
    """Inode → size of the files in ``directory`` that process ``pid`` holds descriptors of."""
    opened = {}
    for descriptor in Path(f"/proc/{pid}/fd").iterdir():
        try:
            if os.readlink(descriptor).startswith(f"{directory}/"):
                status = descriptor.stat()
                opened[status.st_ino] = status.st_size
        except FileNotFoundError:  # closed since the listing (the listing's own, say)
            continue
    return opened


def mapped_files_in(directory: Path) -> dict[int, int]:
    """Inode → resident bytes of the files in ``directory`` that this process maps."""
    resident: dict[int, int] = {}
    inode = None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if _MAPPING_HEADER.match(line):
            named = len(fields) == 6 and fields[5].startswith(f"{directory}/")
            inode = int(fields[4]) if named else None
            if inode is not None:
                resident.setdefault(inode, 0)
        elif inode is not None and fields[0] == "Rss:":
            resident[inode] += int(fields[1]) * 1024
    return resident
