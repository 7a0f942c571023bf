"""The versions a run runs with, in one line a log keeps: Kaggle's and Colab's images pin
few of them, so two runs can only be compared by what each printed."""

from __future__ import annotations

import platform
import re
from importlib.metadata import PackageNotFoundError, version

from ..backbone_choices import BACKBONES, KERAS_HUB_FOR_KERAS
from .kaggle_inputs import in_notebook, in_scoring_rerun

# TensorFlow is installed under one of these names (tensorflow-tpu on a TPU VM that drives it).
TENSORFLOWS = ("tensorflow", "tensorflow-cpu", "tensorflow-tpu", "tensorflow-macos", "tf-nightly")


def of(package: str) -> str:
    """`package VERSION` as pip names it (tensorflow: the build installed), or `package absent`."""
    for name in TENSORFLOWS if package == "tensorflow" else (package,):
        try:
            return f"{name} {version(name)}"
        except PackageNotFoundError:
            continue
    return f"{package} absent"


def of_run(backend: str) -> str:
    """What a run's log names first: python, Keras on its backend, keras-hub, kagglehub."""
    keras, hub, kagglehub = of("keras"), of("keras-hub"), of("kagglehub")
    return f"python {platform.python_version()}, {keras} on {of(backend)}, {hub}, {kagglehub}"


def release(text: str) -> tuple[int, ...]:
    """A version's release numbers, to compare: "3.13.2rc1" -> (3, 13, 2)."""
    return tuple(int(re.match(r"\d*", part).group() or 0) for part in text.split(".")[:3])


def installed(package: str) -> str:
    """The installed version of `package` ("3.13.2"), or "" where it is absent."""
    found = of(package).removeprefix(f"{package} ")
    return "" if found == "absent" else found


def unbuildable(backbone: str, image: dict[str, str] | None = None) -> str:
    """Why the installed keras-hub or Keras (or an `image`'s) cannot build `backbone`, or ""."""
    choice = BACKBONES.get(backbone)
    if choice is None or not choice.keras_hub:
        return ""
    for package, needed in (("keras-hub", choice.keras_hub), ("keras", choice.keras)):
        found = image.get(package, "") if image is not None else installed(package)
        if not found:
            return f"{backbone} needs {package} {needed} or later; {package} is not installed"
        if release(found) < release(needed):
            return f"{backbone} needs {package} {needed} or later; {package} {found} is installed"
    return ""


def buildable(image: dict[str, str] | None = None) -> list[str]:
    """The backbones the installed keras-hub and Keras build (or an image's: unbuildable)."""
    return [name for name in BACKBONES if not unbuildable(name, image)]


def keras_hub_for(backbone: str, keras: str) -> str:
    """The newest keras-hub that builds `backbone` and installs beside Keras `keras` (never
    upgraded: Kaggle's and Colab's TensorFlow and JAX are built for theirs); "" if none."""
    if release(keras) < release(BACKBONES[backbone].keras):
        return ""
    fitting = [hub for need, hub in KERAS_HUB_FOR_KERAS.items() if release(keras) >= release(need)]
    newest = max(fitting, key=release, default="")
    return newest if newest and release(newest) >= release(BACKBONES[backbone].keras_hub) else ""


def refusal(backbone: str) -> str:
    """unbuildable's clause with what to do where this runs, as one line; empty where none."""
    why = unbuildable(backbone)
    if not why:
        return ""
    keras = installed("keras")
    hub = keras_hub_for(backbone, keras) if keras else ""
    if not hub:
        needed = BACKBONES[backbone].keras
        on = f"keras {keras}" if keras else "no Keras"
        return f"{why}; no keras-hub with it runs on {on}: install Keras {needed} or later"
    if in_scoring_rerun():
        return (
            f"{why}, and this rerun is offline: push keras-hub {hub} as wheels with `kaggle "
            "wheels`, then write the notebook again with `kernel`, which attaches them"
        )
    if in_notebook():
        return (
            f"{why}: the notebook's first cells install keras-hub {hub} with the internet on "
            "(Settings > Internet); turn it on and run the notebook from the top"
        )
    return f'{why}: pip install --no-deps "keras-hub=={hub}"'
