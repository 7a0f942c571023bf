"""The rendered project works for real: its own tests, then the demo end to end."""

import csv
import os
import re
import sys
from pathlib import Path

import pytest
from conftest import TEMPLATE

pytestmark = pytest.mark.slow
DURATIONS = TEMPLATE / "build" / "rendered-test-durations.txt"
LOG = TEMPLATE / "build" / "rendered-tests.log"
# The reason the rendered conftest gives a test that needs a TPU or GPU on a machine without.
NO_ACCELERATOR = "no TPU or GPU on this machine"


def test_rendered_project_passes_its_own_tests(baker, python):
    """Defaults, as a competitor gets them; includes a tiny CPU training pass and a submission.
    Every test must pass: none may fail, and none may skip but those that need an accelerator
    this machine lacks."""
    baked = baker()
    # pytest-xdist hands out a test module to a worker, so that a module's fixtures (a trained
    # run, say) are made once. One worker more than cores: a worker waiting on a process it
    # started, a notebook kernel or a time limit leaves its core to another (on 2 cores, idle
    # CPU fell from 80 core-seconds to 24). The modules go out in the rendered conftest's
    # order, those with the most slow tests first: by default pytest-xdist hands out the
    # modules with the most tests first, and a long module with few tests, handed out last,
    # kept one core busy after the others had finished.
    workers = len(os.sched_getaffinity(0)) + 1
    command = [python, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-n", str(workers)]
    command += ["--dist", "loadfile", "--no-loadscope-reorder"]
    result = baked.run(*command, "--durations=20", timeout=3000)  # a guard against a hang
    slowest = result.stdout.partition("slowest 20 durations")[2].partition("short test summary")[0]
    DURATIONS.parent.mkdir(exist_ok=True)
    DURATIONS.write_text(slowest)  # for whoever times the suite: its 20 slowest tests
    LOG.write_text(result.stdout + result.stderr)  # the whole run, passes' output included
    # -rA prints every passing test's output after the failures: show the failures themselves.
    failures = result.stdout.partition("= FAILURES =")[2].partition("= PASSES =")[0]
    assert result.returncode == 0, failures[-12000:] + result.stdout[-2000:] + result.stderr[-2000:]
    summary = result.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary), summary
    assert not re.search(r"failed|error|xpass|xfail|deselected", summary), summary
    skipped = re.findall(r"^SKIPPED \[\d+\] (.+)$", result.stdout, re.MULTILINE)
    assert all(line.endswith(NO_ACCELERATOR) for line in skipped), skipped


def test_rendered_kaggle_commands_pass_with_the_oldest_supported_client(baker, python):
    """Colab's runtime and Kaggle's GPU image carry an older Kaggle client than a fresh install
    resolves; the kaggle commands' tests pass with it too (requirements-oldest.txt, which
    `make venv` installs beside .venv)."""
    oldest = Path(sys.prefix) / "oldest"
    assert (oldest / ".installed").is_file(), f"no {oldest}: run `make venv` first"
    pinned = (TEMPLATE / "requirements-oldest.txt").read_text().splitlines()
    pins = [line.replace("==", " ") for line in pinned if line and not line.startswith("#")]
    baked = baker()
    command = [python, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "tests/test_kaggle.py"]
    result = baked.run(*command, timeout=900, PYTHONPATH=str(oldest))
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    (header,) = [line for line in result.stdout.splitlines() if line.startswith("versions: ")]
    assert all(f", {pin}," in f"{header}," for pin in pins), header  # ran with the oldest
    summary = result.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary), summary
    assert not re.search(r"failed|error|skipped|deselected", summary), summary


def test_demo_writes_a_submission_matching_the_sample_and_scores_well(baker, python):
    baked = baker()
    # No "Leaving directory" lines when this runs under `make test`: the last lines are the score.
    result = baked.run("make", "--no-print-directory", "demo", f"PYTHON={python}")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    lines = result.stdout.strip().splitlines()
    assert f"submission: {baked.path / 'output/demo/submission.csv'}" in lines[-4:]
    accuracy = float(lines[-1].removeprefix("accuracy: "))
    assert accuracy >= 0.90, result.stdout[-3000:]

    def ids(name):
        with open(baked.path / name, newline="") as file:
            return [row["id"] for row in csv.DictReader(file)]

    assert ids("output/demo/submission.csv") == ids("data/demo/sample_submission.csv")
