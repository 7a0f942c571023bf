"""Several commands of the project in one process, one after the other, as a notebook's cells
run them: the devices a process starts with are its own until it ends.

Usage: python -m tests.commands [--keep-going] 'COMMAND FLAGS...' 'COMMAND FLAGS...' ... (each
argument one command line, in shell words: a command of the project, or `tests.MODULE ARGS...`,
a script of the tests run as `python -m` runs it). Each command's output follows a line
`$ COMMAND FLAGS...` and ends in a line `exit: CODE` (`ran` reads them back); the first
command that fails ends the run with its exit code. With --keep-going every command runs, as
a notebook's next cell does after one that failed, and the run ends with the first failure's
code. test_replicas.py runs all it checks on one layout of devices so, in one process
for each; test_preflight.py runs doctor and then train in one process.
"""

import re
import runpy
import shlex
import sys

from {{ cookiecutter.package }}.__main__ import main


def run(words: list[str]) -> int:
    try:
        if not words[0].startswith("tests."):
            return main(words)
        sys.argv = words
        runpy.run_module(words[0], run_name="__main__", alter_sys=True)
    except SystemExit as stopped:  # as the interpreter ends on it (argparse on --help or a
        code = stopped.code  # bad flag, a script's exit): None is success, and text is
        if code is None or isinstance(code, int):  # printed and ends the run as a failure
            return code or 0
        print(code, file=sys.stderr)
        return 1
    return 0


def ran(output: str) -> list[tuple[int, str]]:
    """A run's output, split at its `$ COMMAND` lines: each command's exit code and output
    (its own lines, the command line first), in order."""
    parts = re.split(r"^\$ ", output, flags=re.MULTILINE)[1:]
    ended = [part.rstrip("\n").rpartition("\nexit: ") for part in parts]
    return [(int(code), said) for said, _, code in ended]


if __name__ == "__main__":
    # Line by line, so that what a command writes to stdout and to stderr, sent to one file,
    # stays in the order written: its lines fall between its `$` line and the next.
    sys.stdout.reconfigure(line_buffering=True)
    keep_going = sys.argv[1:2] == ["--keep-going"]
    failed = 0
    for line in sys.argv[1 + keep_going :]:
        print(f"$ {line}")
        code = run(shlex.split(line))
        print(f"exit: {code}")
        failed = failed or code
        if code and not keep_going:
            break
    sys.exit(failed)
