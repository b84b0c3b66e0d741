"""``python -m gapscope.verify``: the ``gapscope verify`` command without the rest of the CLI.

Importing the whole ``gapscope`` CLI loads Inspect and scipy (about 3 s); this entry point loads
only the verifier's own light modules, so grading one answer starts in a fraction of a second.
"""

from __future__ import annotations

import typer

from gapscope.app import verify_command


def main() -> None:
    """Run ``verify_command`` as a one-command program."""
    typer.run(verify_command)


if __name__ == "__main__":
    main()
