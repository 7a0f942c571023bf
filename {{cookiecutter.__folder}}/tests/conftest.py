"""Shared fixtures: a small demo competition, a short run of it and two runs ready to blend,
each made once a test session (by one pytest-xdist worker for all), and a one-step config."""

from __future__ import annotations

import collections
import dataclasses
import fcntl
import json
import os
import platform
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from {{ cookiecutter.package }}.runtime.platform import versions
from {{ cookiecutter.package }}.tools.demo import from_preset

PROJECT = Path(__file__).resolve().parents[1]
NO_ACCELERATOR = "no TPU or GPU on this machine"
# Run a command in a network namespace of its own, with only loopback: nothing it does can
# reach the internet (Jupyter kernels and the fake Kaggle server still talk over loopback).
OFFLINE = ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]
# What decides whether this suite passes, printed first: a fresh install gets the newest.
TESTED_WITH = ("tensorflow", "keras", "keras-hub", "jax", "kaggle", "kagglesdk", "kagglehub")
# Every process of the suite (and each one it starts) compiles with XLA's machine-code
# optimisation off: the same programs, compiled in less CPU (the suite, which compiles a step
# in nearly every test, takes about 15% less in all). A user's runs keep XLA's defaults.
QUICK_COMPILES = "--xla_backend_optimization_level=0"
os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {QUICK_COMPILES}".strip()


def pytest_report_header(config):
    return f"versions: python {platform.python_version()}, " + ", ".join(
        map(versions.of, TESTED_WITH)
    )


def made_once(tmp_path_factory, name: str, make) -> Path:
    """The folder `make(folder)` fills, made once a session: under pytest-xdist by the first
    worker that asks, while the others wait for it. Read it; copy it to change it."""
    root = tmp_path_factory.getbasetemp()  # this session's own folder
    if "PYTEST_XDIST_WORKER" in os.environ:
        root = root.parent  # the session's: every worker's own folder lies in it
    folder, made = root / name, root / f"{name}.made"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not made.exists():
            shutil.rmtree(folder, ignore_errors=True)  # left half-made by a worker that failed
            make(folder)
            made.touch()
    return folder


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory):
    from {{ cookiecutter.package }}.tools.demo import write_competition

    return made_once(tmp_path_factory, "demo", lambda folder: write_competition(folder, size=32))


@pytest.fixture(scope="session")
def trained_demo(demo_dir, tmp_path_factory):
    """The demo trained for one epoch of two steps (checkpoint, weights and what made them),
    made once a session: copy it to change it or to run a command on it."""
    from {{ cookiecutter.package }}.runtime.stages.train import train

    def trained(folder: Path) -> None:
        train(demo_config(demo_dir, folder))

    return made_once(tmp_path_factory, "trained-demo", trained)


def demo_config(demo_dir: Path, output: Path):
    """The demo preset cut to one epoch of two steps, reading demo_dir, writing into output."""
    cfg, _ = from_preset("demo", {"data_dir": str(demo_dir), "output_dir": str(output)})
    cfg.epochs, cfg.steps_per_epoch = 1, 2
    return cfg


@pytest.fixture(scope="session")
def preset(tmp_path_factory):
    """preset(backbone): the folder of a small keras-hub preset of that backbone's class
    (tests/presets.py), made once per session; give it as Config.weights. A backbone the
    installed keras-hub or Keras cannot build skips the test, saying why (on the newest
    packages none does; on an image's older keras-hub, `train` refuses it instead)."""
    from presets import save

    made = {}

    def folder(backbone: str) -> str:
        lacking = versions.unbuildable(backbone)
        if lacking:
            pytest.skip(f"a backbone the installed packages cannot build: {lacking}")
        if backbone not in made:
            made[backbone] = save(backbone, str(tmp_path_factory.mktemp(backbone)))
        return made[backbone]

    return folder


# The blendable runs' image sizes, their TTA and their seeds: another seed keeps the folds.
SIZES_AND_FLIPS = ((32, "none", 42), (40, "flip", 7))


