"""Many replicas train as one: the rehearsal a user runs on a CPU before spending TPU quota.

TensorFlow rehearses with logical CPU devices under MirroredStrategy; JAX with forced host
devices under DataParallel, which compiles through XLA as a TPU does. Every case that
trains runs in fresh processes (see run_python): the backend and the device count are fixed
at start-up.
"""

import json
import re
import shlex
import subprocess
import time

import numpy as np
import pytest
import tensorflow as tf
from builders import ids
from conftest import free_port

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.data import pipeline, records
from {{ cookiecutter.package }}.runtime.platform.paths import data_path
from {{ cookiecutter.package }}.tools.shards import write_shards

pytestmark = pytest.mark.slow  # fresh processes, each importing TensorFlow or JAX

PACKAGE = "{{ cookiecutter.package }}"
JPEG = tf.io.encode_jpeg(tf.zeros([8, 8, 3], tf.uint8)).numpy()  # any image will do
# Of the largest weight update: float32 sums over 8 devices add up in another order.
TOLERANCE = 1e-3
# Weight arrays of the small EfficientNet of tests/presets.py (its convolutions, batch norms and
# squeeze-and-excite layers) and the classifier: every one must take the same step.
NET_WEIGHTS = 45


def steps(replicas, backend, demo_dir, tmp_path, run_python, preset=""):
    """tests/one_step.py in one process: the step on this many replicas and on one replica of
    the same devices, each its loss and weights."""
    many, one = tmp_path / f"{backend}-{replicas}.npz", tmp_path / f"{backend}-1.npz"
    done = run_python(
        "-m", "tests.one_step", str(demo_dir), str(replicas), str(many), "--one", str(one),
        "--preset", preset, backend=backend,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    many, one = np.load(many), np.load(one)
    assert (int(many["replicas"]), int(one["replicas"])) == (replicas, 1)
    assert str(many["backend"]) == str(one["backend"]) == backend
    return many, one


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
def jax_steps(demo_dir, tmp_path_factory, run_python):
    """The small CNN's step on 8 JAX devices and on one of them, in one process."""
    return steps(8, "jax", demo_dir, tmp_path_factory.mktemp("jax-steps"), run_python)


def test_eight_tensorflow_replicas_take_the_same_step_as_one(
    demo_dir, tmp_path, run_python, preset
):
    """Same loss and same updated weights on a keras-hub EfficientNet under MirroredStrategy
    as under the default strategy: the global batch, the loss averaged over it, the learning
    rate scaled by replicas and the batch statistics of its batch-norm layers all add up
    (tests/one_step.py)."""
    eight, one = steps(8, "tensorflow", demo_dir, tmp_path, run_python, preset("efficientnet-b0"))
    assert_same_step(eight, one, weights=NET_WEIGHTS)


def test_eight_jax_devices_take_the_same_step_as_one(jax_steps):
    """The same under JAX's DataParallel, on the small CNN (its batch norms as well): the
    equivalence holds at any size, and the EfficientNet's 8-device step is compiled and
    trained by the 8-replica fit below, not compiled twice."""
    eight, one = jax_steps
    assert_same_step(eight, one)


def test_two_jax_processes_take_the_same_step_as_one(demo_dir, tmp_path, start_python, jax_steps):
    """Beyond one machine: two processes of one device each, joined through a coordinator as
    TPU hosts are, split the global batch between them and take one step as one device does."""
    arguments = ["-m", "tests.one_step", str(demo_dir), "2", str(tmp_path / "step.npz")]
    codes, output = run_processes(start_python, arguments, logs=tmp_path)
    assert codes == [0, 0], tails(output)
    first, second = (np.load(tmp_path / f"step-{i}.npz") for i in range(2))
    assert (int(first["replicas"]), int(first["processes"])) == (2, 2)
    _, one = jax_steps
    assert_same_step(first, one)
    for name in first.files:  # the processes hold one model, not two
        np.testing.assert_array_equal(second[name], first[name], err_msg=name)


def test_two_processes_train_one_epoch_of_the_demo_together(demo_dir, tmp_path, start_python):
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
    assert main(["predict", *flags]) == 0  # here: any process reads what process 0 wrote
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


@pytest.mark.parametrize(
    ("backend", "replicas", "backbone", "shown"),
    [
        ("jax", 8, "efficientnet-b0", "steps per execution: 2\n"),
        (
            "tensorflow",
            2,
            "small-cnn",
            "steps per execution: 1, not 2: Keras 3 under tf.distribute fails",
        ),
    ],
)
def test_replicas_rehearse_fit_and_predict_a_submission(
    backend, replicas, backbone, shown, demo_dir, tmp_path, run_python, preset
):
    """doctor rehearses the replicas and their global batch, then train and predict run on
    them, one after the other in one process as a notebook's cells do (tests/commands.py).
    JAX rehearses a TPU-8 (Kaggle's TPU image runs Keras on JAX) on a keras-hub EfficientNet,
    two steps per call. TensorFlow rehearses the GPUs MirroredStrategy drives, two as on
    Kaggle's T4 x2: under tf.distribute Keras 3 cannot run several steps per call, so the
    trainer takes one, says so, and the run still works end to end (on the small CNN: the
    strategy traces the step once per replica, 16 s of CPU for 8, and 8 TensorFlow replicas
    take the EfficientNet's step above). No validation: it is the pipeline predict runs."""
    weights = preset(backbone) if backbone != "small-cnn" else "auto"
    batch = 32 // replicas  # a global batch of 32
    flags = [
        "--preset", "demo", "--data-dir", str(demo_dir), "--output-dir", str(tmp_path),
        "--backbone", backbone, "--weights", weights,
        "--simulate-replicas", str(replicas), "--batch-size", str(batch), "--epochs", "1",
        "--steps-per-epoch", "2", "--steps-per-execution", "2", "--valid-files", "",
    ]  # fmt: skip
    # Larger batches to predict: 3 steps of 128, the last one padded for the replicas.
    predict = ["predict", *flags, "--batch-size", str(128 // replicas)]
    commands = [["doctor", *flags], ["train", *flags], predict]
    done = run_python("-m", "tests.commands", *map(shlex.join, commands), backend=backend)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    doctor, trained, predicted = re.split(r"^\$ ", done.stdout, flags=re.MULTILINE)[1:]
    assert f"backend: {backend}\nreplicas: {replicas}\n" in doctor
    assert f"global batch: 32 ({batch} per replica x {replicas})" in doctor
    assert f"replicas: {replicas}" in trained and shown in trained
    assert "2/2" in trained and "loss: " in trained
    assert f"replicas: {replicas}" in predicted and "3/3" in predicted
    assert ids(tmp_path / "submission.csv") == ids(demo_dir / "sample_submission.csv")


def test_two_processes_read_disjoint_shares_that_together_cover_the_epoch(tmp_path):
    """Each host reads and decodes only its share: with 4 shards, two files each; with 3,
    which do not divide, every second record counted over all the files. What a process reads
    follows from its Config (process_id, num_processes) alone, before any shuffling: each
    process's share is read here in turn."""
    examples = [{"image": JPEG, "class": number} for number in range(64)]  # label: its number
    for shards in (4, 3):
        folder = str(tmp_path / f"{shards}-shards")
        write_shards(folder, examples, shards, 8)
        first, second = (labels_read(folder, 2, process) for process in range(2))
        assert len(first) == len(second) == 32, shards  # an epoch of local batches of 8 each
        assert not set(first) & set(second), shards  # no record read by both
        assert sorted(first + second) == list(range(64)), shards  # and none left out


def labels_read(data_dir: str, processes: int, process: int) -> list[int]:
    """The labels of the records this process of several trains on in one epoch: the records'
    labels are their numbers, so they name the records it read."""
    cfg = Config(
        data_dir=data_dir, train_files="*.tfrec", image_size=32, shuffle_buffer=64,
        num_processes=processes, process_id=process, coordinator="localhost:1234",
    )  # fmt: skip
    files = records.find(data_path(cfg, cfg.train_files), "train_files")
    batch = 16  # global: 8 per process
    per_epoch = records.count(files) // batch  # one epoch, as plan.py counts it
    batches = pipeline.for_training(files, cfg, batch).take(per_epoch)
    return [int(label) for _, labels in batches for label in labels.numpy()]
