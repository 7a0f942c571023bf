"""TensorFlow's start-up lines, kept out of sight unless asked for: what TensorFlow and XLA log
while loading comes before absl reads any level, so their stderr is caught and filtered."""

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
QUIET = "1"  # where the user set no level: warnings and above (start-up lines are notices)
# Said at start-up by every TensorFlow on a GPU machine, as errors, and harmless.
HARMLESS = re.compile(
    r"Unable to register cu(DNN|FFT|BLAS) factory|computation placer already registered|"
    r"TF-TRT Warning: Could not find TensorRT"
)


@contextlib.contextmanager
def held_to_level():
    """The block's native stderr caught, then written less what `kept` drops (unset: warnings)."""
    asked = os.environ.get("TF_CPP_MIN_LOG_LEVEL")
    level = int(os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", QUIET) or 0)
    if level <= 0:
        yield
        return
    python_side = sys.stderr
    python_side.flush()
    with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):
        if python_side.fileno() == 2:  # a notebook's or a test's stderr is no file: left as is
            # Python writes to a copy of fd 2 meanwhile, left open: a logging handler may hold it.
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
            native = caught.read().decode(errors="replace")
            python_side.write(kept(native, level, harmless=HARMLESS if asked is None else None))
            python_side.flush()


def kept(native: str, level: int, harmless: re.Pattern | None = None) -> str:
    """The lines at or above `level`: an absl line under it goes, with the lines that follow
    it up to the next absl line (the rest of its message); so does one `harmless` matches."""
    lines, dropping = [], False
    for line in native.splitlines(keepends=True):
        if found := ABSL_LINE.match(line):
            dropping = SEVERITY[found.group(1)] < level or bool(harmless and harmless.search(line))
        elif line.startswith(UNINITIALIZED):
            dropping = level >= SEVERITY["W"]
        if not dropping:
            lines.append(line)
    return "".join(lines)