@dataclasses.dataclass(frozen=True)
class Blendable:
    data: Path  # a competition of images and a CSV (test_competitions.competition)
    runs: list[Path]  # runs of it, each trained `--fold all` and predicted


@pytest.fixture(scope="session")
def blendable(tmp_path_factory) -> Blendable:
    """Two runs ready to blend, made once: the same folds of one competition, trained at
    32 px and at 40 px (predicted with flips) with other seeds; read them, copy them to
    change them."""
    from builders import competition

    from {{ cookiecutter.package }}.runtime.config import Config
    from {{ cookiecutter.package }}.runtime.stages.predict import predict
    from {{ cookiecutter.package }}.runtime.stages.train import train

    def runs(root: Path) -> None:
        labels = [name for name in ("0", "1", "2") for _ in range(12)]
        data = competition(root / "data", labels, ["image_id", "label"], ["image_id", "label"])
        for size, tta, seed in SIZES_AND_FLIPS:
            run = Config(
                data_dir=str(data), output_dir=str(root / f"cnn{size}"), fold="all", folds=2,
                image_size=size, backbone="small-cnn", weights="none", batch_size=8, epochs=2,
                steps_per_epoch=3, learning_rate=1e-2, warmup_epochs=0, tta=tta, seed=seed,
            )  # fmt: skip
            train(run)
            predict(run)

    root = made_once(tmp_path_factory, "blendable", runs)
    return Blendable(root / "data", [root / f"cnn{size}" for size, *_ in SIZES_AND_FLIPS])


@pytest.fixture
def demo_cfg(demo_dir, tmp_path):
    """The demo preset cut to one tiny epoch, writing into this test's own folder."""
    return demo_config(demo_dir, tmp_path / "output")


