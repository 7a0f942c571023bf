"""TensorFlow's start-up lines, held to $TF_CPP_MIN_LOG_LEVEL.

TensorFlow and XLA log through absl, and what they log while loading (oneDNN is on, no CUDA
drivers, the CPU's instructions, "All log messages before absl::InitializeLog() is called are
written to STDERR") comes before absl reads any level: $TF_CPP_MIN_LOG_LEVEL cannot hide it.
So while the command line loads TensorFlow and finds the accelerator, what the native
libraries write to stderr is caught, then passed on without the lines under the level asked
for. Python's own writes go straight to the terminal meanwhile.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile

# absl's line: severity letter (Info, Warning, Error, Fatal), date, time, thread, file:line].
ABSL_LINE = re.compile(r"([IWEF])\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]+\] ")
SEVERITY = {"I": 0, "W": 1, "E": 2, "F": 3}
UNINITIALIZED = "WARNING: All log messages before absl::InitializeLog() is called"


@contextlib.contextmanager
def held_to_level():
    """Run the block with the native libraries' stderr caught; then write what they wrote,
    less the absl lines (and the lines that continue them) under $TF_CPP_MIN_LOG_LEVEL.
    Nothing is caught when the level shows everything, or when stderr is not the terminal's
    (a notebook, a test capturing it)."""
    level = int(os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0") or 0)
    try:
        ours = sys.stderr.fileno() == 2
    except (AttributeError, ValueError, io.UnsupportedOperation):
        ours = False
    if level <= 0 or not ours:
        yield
        return
    python_side = sys.stderr
    python_side.flush()
    # Python writes to a copy of the real stderr while fd 2 is caught; kept open, since a
    # logging handler made meanwhile may hold it.
    sys.stderr = os.fdopen(os.dup(2), "w", buffering=1, errors="backslashreplace")
    real = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(real, 2)
            os.close(real)
            sys.stderr = python_side
            caught.seek(0)
            python_side.write(kept(caught.read().decode(errors="replace"), level))
            python_side.flush()


def kept(native: str, level: int) -> str:
    """The lines at or above `level`: an absl line under it goes, with the lines that follow
    it up to the next absl line (the rest of its message)."""
    lines, dropping = [], False
    for line in native.splitlines(keepends=True):
        found = ABSL_LINE.match(line)
        if found:
            dropping = SEVERITY[found.group(1)] < level
        elif line.startswith(UNINITIALIZED):
            dropping = level >= SEVERITY["W"]
        if not dropping:
            lines.append(line)
    return "".join(lines)
