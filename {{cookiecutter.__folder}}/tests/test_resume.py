"""A run killed mid-way and started again with the same command continues where it stopped."""

import json
import signal
import time

import pytest

pytestmark = pytest.mark.slow  # fresh processes, each importing TensorFlow or JAX

PACKAGE = "{{ cookiecutter.package }}"
EPOCHS = 12


def checkpoint_epoch(output) -> int:
    state = output / "checkpoints" / "checkpoint.json"
    try:
        return json.loads(state.read_text())["epoch"]
    except (FileNotFoundError, json.JSONDecodeError):
        return 0


@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
def test_a_killed_run_resumes_from_its_last_finished_epoch(
    backend, demo_dir, tmp_path, start_python, run_python
):
    command = [
        "-m", PACKAGE, "train", "--preset", "demo", "--data-dir", str(demo_dir),
        "--output-dir", str(tmp_path), "--epochs", str(EPOCHS), "--steps-per-epoch", "2",
        "--valid-files", "",
    ]  # fmt: skip
    first = start_python(*command, backend=backend)
    deadline = time.monotonic() + 240
    while checkpoint_epoch(tmp_path) < 2 and first.poll() is None:
        assert time.monotonic() < deadline, "no checkpoint after 240 s"
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)  # no chance to clean up, as when a notebook dies
    first.communicate()
    assert first.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    reached = checkpoint_epoch(tmp_path)
    assert 2 <= reached < EPOCHS and not (tmp_path / "model.weights.h5").exists()

    again = run_python(*command, backend=backend)
    assert again.returncode == 0, again.stdout + again.stderr[-3000:]
    assert f"resume: after epoch {reached} from" in again.stdout
    assert f"Epoch {reached + 1}/{EPOCHS}" in again.stdout
    assert f"Epoch {reached}/{EPOCHS}" not in again.stdout  # finished epochs are not redone
    history = json.loads((tmp_path / "history.json").read_text())
    assert len(history["loss"]) == EPOCHS  # the killed run's epochs are kept
    assert (tmp_path / "model.weights.h5").is_file()
