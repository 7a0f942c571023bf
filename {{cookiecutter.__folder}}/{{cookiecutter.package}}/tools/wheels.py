"""`kaggle wheels` (kaggle_api.py pushes them): what the chosen backbone needs beyond Kaggle's
image, as wheels in a private Kaggle dataset that `kernel` attaches to its notebooks, which install
them with `pip install --no-index` (as competitors ship packages to a code competition's rerun,
where the internet is off and pip can reach no index).

What the image carries is platforms/kaggle-gpu.txt (notebook.image_packages; Kaggle's TPU image
carries the same Keras and keras-hub). What it lacks is a keras-hub that builds the backbone and
runs on the image's Keras (versions.keras_hub_for): never a Keras, whose TensorFlow and JAX the
image built for its own. The wheels are those of the image's Python and platform, downloaded here
with pip, into wheels/ beside where the command runs (as kernel/ is), with a requirements.txt that
says what they are."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..runtime.errors import UserError
from ..runtime.platform import versions
from . import notebook

ON_KAGGLE = "Kaggle's image (platforms/kaggle-gpu.txt)"
FOLDER = "wheels"  # where `kaggle wheels` writes and `kernel` looks, beside kernel/
REQUIREMENTS = "requirements.txt"  # what the folder's wheels are, as pip reads it
# Kaggle's images run on x86-64 Linux; pip takes a wheel of any of these tags, or a pure one.
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux2014_x86_64")
SCRATCH = ".download-"  # a download under way, inside the folder: ours, removed when done


def lacked(backbones: list[str]) -> dict[str, str]:
    """What Kaggle's image lacks to build `backbones`, as pip's requirements ("keras-hub==0.29.1")
    with why; empty where it builds them all. One no keras-hub builds there is refused."""
    image = notebook.image_packages()
    needed = {}
    for name in backbones:
        why = versions.unbuildable(name, image)
        if not why:
            continue
        hub = versions.keras_hub_for(name, image.get("keras", "0"))
        if not hub:
            raise UserError(
                f"on {ON_KAGGLE}, {why}, and no keras-hub with {name} runs on its Keras"
            )
        needed.setdefault(f"keras-hub=={hub}", f"on {ON_KAGGLE}, {why}")
    return needed


def wheel_of(requirement: str, folder: Path) -> Path | None:
    """The wheel of "name==version" in the folder, as pip names its files; None if none."""
    name, _, version = requirement.partition("==")
    return min(folder.glob(f"{name.replace('-', '_')}-{version}-*.whl"), default=None)


def listed(folder: Path) -> list[str]:
    """The requirements a folder `kaggle wheels` wrote holds wheels of; [] for any other."""
    path = folder / REQUIREMENTS
    lines = path.read_text().splitlines() if path.is_file() else []
    return [line.strip() for line in lines if "==" in line]


def holds(needed: list[str], folder: Path = Path(FOLDER)) -> bool:
    """Whether the folder holds a wheel of each requirement needed, as `kaggle wheels` wrote
    them (pushed or not: the dataset's metadata says that)."""
    held = listed(folder)
    return all(need in held and wheel_of(need, folder) for need in needed)


def ours(folder: Path, kept: tuple[str, ...] = ()) -> list[Path]:
    """What in the folder `kaggle wheels` wrote (the wheels its requirements.txt lists, that file,
    the files named in `kept`: the dataset's metadata; a download cut short); anything else is
    refused, naming it: the folder goes to Kaggle whole, and no file of another's is deleted."""
    if not folder.exists():
        return []
    if not folder.is_dir():
        raise UserError(f"{folder} is a file, where `kaggle wheels` writes its folder: move it")
    written = {folder / REQUIREMENTS, *(folder / name for name in kept)}
    written |= {wheel_of(need, folder) for need in listed(folder)} - {None}
    for path in sorted(folder.iterdir()):
        if path not in written and not path.name.startswith(SCRATCH):
            raise UserError(
                f"{path} is in {folder}/, which `kaggle wheels` pushes whole, and it did not "
                "write it: move it out, then run `kaggle wheels` again"
            )
    return sorted(folder.iterdir())


def download(needed: list[str], folder: Path, kept: tuple[str, ...] = ()) -> list[Path]:
    """The wheels of `needed` for the image's Python and platform, without their dependencies (the
    image has them), into the folder in place of those it held (ours'); its requirements.txt lists
    them. pip's own index settings are followed (PIP_INDEX_URL, PIP_FIND_LINKS)."""
    before = ours(folder, kept)
    folder.mkdir(parents=True, exist_ok=True)
    python = notebook.image_python()
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
    command += ["--only-binary=:all:", "--python-version", python, "--implementation", "cp"]
    command += [f"--platform={platform}" for platform in PLATFORMS]
    # Fetched beside the folder's files, then moved in: a failed or cut-short download leaves
    # the wheels pushed before as they were.
    with tempfile.TemporaryDirectory(dir=folder, prefix=SCRATCH) as scratch:
        done = subprocess.run(
            [*command, "--dest", scratch, *needed], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            said = (done.stderr.strip().splitlines() or [""])[-1]  # pip's ERROR: line
            raise UserError(
                f"pip could not download {', '.join(needed)} for Python {python} on "
                f"{PLATFORMS[0]} ({said or f'exit {done.returncode}'}); check that pip reaches "
                "its index (the network, PIP_INDEX_URL), then run `kaggle wheels` again"
            )
        for path in before:  # what the folder held for an earlier push
            if path.suffix == ".whl":
                path.unlink()
            elif path.name.startswith(SCRATCH) and path.is_dir():
                shutil.rmtree(path)
        wheels = [Path(shutil.move(path, folder)) for path in sorted(Path(scratch).iterdir())]
    (folder / REQUIREMENTS).write_text("".join(f"{need}\n" for need in needed))
    return wheels
