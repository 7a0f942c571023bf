"""The versions a run runs with, in one line a log keeps: Kaggle's and Colab's images pin
few of them, so two runs can only be compared by what each printed."""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

# TensorFlow is installed under one of these names, the last on a TPU VM that drives the TPU.
TENSORFLOWS = ("tensorflow", "tensorflow-cpu", "tensorflow-tpu")


def of(package: str) -> str:
    """`package VERSION` as pip names it (tensorflow: the build installed), or `package
    absent`. Reads the installed packages' metadata: it imports nothing."""
    for name in TENSORFLOWS if package == "tensorflow" else (package,):
        try:
            return f"{name} {version(name)}"
        except PackageNotFoundError:
            continue
    return f"{package} absent"


def line(packages) -> str:
    """The packages' versions after python's: "python 3.12.1, keras 3.15.1, ..."."""
    return ", ".join([f"python {platform.python_version()}", *map(of, packages)])


def of_run(backend: str) -> str:
    """What a run's log names first: python, Keras on its backend, keras-hub, kagglehub."""
    keras, hub, kagglehub = of("keras"), of("keras-hub"), of("kagglehub")
    return f"python {platform.python_version()}, {keras} on {of(backend)}, {hub}, {kagglehub}"
