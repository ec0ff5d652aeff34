"""The `veriguard` console script.

`veriguard hook ...` runs once per tool call of a coding agent, so it goes to the hook before
anything else is imported (the CLI's parser and its commands are not needed to decide a call);
every other command goes to veriguard.cli, which dispatches `hook` the same way when it is run as
`python -m veriguard.cli`.
"""
from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:2] == ["hook"]:
        from veriguard.hook import run

        run(sys.argv[2:])
    from veriguard.cli import main as cli

    return cli()
