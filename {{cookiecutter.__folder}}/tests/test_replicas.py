"""Many replicas train as one: the rehearsal a user runs on a CPU before spending TPU quota.

TensorFlow rehearses with logical CPU devices under MirroredStrategy; JAX with forced host
devices under DataParallel, which compiles through XLA as a TPU does. Every case that
trains runs in fresh processes (see run_python): the backend and the device count are fixed
at start-up. Each layout of devices gets one, which runs all that is checked on it.
"""

import dataclasses
import json
import re
import shlex
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from builders import ids
from commands import ran
from conftest import free_port, start

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.data import pipeline, records
from {{ cookiecutter.package }}.runtime.stages.run import start as start_run
from {{ cookiecutter.package }}.tools.shards import write_shards

pytestmark = pytest.mark.slow  # fresh processes, each importing TensorFlow or JAX

PACKAGE = "{{ cookiecutter.package }}"
JPEG = tf.io.encode_jpeg(tf.zeros([8, 8, 3], tf.uint8)).numpy()  # any image will do
# Of the largest weight update: float32 sums over 8 devices add up in another order.
TOLERANCE = 1e-3
# Weight arrays of the small EfficientNet of tests/presets.py (its convolutions, batch norms and
# squeeze-and-excite layers) and the classifier: every one must take the same step.
NET_WEIGHTS = 45


@dataclasses.dataclass(frozen=True)
class Layout:
    """One backend's replicas, and what this module runs on them."""

    replicas: int
    step_backbone: str  # tests/one_step.py's model
    rehearsal_backbone: str  # doctor's, train's and predict's
    steps_shown: str  # what train says of its steps per execution


# JAX rehearses a TPU-8 (Kaggle's TPU image runs Keras on JAX), its rehearsal on a keras-hub
# EfficientNet; TensorFlow the GPUs MirroredStrategy drives, two as on Kaggle's T4 x2, its
# step on the EfficientNet (MirroredStrategy traces the step once per replica: 18 s of CPU
# more for 8). Each backend meets both models; the equivalence holds at any size.
LAYOUTS = {
    "jax": Layout(8, "small-cnn", "efficientnet-b0", "steps per execution: 2\n"),
    "tensorflow": Layout(
        2,
        "efficientnet-b0",
        "small-cnn",
        "steps per execution: 1, not 2: Keras 3 under tf.distribute fails",
    ),
}


@dataclasses.dataclass(frozen=True)
class Replicated:
    """What one process on a backend's replicas did: the step, each command's output."""

    folder: Path  # the rehearsal's output folder
    many: np.lib.npyio.NpzFile  # the step on the replicas: loss, weights before and after
    one: np.lib.npyio.NpzFile  # the same step on one replica of the same devices (one_step.py)
    said: dict[str, str]  # doctor's, train's and predict's output, by command


