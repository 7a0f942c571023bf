"""Shared fixtures: one small demo competition per test session, and a one-step config."""

import dataclasses
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from {{ cookiecutter.package }}.runtime.config import from_preset
from {{ cookiecutter.package }}.runtime.platform import versions

PROJECT = Path(__file__).resolve().parents[1]
NO_ACCELERATOR = "no TPU or GPU on this machine"
# Run a command in a network namespace of its own, with only loopback: nothing it does can
# reach the internet (Jupyter kernels and the fake Kaggle server still talk over loopback).
OFFLINE = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
# What decides whether this suite passes, printed first: a fresh install gets the newest.
TESTED_WITH = ("tensorflow", "keras", "keras-hub", "jax", "kaggle", "kagglesdk", "kagglehub")


def pytest_report_header(config):
    return "versions: " + versions.line(TESTED_WITH)


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory):
    from {{ cookiecutter.package }}.tools.demo import write_competition

    folder = tmp_path_factory.mktemp("demo")
    write_competition(folder, size=32)
    return folder


@pytest.fixture(scope="session")
def preset(tmp_path_factory):
    """preset(backbone): the folder of a small keras-hub preset of that backbone's class
    (tests/presets.py), made once per session; give it as Config.weights."""
    from presets import save

    made = {}

    def folder(backbone: str) -> str:
        if backbone not in made:
            made[backbone] = save(backbone, str(tmp_path_factory.mktemp(backbone)))
        return made[backbone]

    return folder


@dataclasses.dataclass(frozen=True)
class Blendable:
    data: Path  # a competition of images and a CSV (test_competitions.competition)
    runs: list[Path]  # runs of it, each trained `--fold all` and predicted


@pytest.fixture(scope="session")
def blendable(tmp_path_factory) -> Blendable:
    """Two runs ready to blend, made once: the same folds of one competition, trained at
    32 px and at 40 px (predicted with flips); read them, copy them to change them."""
    from builders import competition

    from {{ cookiecutter.package }}.runtime.config import Config
    from {{ cookiecutter.package }}.runtime.stages.predict import predict
    from {{ cookiecutter.package }}.runtime.stages.train import train

    root = tmp_path_factory.mktemp("blendable")
    labels = [name for name in ("0", "1", "2") for _ in range(12)]
    data = competition(root / "data", labels, ["image_id", "label"], ["image_id", "label"])
    runs = []
    for size, tta in ((32, False), (40, True)):
        run = Config(
            data_dir=str(data), output_dir=str(root / f"cnn{size}"), fold="all", folds=3,
            image_size=size, backbone="small-cnn", weights="none", batch_size=8, epochs=2,
            steps_per_epoch=3, learning_rate=1e-2, warmup_epochs=0, tta=tta,
        )  # fmt: skip
        train(run)
        predict(run)
        runs.append(root / f"cnn{size}")
    return Blendable(data, runs)


@pytest.fixture
def demo_cfg(demo_dir, tmp_path):
    """The demo preset cut to one tiny epoch, writing into this test's own folder."""
    cfg = from_preset("demo")
    return dataclasses.replace(
        cfg,
        data_dir=str(demo_dir),
        output_dir=str(tmp_path / "output"),
        epochs=1,
        steps_per_epoch=2,
    )


def answer_ctrl_c() -> None:
    """Ctrl-C as a terminal delivers it: a suite started in the background by a shell (`make
    test &`, a CI runner) ignores SIGINT, and its children would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args, backend="tensorflow", log=None) -> subprocess.Popen:
    """`python ARGS...` in the project folder, in a fresh process with the given Keras backend.

    Fresh processes, because the backend and the device count are fixed at start-up. With
    `log` (a path), stdout and stderr go to that file: processes that wait on each other must
    never block on a full pipe that nobody reads.
    """
    env = {**os.environ, "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "2"}
    if not backend:  # the backend the hardware calls for, as a user's run chooses it
        del env["KERAS_BACKEND"]
    out = open(log, "w") if log else subprocess.PIPE  # noqa: SIM115 - the child holds it
    try:
        return subprocess.Popen(
            [sys.executable, *args],
            cwd=PROJECT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT if log else subprocess.PIPE,
            text=True,
            preexec_fn=answer_ctrl_c,  # noqa: PLW1509 - one signal call before exec, no locks
        )
    finally:
        if log:
            out.close()  # the child has its own copy


@pytest.fixture
def start_python():
    return start


@pytest.fixture
def run_python():
    """Like start_python, and waits: the result has returncode, stdout and stderr."""

    def run(*args, backend="tensorflow", timeout=300) -> subprocess.CompletedProcess:
        process = start(*args, backend=backend)
        try:
            out, err = process.communicate(timeout=timeout)
        finally:
            process.kill()
        return subprocess.CompletedProcess(process.args, process.returncode, out, err)

    return run


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def no_model(monkeypatch):
    """Fail the test if a command gets as far as building its model."""
    from {{ cookiecutter.package }}.runtime.learning import model

    def built(*args, **kwargs):
        raise AssertionError("the model was built: the check came too late")

    monkeypatch.setattr(model, "build_model", built)


def accelerator_here() -> bool:
    """Whether this machine has a TPU or a GPU that TensorFlow or JAX can drive."""
    import tensorflow as tf

    if tf.config.list_physical_devices("GPU") or tf.config.list_physical_devices("TPU"):
        return True
    try:
        import jax
    except ImportError:
        return False
    return jax.default_backend() in ("gpu", "tpu")


def pytest_collection_modifyitems(config, items):
    """Tests marked `accelerator` skip on a machine without one (a laptop, CI), saying so."""
    needing = [item for item in items if "accelerator" in item.keywords]
    if needing and not accelerator_here():
        for item in needing:
            item.add_marker(pytest.mark.skip(reason=NO_ACCELERATOR))