def answer_ctrl_c() -> None:
    """Ctrl-C as a terminal delivers it: a suite started in the background by a shell (`make
    test &`, a CI runner) ignores SIGINT, and its children would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args, backend="tensorflow", log=None, warm=True) -> subprocess.Popen | Warm:
    """`python ARGS...` in the project folder, in a fresh process with the given Keras backend.

    Fresh processes, because the backend and the device count are fixed at start-up: forked
    from a warm interpreter of that backend (tests/warm.py) where one serves and the
    variables read at import are its own, else started from nothing (always with
    `warm=False`, for a test of what starting prints). With `log` (a path), stdout and stderr
    go to that file: processes that wait on each other must never block on a full pipe that
    nobody reads.
    """
    env = {**os.environ, "KERAS_BACKEND": backend, "TF_CPP_MIN_LOG_LEVEL": "2"}
    if not backend:  # the backend the hardware calls for, as a user's run chooses it
        del env["KERAS_BACKEND"]
    served = warm and backend and WARM.serving(backend, env)
    if served:
        try:
            return Warm(served, args, env, log)
        except OSError:  # it has ended (with the worker that started it): start afresh
            pass
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


class WarmInterpreters:
    """The session's warm interpreters (tests/warm.py), one a backend, shared by its pytest-xdist
    workers through a socket in the session's folder: started by the first worker that asks,
    ready some seconds later; until then, and after the worker that started one ends, its
    commands start afresh."""

    def __init__(self):
        self.root: Path | None = None  # the session's folder, set by the fixture below
        self.started: dict[str, subprocess.Popen] = {}

    def serving(self, backend: str, env: dict) -> Path | None:
        """The socket of the backend's warm interpreter, if it runs with env's import-time
        variables; waits while it starts."""
        import warm

        if self.root is None:
            return None
        path = self.root / f"warm-{backend}.sock"
        with open(self.root / f"warm-{backend}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            settings = self.root / f"warm-{backend}.json"
            if not settings.exists():
                settings.write_text(json.dumps(warm.import_time(env)))
                self.started[backend] = subprocess.Popen(
                    [sys.executable, str(PROJECT / "tests" / "warm.py"), str(path)],
                    cwd=PROJECT, env=env, stdin=subprocess.DEVNULL,
                    stdout=open(self.root / f"warm-{backend}.log", "w"),  # noqa: SIM115
                    stderr=subprocess.STDOUT,
                )  # fmt: skip
        if json.loads(settings.read_text()) != warm.import_time(env):
            return None
        deadline = time.monotonic() + 120
        while not path.exists() and time.monotonic() < deadline:
            if backend in self.started and self.started[backend].poll() is not None:
                return None  # it failed to start: warm.log says why
            time.sleep(0.1)
        return path if path.exists() else None


WARM = WarmInterpreters()


@pytest.fixture(scope="session", autouse=True)
def warm_interpreters(tmp_path_factory):
    root = tmp_path_factory.getbasetemp()
    WARM.root = root.parent if "PYTEST_XDIST_WORKER" in os.environ else root
    yield WARM
    for process in WARM.started.values():
        process.kill()
        process.wait()


class Warm:
    """A command forked from a warm interpreter: what the tests use of subprocess.Popen."""

    def __init__(self, path: Path, args, env: dict, log=None):
        self.args, self.returncode = [sys.executable, *args], None
        self.connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.connection.connect(str(path))
        # Output to files, read once it has ended: no pipe to fill while nobody reads it.
        self.out = open(log, "w+") if log else tempfile.TemporaryFile("w+")  # noqa: SIM115
        self.err = self.out if log else tempfile.TemporaryFile("w+")  # noqa: SIM115
        with open(os.devnull) as nothing:
            fds = [nothing.fileno(), self.out.fileno(), self.err.fileno()]
            socket.send_fds(self.connection, [b"!"], fds)
        request = {"args": list(args), "env": env, "cwd": str(PROJECT)}
        self.connection.sendall(json.dumps(request).encode() + b"\n")
        self.replies = b""  # the pid's line, then the wait status's
        self.pid = int(self.reply(None))

    def reply(self, timeout) -> bytes:
        """The next line from the warm interpreter, waiting up to `timeout` seconds."""
        while b"\n" not in self.replies:
            if not select.select([self.connection], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout)
            received = self.connection.recv(64)
            if not received:  # the fork that waits on the command was killed before it ended
                raise OSError(f"nothing waits on {self.args} any more")
            self.replies += received
        line, _, self.replies = self.replies.partition(b"\n")
        return line

    def wait(self, timeout=None) -> int:
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(int(self.reply(timeout)))
            self.connection.close()
        return self.returncode

    def poll(self) -> int | None:
        try:
            return self.wait(0)
        except subprocess.TimeoutExpired:
            return None

    def communicate(self, timeout=None) -> tuple[str, str]:
        self.wait(timeout)
        said = []
        for file in (self.out, self.err):
            file.seek(0)
            said.append(file.read())
        return said[0], said[1]

    def send_signal(self, sig) -> None:
        if self.returncode is None:  # else its pid may be another process's by now
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


@pytest.fixture
def start_python():
    return start


@pytest.fixture(scope="session")
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
    """Tests marked `accelerator` skip on a machine without one (a laptop, CI), saying so.
    The files with the most slow tests run first, then those with the most tests that are
    not quick (they train or run a command in the suite's process), the quick ones last:
    pytest-xdist hands out whole files (`--dist loadfile`) in this order when told to keep
    it (`--no-loadscope-reorder`; it otherwise puts the files with the most tests first), and
    a long file started last would leave the other workers idle."""
    needing = [item for item in items if "accelerator" in item.keywords]
    if needing and not accelerator_here():
        for item in needing:
            item.add_marker(pytest.mark.skip(reason=NO_ACCELERATOR))
    slow = collections.Counter(item.path for item in items if "slow" in item.keywords)
    heavy = collections.Counter(item.path for item in items if "quick" not in item.keywords)
    # Stable: each file's own order stays.
    items.sort(key=lambda item: (-slow[item.path], -heavy[item.path]))
