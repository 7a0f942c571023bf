"""A run killed mid-way and started again with the same command continues where it stopped."""

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from conftest import PROJECT

from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.stages.train import train

pytestmark = pytest.mark.slow  # fresh processes, each importing TensorFlow or JAX

PACKAGE = "{{ cookiecutter.package }}"
# Enough that a run stopped after its second epoch has epochs left to resume.
EPOCHS = 6


def checkpoint_epoch(output) -> int:
    state = output / "checkpoints" / "checkpoint.json"
    try:
        return json.loads(state.read_text())["epoch"]
    except (FileNotFoundError, json.JSONDecodeError):
        return 0


# How a run is stopped: Ctrl-C in a terminal, which the run answers in one line, or a notebook
# that dies, which leaves it no chance to clean up (its run lock stays behind).
STOPS = {"tensorflow": signal.SIGINT, "jax": signal.SIGKILL}
INTERRUPTED = (
    "\ninterrupted: run the same command again to resume after the last finished epoch "
    "(--no-resume starts over)\n"
)


def wait_for_checkpoint(output, epoch: int, run: subprocess.Popen) -> None:
    deadline = time.monotonic() + 240
    while checkpoint_epoch(output) < epoch and run.poll() is None:
        assert time.monotonic() < deadline, f"no checkpoint of epoch {epoch} after 240 s"
        time.sleep(0.05)


@pytest.mark.parametrize("backend", list(STOPS))
def test_a_stopped_run_resumes_from_its_last_finished_epoch(
    backend, demo_cfg, demo_dir, tmp_path, start_python, run_python, monkeypatch
):
    """While a run holds its output folder a second is refused at once, naming the process,
    and the first, untouched, goes on. Then under TensorFlow the run is stopped with Ctrl-C,
    under JAX killed, and the same command resumes it. Under JAX the resumed run loads the
    training step the killed one compiled, validates and saves the weights' average (saving
    once met arrays that Keras's predict had freed)."""
    command = [
        "-m", PACKAGE, "train", "--preset", "demo", "--data-dir", str(demo_dir),
        "--output-dir", str(tmp_path), "--epochs", str(EPOCHS), "--steps-per-epoch", "2",
        *(["--valid-files", ""] if backend == "tensorflow" else []),
    ]  # fmt: skip
    # JAX keeps only programs that took a second or more to compile: the suite's quick
    # compiles (conftest's XLA flags) of this small step take about that, either side of it.
    monkeypatch.setenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    first = start_python(*command, backend=backend)
    wait_for_checkpoint(tmp_path, 1, first)
    first.send_signal(signal.SIGSTOP)  # held mid-run: the second run cannot slip in after it
    try:
        with pytest.raises(UserError) as refused:
            train(dataclasses.replace(demo_cfg, output_dir=str(tmp_path)))
    finally:
        first.send_signal(signal.SIGCONT)
    assert str(refused.value).startswith(
        f"Config.output_dir / --output-dir {tmp_path} is in use by another run "
        f"(process {first.pid}: "
    )
    wait_for_checkpoint(tmp_path, 2, first)  # the first went on
    first.send_signal(STOPS[backend])
    out, err = first.communicate(timeout=120)
    if STOPS[backend] == signal.SIGINT:
        assert first.returncode == 130, out + err
        assert err.endswith(INTERRUPTED) and "Traceback" not in err, err[-3000:]
        assert not (tmp_path / ".run.lock").exists()  # let go of as it stopped
    else:
        assert first.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    reached = checkpoint_epoch(tmp_path)
    assert 2 <= reached < EPOCHS and not (tmp_path / "model.weights.h5").exists()
    if backend == "jax":  # Keras 3.15 names its training step's program jit_train_step
        assert list((tmp_path / "jax-cache").glob("jit_train_step-*")), "no compiled step kept"
        monkeypatch.setenv("JAX_LOG_COMPILES", "1")  # which compiled programs were loaded

    again = run_python(*command, backend=backend)
    assert again.returncode == 0, again.stdout + again.stderr[-3000:]
    assert f"resume: after epoch {reached} from" in again.stdout
    assert f"Epoch {reached + 1}/{EPOCHS}" in again.stdout
    assert f"Epoch {reached}/{EPOCHS}" not in again.stdout  # finished epochs are not redone
    history = json.loads((tmp_path / "history.json").read_text())
    assert len(history["loss"]) == EPOCHS  # the killed run's epochs are kept
    assert (tmp_path / "model.weights.h5").is_file() and not (tmp_path / ".run.lock").exists()
    if backend == "jax":
        assert "valid macro_f1: " in again.stdout
        assert f"compile cache: {tmp_path / 'jax-cache'} (" in again.stdout
        assert "Persistent compilation cache hit for 'jit_train_step'" in again.stderr


# In a mount namespace of its own: a small tmpfs holding the output folder, with room for one
# checkpoint and not for the next one written beside it. The same command runs again once a
# filler file beside the output folder is gone; what each run left is copied out.
FULL_DISK = """
out=/tmp/full-disk
mkdir -p $out && mount -t tmpfs -o size=16m tmpfs $out || exit 9
head -c $(( $(df --output=avail -B1 $out | tail -1) - 2000000 )) /dev/zero > $out/filler
"$@" --output-dir $out/run > "$RESULTS/first.log" 2>&1; echo $? > "$RESULTS/first.status"
ls -A $out/run/checkpoints > "$RESULTS/kept"
rm $out/filler
"$@" --output-dir $out/run > "$RESULTS/again.log" 2>&1; echo $? > "$RESULTS/again.status"
"""


def test_a_disk_full_at_a_checkpoint_ends_in_one_line_and_the_last_one_resumes(demo_dir, tmp_path):
    command = [
        sys.executable, "-m", PACKAGE, "train", "--preset", "demo", "--data-dir",
        str(demo_dir), "--epochs", "3", "--steps-per-epoch", "2", "--valid-files", "",
    ]  # fmt: skip
    env = {**os.environ, "RESULTS": str(tmp_path), "TF_CPP_MIN_LOG_LEVEL": "3"}
    subprocess.run(
        ["unshare", "-rm", "sh", "-c", FULL_DISK, "sh", *command],
        cwd=PROJECT, env=env, check=True, timeout=600,
    )  # fmt: skip
    first = (tmp_path / "first.log").read_text()
    assert (tmp_path / "first.status").read_text().strip() == "2", first[-3000:]
    last = first.strip().splitlines()[-1]
    assert re.fullmatch(
        r"error: cannot write /tmp/full-disk/run/checkpoints/checkpoint\.weights\.h5: the disk is "
        r"full \([\d,]+ bytes free, about [\d,]+ needed\); the "
        r"checkpoint\.weights\.h5 written before is kept; .* run the same command again",
        last,
    ), last
    assert "Traceback" not in first and "Exception ignored" not in first
    assert (tmp_path / "kept").read_text().split() == ["checkpoint.json", "checkpoint.weights.h5"]
    again = (tmp_path / "again.log").read_text()
    assert (tmp_path / "again.status").read_text().strip() == "0", again[-3000:]
    assert "resume: after epoch 1 from /tmp/full-disk/run/checkpoints" in again
    assert "Epoch 2/3" in again and "Epoch 1/3" not in again
