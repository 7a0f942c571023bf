"""The versions a run runs with, in one line a log keeps: Kaggle's and Colab's images pin
few of them, so two runs can only be compared by what each printed."""

from __future__ import annotations

import platform
import re
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


def release(text: str) -> tuple[int, ...]:
    """A version's release numbers, to compare: "0.29.1" -> (0, 29, 1); "3.13.2rc1" ->
    (3, 13, 2)."""
    return tuple(int(re.match(r"\d*", part).group() or 0) for part in text.split(".")[:3])


def unbuildable(backbone: str) -> str:
    """Why the installed keras-hub or Keras cannot build `backbone`, in one clause ("swin-tiny
    needs keras-hub 0.29.1 or later; keras-hub 0.26.0 is installed"); empty where they can, or
    where the backbone needs no keras-hub (small-cnn) or is not offered (reported on its own)."""
    from ..backbone_choices import BACKBONES

    choice = BACKBONES.get(backbone)
    if choice is None or not choice.keras_hub:
        return ""
    for package, needed in (("keras-hub", choice.keras_hub), ("keras", choice.keras)):
        installed = of(package).removeprefix(f"{package} ")
        if installed == "absent":
            return f"{backbone} needs {package} {needed} or later; {package} is not installed"
        if release(installed) < release(needed):
            return (
                f"{backbone} needs {package} {needed} or later; {package} {installed} is installed"
            )
    return ""
