"""Many replicas train as one: the rehearsal a user runs on a CPU before spending TPU quota.

TensorFlow rehearses with logical CPU devices under MirroredStrategy; JAX with forced host
devices under DataParallel, which compiles through XLA as a TPU does. Every case runs in a
fresh process (see run_python): the backend and the device count are fixed at start-up.
"""

import csv
import re

import numpy as np
import pytest

PACKAGE = "{{ cookiecutter.package }}"
BACKENDS = ("tensorflow", "jax")
# Of the largest weight update: float32 sums over 8 devices add up in another order.
TOLERANCE = 1e-3


def ids(path):
    with open(path, newline="") as file:
        return [row[0] for row in csv.reader(file)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_eight_replicas_take_the_same_step_as_one(backend, demo_dir, tmp_path, run_python):
    """Same loss and same updated weights: the global batch, the loss averaged over it, the
    learning rate scaled by replicas and the batch statistics all add up (tests/one_step.py)."""
    steps = {}
    for replicas in (1, 8):
        output = tmp_path / f"{replicas}.npz"
        done = run_python(
            "-m", "tests.one_step", str(demo_dir), str(replicas), str(output), backend=backend
        )
        assert done.returncode == 0, done.stderr[-3000:]
        steps[replicas] = np.load(output)
    one, eight = steps[1], steps[8]
    assert (int(eight["replicas"]), str(eight["backend"])) == (8, backend)
    assert float(eight["loss"]) == pytest.approx(float(one["loss"]), rel=1e-6)
    names = [name for name in one.files if re.fullmatch(r"w\d+", name)]
    assert len(names) == 17  # 3 conv blocks (kernel + 4 batch-norm) and the classifier
    for name in names:  # the same starting point
        np.testing.assert_array_equal(eight[f"before_{name}"], one[f"before_{name}"])
    updates = {n: (one[n] - one[f"before_{n}"], eight[n] - eight[f"before_{n}"]) for n in names}
    largest = max(np.abs(update).max() for update, _ in updates.values())
    assert largest > 1e-3  # the step did move the weights
    for name, (update_on_one, update_on_eight) in updates.items():
        np.testing.assert_allclose(
            update_on_eight, update_on_one, rtol=0, atol=TOLERANCE * largest, err_msg=name
        )


@pytest.mark.parametrize("backend", BACKENDS)
def test_doctor_rehearses_eight_replicas_and_their_global_batch(backend, demo_dir, run_python):
    done = run_python(
        "-m", PACKAGE, "doctor", "--preset", "demo", "--data-dir", str(demo_dir),
        "--simulate-replicas", "8", backend=backend,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert f"backend: {backend}\nreplicas: 8\n" in done.stdout
    assert "global batch: 256 (32 per replica x 8)" in done.stdout


@pytest.mark.parametrize(
    ("backend", "shown"),
    [
        ("jax", "steps per execution: 2\n"),
        ("tensorflow", "steps per execution: 1, not 2: Keras 3 under tf.distribute fails"),
    ],
)
def test_eight_replicas_fit_and_predict_a_submission(
    backend, shown, demo_dir, tmp_path, run_python
):
    """JAX runs two steps per call; under tf.distribute Keras 3 cannot, so the trainer takes
    one, says so, and the run still works end to end."""
    flags = [
        "--preset", "demo", "--data-dir", str(demo_dir), "--output-dir", str(tmp_path),
        "--simulate-replicas", "8", "--batch-size", "4", "--epochs", "2",
        "--steps-per-epoch", "4", "--steps-per-execution", "2",
    ]  # fmt: skip
    trained = run_python("-m", PACKAGE, "train", *flags, backend=backend)
    assert trained.returncode == 0, trained.stdout + trained.stderr[-3000:]
    assert "replicas: 8" in trained.stdout and shown in trained.stdout
    assert "Epoch 2/2" in trained.stdout and "valid macro_f1:" in trained.stdout
    predicted = run_python("-m", PACKAGE, "predict", *flags, backend=backend)
    assert predicted.returncode == 0, predicted.stdout + predicted.stderr[-3000:]
    assert ids(tmp_path / "submission.csv") == ids(demo_dir / "sample_submission.csv")
