"""Many replicas train as one: the rehearsal a user runs on a CPU before spending TPU quota.

TensorFlow rehearses with logical CPU devices under MirroredStrategy; JAX with forced host
devices under DataParallel, which compiles through XLA as a TPU does. Every case runs in a
fresh process (see run_python): the backend and the device count are fixed at start-up.
"""

import json
import re
import subprocess
import time

import numpy as np
import pytest
import tensorflow as tf
from builders import ids
from conftest import free_port

from {{ cookiecutter.package }}.tools.shards import write_shards

pytestmark = pytest.mark.slow  # fresh processes, each importing TensorFlow or JAX

PACKAGE = "{{ cookiecutter.package }}"
BACKENDS = ("tensorflow", "jax")
JPEG = tf.io.encode_jpeg(tf.zeros([8, 8, 3], tf.uint8)).numpy()  # any image will do
# Of the largest weight update: float32 sums over 8 devices add up in another order.
TOLERANCE = 1e-3
# Weight arrays of the small EfficientNet of tests/presets.py (its convolutions, batch norms and
# squeeze-and-excite layers) and the classifier: every one must take the same step.
NET_WEIGHTS = 45


def one_step(replicas, backend, demo_dir, tmp_path, run_python, preset=""):
    """tests/one_step.py on this many replicas in one process: its loss and weights."""
    output = tmp_path / f"{backend}-{replicas}.npz"
    done = run_python(
        "-m", "tests.one_step", str(demo_dir), str(replicas), str(output), "--preset", preset,
        backend=backend,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return np.load(output)


def assert_same_step(many, one, weights=17):
    """Same loss, same starting weights, and updates within TOLERANCE of the largest one."""
    assert float(many["loss"]) == pytest.approx(float(one["loss"]), rel=1e-6)
    names = [name for name in one.files if re.fullmatch(r"w\d+", name)]
    assert len(names) == weights  # small-cnn: 3 conv blocks (kernel + 4 batch-norm), classifier
    for name in names:
        np.testing.assert_array_equal(many[f"before_{name}"], one[f"before_{name}"])
    updates = {n: (one[n] - one[f"before_{n}"], many[n] - many[f"before_{n}"]) for n in names}
    largest = max(np.abs(update).max() for update, _ in updates.values())
    assert largest > 1e-3  # the step did move the weights
    for name, (update_on_one, update_on_many) in updates.items():
        np.testing.assert_allclose(
            update_on_many, update_on_one, rtol=0, atol=TOLERANCE * largest, err_msg=name
        )


def run_processes(start_python, arguments, logs, count=2, own=lambda i: (), timeout=300):
    """`python ARGUMENTS` (and own(i) for process i) in `count` JAX processes joined through
    one coordinator on localhost, as TPU hosts are; waits for all. Their codes and output."""
    coordinator = ["--coordinator", f"127.0.0.1:{free_port()}", "--num-processes", str(count)]
    started = []
    for i in range(count):
        flags = [*arguments, *own(i), *coordinator, "--process-id", str(i)]
        started.append(start_python(*flags, backend="jax", log=logs / f"process-{i}.log"))
    deadline = time.monotonic() + timeout
    try:
        codes = [process.wait(max(1, deadline - time.monotonic())) for process in started]
    except subprocess.TimeoutExpired:
        codes = None
    finally:
        for process in started:
            process.kill()
    output = [(logs / f"process-{i}.log").read_text() for i in range(count)]
    assert codes is not None, f"still running after {timeout} s:\n" + tails(output)
    return codes, output


def tails(output):
    return "\n".join(f"--- process {i}:\n{text[-3000:]}" for i, text in enumerate(output))


@pytest.fixture(scope="module")
def one_jax_replica(demo_dir, tmp_path_factory, run_python):
    """The small CNN's step on one JAX device: what 8 devices and 2 processes must match."""
    return one_step(1, "jax", demo_dir, tmp_path_factory.mktemp("one-replica"), run_python)


def test_eight_tensorflow_replicas_take_the_same_step_as_one(
    demo_dir, tmp_path, run_python, preset
):
    """Same loss and same updated weights on a keras-hub EfficientNet under MirroredStrategy:
    the global batch, the loss averaged over it, the learning rate scaled by replicas and the
    batch statistics of its batch-norm layers all add up (tests/one_step.py)."""
    folder = preset("efficientnet-b0")
    one = one_step(1, "tensorflow", demo_dir, tmp_path, run_python, folder)
    eight = one_step(8, "tensorflow", demo_dir, tmp_path, run_python, folder)
    assert (int(eight["replicas"]), str(eight["backend"])) == (8, "tensorflow")
    assert_same_step(eight, one, weights=NET_WEIGHTS)


def test_eight_jax_devices_take_the_same_step_as_one(
    demo_dir, tmp_path, run_python, one_jax_replica
):
    """The same under JAX's DataParallel, on the small CNN (its batch norms as well): the
    equivalence holds at any size, and the EfficientNet's 8-device step is compiled and
    trained by the 8-replica fit below, not compiled twice."""
    eight = one_step(8, "jax", demo_dir, tmp_path, run_python)
    assert (int(eight["replicas"]), str(eight["backend"])) == (8, "jax")
    assert_same_step(eight, one_jax_replica)


def test_two_jax_processes_take_the_same_step_as_one(
    demo_dir, tmp_path, start_python, one_jax_replica
):
    """Beyond one machine: two processes of one device each, joined through a coordinator as
    TPU hosts are, split the global batch between them and take one step as one process does."""
    arguments = ["-m", "tests.one_step", str(demo_dir), "2", str(tmp_path / "step.npz")]
    codes, output = run_processes(start_python, arguments, logs=tmp_path)
    assert codes == [0, 0], tails(output)
    first, second = (np.load(tmp_path / f"step-{i}.npz") for i in range(2))
    assert (int(first["replicas"]), int(first["processes"])) == (2, 2)
    assert_same_step(first, one_jax_replica)
    for name in first.files:  # the processes hold one model, not two
        np.testing.assert_array_equal(second[name], first[name], err_msg=name)


def test_two_processes_train_one_epoch_of_the_demo_together(
    demo_dir, tmp_path, start_python, run_python
):
    """Two JAX processes on localhost train the demo's epoch as one model (TF_CONFIG and
    MultiWorkerMirroredStrategy cannot: Keras 3's fit fails under it, keras-team/keras#20585).
    Process 0 alone writes, and `predict` makes a submission from what it wrote."""
    flags = [
        "--preset", "demo", "--data-dir", str(demo_dir), "--output-dir", str(tmp_path / "out"),
        "--epochs", "1", "--steps-per-epoch", "4",
    ]  # fmt: skip
    codes, output = run_processes(start_python, ["-m", PACKAGE, "train", *flags], logs=tmp_path)
    assert codes == [0, 0], tails(output)
    losses = []
    for text in output:
        assert "backend: jax\nreplicas: 2\nprocesses: 2\n" in text
        assert "global batch: 64, training records: 1078\nsteps per epoch: 4\n" in text  # 32 x 2
        losses.append(re.search(r"4/4 - .* loss: ([0-9.]+)", text).group(1))
    assert losses[0] == losses[1]  # one computation over the global batch
    assert "weights: " in output[0] and "weights: " not in output[1]
    predicted = run_python("-m", PACKAGE, "predict", *flags, backend="jax")
    assert predicted.returncode == 0, predicted.stdout + predicted.stderr[-3000:]
    assert ids(tmp_path / "out" / "submission.csv") == ids(demo_dir / "sample_submission.csv")


def test_processes_that_would_resume_from_different_epochs_stop_with_the_fix(
    demo_dir, tmp_path, start_python
):
    """Each process reads its own --output-dir: one that found a checkpoint and one that did
    not would wait on each other for ever, so both stop at once and say why."""
    checkpoint = tmp_path / "0" / "checkpoints"
    checkpoint.mkdir(parents=True)
    (checkpoint / "checkpoint.json").write_text(json.dumps({"epoch": 1, "history": {}}))
    (checkpoint / "checkpoint.weights.h5").write_bytes(b"")  # never read: the processes stop
    codes, output = train_apart(demo_dir, tmp_path, start_python)
    assert codes == [2, 2], tails(output)
    for text in output:
        assert "error: the processes found checkpoints of different epochs in" in text
        assert "([1, 0], by process); give every process the same shared " in text
        assert "Config.output_dir / --output-dir, or start over with --no-resume" in text


def test_a_problem_one_process_finds_stops_every_process(demo_dir, tmp_path, start_python):
    """Process 0 cannot write its output: process 1 must not wait for it in the first step."""
    (tmp_path / "0").write_text("")
    codes, output = train_apart(demo_dir, tmp_path, start_python)
    assert codes == [2, 2], tails(output)
    assert f"error: cannot write the output in {tmp_path / '0' / 'checkpoints'}" in output[0]
    assert "error: process 0 found problems (its output names them); fix them" in output[1]


def train_apart(demo_dir, tmp_path, start_python):
    """Two processes training the demo together, each with its own --output-dir."""
    flags = ["--preset", "demo", "--data-dir", str(demo_dir), "--epochs", "2"]
    (tmp_path / "logs").mkdir()
    return run_processes(
        start_python,
        ["-m", PACKAGE, "train", *flags],
        logs=tmp_path / "logs",
        own=lambda i: ("--output-dir", str(tmp_path / str(i))),
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
    ("backend", "backbone", "shown"),
    [
        ("jax", "efficientnet-b0", "steps per execution: 2\n"),
        (
            "tensorflow",
            "small-cnn",
            "steps per execution: 1, not 2: Keras 3 under tf.distribute fails",
        ),
    ],
)
def test_eight_replicas_fit_and_predict_a_submission(
    backend, backbone, shown, demo_dir, tmp_path, run_python, preset
):
    """On a keras-hub EfficientNet, JAX runs two steps per call; under tf.distribute Keras 3
    cannot, so the trainer takes one, says so, and the run still works end to end (on the
    small CNN: the EfficientNet's step on 8 TensorFlow replicas is the one above, and tracing
    it for 8 replicas takes a minute on 2 cores). No validation: it is the pipeline predict
    runs, and under 8 simulated replicas each pass takes 15 seconds on 2 cores."""
    weights = preset(backbone) if backbone != "small-cnn" else "auto"
    flags = [
        "--preset", "demo", "--data-dir", str(demo_dir), "--output-dir", str(tmp_path),
        "--backbone", backbone, "--weights", weights,
        "--simulate-replicas", "8", "--batch-size", "4", "--epochs", "1",
        "--steps-per-epoch", "2", "--steps-per-execution", "2", "--valid-files", "",
    ]  # fmt: skip
    trained = run_python("-m", PACKAGE, "train", *flags, backend=backend)
    assert trained.returncode == 0, trained.stdout + trained.stderr[-3000:]
    assert "replicas: 8" in trained.stdout and shown in trained.stdout
    assert "2/2" in trained.stdout and "loss: " in trained.stdout
    # Larger batches to predict: the last one still padded for 8 replicas, in 3 steps, not 12.
    predicted = run_python("-m", PACKAGE, "predict", *flags, "--batch-size", "16", backend=backend)
    assert predicted.returncode == 0, predicted.stdout + predicted.stderr[-3000:]
    assert ids(tmp_path / "submission.csv") == ids(demo_dir / "sample_submission.csv")


def test_two_processes_read_disjoint_shares_that_together_cover_the_epoch(tmp_path, start_python):
    """Each host reads and decodes only its share: with 4 shards, two files each; with 3,
    which do not divide, every second record counted over all the files."""
    examples = [{"image": JPEG, "class": number} for number in range(64)]  # label: its number
    layouts = {shards: str(tmp_path / f"{shards}-shards") for shards in (4, 3)}
    for shards, folder in layouts.items():
        write_shards(folder, examples, shards, 8)
    started = []
    for process in range(2):  # as two hosts of one run
        output, log = tmp_path / f"{process}.json", tmp_path / f"{process}.log"
        share = ["-m", "tests.process_share", "2", str(process), str(output)]
        started.append(start_python(*share, *layouts.values(), log=log))
    assert [process.wait(120) for process in started] == [0, 0], tails(
        [(tmp_path / f"{process}.log").read_text() for process in range(2)]
    )
    read = [json.loads((tmp_path / f"{process}.json").read_text()) for process in range(2)]
    for shards, folder in layouts.items():
        first, second = read[0][folder], read[1][folder]
        assert len(first) == len(second) == 32, shards  # an epoch of local batches of 8 each
        assert not set(first) & set(second), shards  # no record read by both
        assert sorted(first + second) == list(range(64)), shards  # and none left out
