"""Several commands of the project in one process, one after the other, as a notebook's cells
run them: the devices a process starts with are its own until it ends.

Usage: python -m tests.commands 'COMMAND FLAGS...' 'COMMAND FLAGS...' ... (each argument one
command line, in shell words). Each command's output follows a line `$ COMMAND FLAGS...`; the
first command that fails ends the run with its exit code. test_replicas.py rehearses
replicas with doctor, train and predict so, in one process instead of three.
"""

import shlex
import sys

from {{ cookiecutter.package }}.__main__ import main

if __name__ == "__main__":
    for line in sys.argv[1:]:
        print(f"$ {line}", flush=True)
        code = main(shlex.split(line))
        if code:
            sys.exit(code)
