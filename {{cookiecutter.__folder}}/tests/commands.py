"""Several commands of the project in one process, one after the other, as a notebook's cells
run them: the devices a process starts with are its own until it ends.

Usage: python -m tests.commands 'COMMAND FLAGS...' 'COMMAND FLAGS...' ... (each argument one
command line, in shell words: a command of the project, or `tests.MODULE ARGS...`, a script of
the tests run as `python -m` runs it). Each command's output follows a line
`$ COMMAND FLAGS...`; the first command that fails ends the run with its exit code.
test_replicas.py runs all it checks on one layout of devices so, in one process for each.
"""

import runpy
import shlex
import sys

from {{ cookiecutter.package }}.__main__ import main


def run(words: list[str]) -> int:
    if not words[0].startswith("tests."):
        return main(words)
    sys.argv = words
    try:
        runpy.run_module(words[0], run_name="__main__", alter_sys=True)
    except SystemExit as stopped:  # as the interpreter ends on it: None is success, and
        code = stopped.code  # text is printed and ends the run as a failure
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    for line in sys.argv[1:]:
        print(f"$ {line}", flush=True)
        code = run(shlex.split(line))
        if code:
            sys.exit(code)