def rehearsal_flags(backend, demo_dir, folder, preset) -> list[str]:
    """The demo's, on the backend's replicas with a global batch of 32, writing into folder."""
    layout = LAYOUTS[backend]
    backbone = layout.rehearsal_backbone
    weights = preset(backbone) if backbone != "small-cnn" else "auto"
    return [
        "--preset", "demo", "--data-dir", str(demo_dir), "--output-dir", str(folder),
        "--backbone", backbone, "--weights", weights, "--simulate-replicas", str(layout.replicas),
        "--batch-size", str(32 // layout.replicas), "--epochs", "1", "--steps-per-epoch", "2",
        "--steps-per-execution", "2", "--valid-files", "",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def on_replicas(demo_dir, tmp_path_factory, run_python, preset):
    """on_replicas(backend): all this module checks on that backend's replicas, run once, in
    one fresh process (the backend and the device count are fixed at start-up): the step of
    tests/one_step.py on the replicas and on one of them, then doctor, train and predict, one
    after the other as a notebook's cells run them (tests/commands.py)."""
    made = {}

    def run(backend: str) -> Replicated:
        if backend not in made:
            layout, folder = LAYOUTS[backend], tmp_path_factory.mktemp(f"{backend}-replicas")
            steps = tmp_path_factory.mktemp(f"{backend}-step")  # apart from the run's folder
            many, one = steps / "many.npz", steps / "one.npz"
            step = ["tests.one_step", str(demo_dir), str(layout.replicas), str(many)]
            step += ["--one", str(one)]
            if layout.step_backbone != "small-cnn":
                step += ["--preset", preset(layout.step_backbone)]
            flags = rehearsal_flags(backend, demo_dir, folder, preset)
            # Larger batches to predict: 3 steps of 128, the last one padded for the replicas.
            predict = ["predict", *flags, "--batch-size", str(128 // layout.replicas)]
            # Every batch mixed (MixUp or CutMix) in the model, each replica its own share.
            mixing = ["--mixup", "0.2", "--cutmix", "1.0", "--mix-probability", "1"]
            commands = [step, ["doctor", *flags], ["train", *flags, *mixing], predict]
            done = run_python("-m", "tests.commands", *map(shlex.join, commands), backend=backend)
            assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
            many, one = np.load(many), np.load(one)
            assert (int(many["replicas"]), int(one["replicas"])) == (layout.replicas, 1)
            assert str(many["backend"]) == str(one["backend"]) == backend
            said = {text.split()[0]: text for _, text in ran(done.stdout)}  # by command
            made[backend] = Replicated(folder, many, one, said)
        return made[backend]

    return run


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


def run_processes(start_python, arguments, logs, count=2, timeout=300):
    """`python ARGUMENTS(i, JOINED)` in `count` JAX processes joined through one coordinator
    on localhost, as TPU hosts are, JOINED being process i's flags for it (--coordinator,
    --num-processes, --process-id); waits for all. Their codes and output."""
    coordinator = ["--coordinator", f"127.0.0.1:{free_port()}", "--num-processes", str(count)]
    started = []
    for i in range(count):
        flags = arguments(i, [*coordinator, "--process-id", str(i)])
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


def test_two_tensorflow_replicas_take_the_same_step_as_one(on_replicas):
    """Same loss and same updated weights on a keras-hub EfficientNet under MirroredStrategy
    as under the default strategy: the global batch, the loss averaged over it, the learning
    rate scaled by replicas and the batch statistics of its batch-norm layers all add up
    (tests/one_step.py)."""
    run = on_replicas("tensorflow")
    assert_same_step(run.many, run.one, weights=NET_WEIGHTS)


def test_eight_jax_devices_take_the_same_step_as_one(on_replicas):
    """The same under JAX's DataParallel, on the small CNN (its batch norms as well); the
    EfficientNet's 8-device step is compiled and trained by the rehearsal in the same
    process, not compiled twice."""
    run = on_replicas("jax")
    assert_same_step(run.many, run.one)


@pytest.mark.parametrize("backend", ["jax", "tensorflow"])
def test_replicas_rehearse_fit_and_predict_a_submission(backend, on_replicas, demo_dir):
    """doctor rehearses the replicas and their global batch, then train and predict run on
    them, in the process that took the step above on another model, as a notebook's edited
    cells run (TensorFlow used to stop a second model's first step there: rehearsal.py keeps
    one strategy a process). train mixes every batch in the model, on the replicas (JAX: in
    the one program compiled for all 8 devices, each mixing its own share). JAX takes two
    steps per call; under tf.distribute Keras 3 cannot, so the trainer takes one, says so,
    and the run still works end to end. No validation: it is the pipeline predict runs."""
    layout, run = LAYOUTS[backend], on_replicas(backend)
    replicas, batch = layout.replicas, 32 // layout.replicas
    doctor, trained, predicted = run.said["doctor"], run.said["train"], run.said["predict"]
    assert f"backend: {backend}\nreplicas: {replicas}\n" in doctor
    assert f"global batch: 32 ({batch} per replica x {replicas})" in doctor
    assert f"replicas: {replicas}" in trained and layout.steps_shown in trained
    assert "  mix_probability = 1.0 (flag)\n" in trained and "model: " in trained
    assert "2/2" in trained and "loss: " in trained
    assert f"replicas: {replicas}" in predicted and "3/3" in predicted
    assert ids(run.folder / "submission.csv") == ids(demo_dir / "sample_submission.csv")


@pytest.fixture(scope="module")
def two_processes(demo_dir, tmp_path_factory):
    """Two JAX processes of one CPU device each, joined through a coordinator as TPU hosts
    are, run once, each command after the other as a notebook's cells run (tests/commands.py
    --keep-going; a process joins once, and its next command trains with the same peers):
    the step of tests/one_step.py; the demo's epoch trained together; then train run again,
    each process given its own --output-dir, where process 0 alone finds a checkpoint (of
    epoch 1); and once more where process 0 cannot write its output at all. Their folder,
    and each process's exit code and output, by command."""
    folder = tmp_path_factory.mktemp("two-processes")
    checkpoint = folder / "epochs" / "0" / "checkpoints"
    checkpoint.mkdir(parents=True)
    (checkpoint / "checkpoint.json").write_text(json.dumps({"epoch": 1, "history": {}}))
    (checkpoint / "checkpoint.weights.h5").write_bytes(b"")  # never read: the processes stop
    (folder / "problem").mkdir()
    (folder / "problem" / "0").write_text("")
    apart = ["--preset", "demo", "--data-dir", str(demo_dir), "--epochs", "2"]

    def arguments(i, joined):
        commands = {
            "step": ["tests.one_step", str(demo_dir), "2", str(folder / "step.npz")],
            "train": ["train", *together(demo_dir, folder)],
            "epochs": ["train", *apart, "--output-dir", str(folder / "epochs" / str(i))],
            "problem": ["train", *apart, "--output-dir", str(folder / "problem" / str(i))],
        }
        lines = [shlex.join([*command, *joined]) for command in commands.values()]
        return ["-m", "tests.commands", "--keep-going", *lines]

    codes, output = run_processes(start, arguments, logs=folder)
    assert codes == [2, 2], tails(output)  # the first failure's: train run again
    names = ("step", "train", "epochs", "problem")
    return folder, [dict(zip(names, ran(text), strict=True)) for text in output]


def together(demo_dir, folder) -> list[str]:
    """The demo's flags for one epoch of 4 steps, written into folder/out."""
    return [
        "--preset", "demo", "--data-dir", str(demo_dir), "--output-dir", str(folder / "out"),
        "--epochs", "1", "--steps-per-epoch", "4",
    ]  # fmt: skip


def test_two_jax_processes_take_the_same_step_as_one(two_processes, on_replicas):
    """Beyond one machine: two processes of one device each split the global batch between
    them and take one step as one device does (the reference: the 8-device process's)."""
    folder, said = two_processes
    assert [each["step"][0] for each in said] == [0, 0], tails([each["step"][1] for each in said])
    first, second = (np.load(folder / f"step-{i}.npz") for i in range(2))
    assert (int(first["replicas"]), int(first["processes"])) == (2, 2)
    assert_same_step(first, on_replicas("jax").one)
    for name in first.files:  # the processes hold one model, not two
        np.testing.assert_array_equal(second[name], first[name], err_msg=name)


def test_two_processes_train_one_epoch_of_the_demo_together(two_processes, demo_dir):
    """Two JAX processes on localhost train the demo's epoch as one model (TF_CONFIG and
    MultiWorkerMirroredStrategy cannot: Keras 3's fit fails under it, keras-team/keras#20585).
    Process 0 alone writes, and `predict` makes a submission from what it wrote."""
    folder, said = two_processes
    losses = []
    for code, text in (each["train"] for each in said):
        assert code == 0, text[-3000:]
        assert "backend: jax\nreplicas: 2\nprocesses: 2\n" in text
        assert "global batch: 64, training records: 1078\nsteps per epoch: 4\n" in text  # 32 x 2
        losses.append(re.search(r"4/4 - .* loss: ([0-9.]+)", text).group(1))
    assert losses[0] == losses[1]  # one computation over the global batch
    assert "weights: " in said[0]["train"][1] and "weights: " not in said[1]["train"][1]
    assert main(["predict", *together(demo_dir, folder)]) == 0  # any process reads what 0 wrote
    assert ids(folder / "out" / "submission.csv") == ids(demo_dir / "sample_submission.csv")


def test_processes_that_would_resume_from_different_epochs_stop_with_the_fix(two_processes):
    """Each process reads its own --output-dir: one that found a checkpoint and one that did
    not would wait on each other for ever, so both stop at once and say why."""
    _, said = two_processes
    for each in said:
        code, text = each["epochs"]
        assert code == 2, text
        assert "error: the processes found checkpoints of different epochs in" in text
        assert "([1, 0], by process); give every process the same shared " in text
        assert "Config.output_dir / --output-dir, or start over with --no-resume" in text


def test_a_problem_one_process_finds_stops_every_process(two_processes):
    """Process 0 cannot write its output: process 1 must not wait for it in the first step."""
    folder, said = two_processes
    (first, said_first), (second, said_second) = (each["problem"] for each in said)
    assert (first, second) == (2, 2), said_first + said_second
    where = folder / "problem" / "0" / "checkpoints"
    assert f"error: cannot write the output in {where}" in said_first
    assert "error: process 0 found problems (its output names them); fix them" in said_second


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
    run = start_run(cfg, on_accelerator=False)  # its data read
    files = records.find(run.places.in_data(cfg.train_files), "train_files")
    batch = 16  # global: 8 per process
    per_epoch = records.count(files) // batch  # one epoch, as plan.py counts it
    batches = pipeline.for_training(run.data, files, cfg, batch).take(per_epoch)
    return [int(label) for _, labels in batches for label in labels.numpy()]
