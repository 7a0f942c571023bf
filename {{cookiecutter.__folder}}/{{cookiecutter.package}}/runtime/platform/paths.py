"""A run's places, found once where a command starts (`find`) and handed down with its run: the
data folder, each field's file, the output folder and the trained run. A Kaggle input a field
names (`kaggle:...`) is found when read: one not read may be absent."""

from __future__ import annotations

import dataclasses
import glob
import os
import re
from pathlib import Path

from ..config import FILE_FIELDS, LABEL_FILES, Config, Sources, came_from, given_fields
from ..errors import UserError, named
from . import kaggle_inputs
from .files import place

# Module constants, so that tests can point them elsewhere.
KAGGLE_INPUT = kaggle_inputs.ROOT
KAGGLE_WORKING = kaggle_inputs.WORKING
PLACED = (*FILE_FIELDS, "test_csv", *LABEL_FILES)  # the fields naming a file, pattern or folder


@dataclasses.dataclass(frozen=True)
class Places:
    """Where a run's files are, by field: "" for an empty one, None with no data folder found."""

    data_from: str  # or why the data folder was not found
    found: dict[str, str | None]  # by field: data_dir, each of PLACED, output_dir, trained_dir

    def file(self, name: str) -> str:
        """The file, pattern or folder a field names, as found; a Kaggle input where mounted."""
        if self.found[name] is None:
            raise UserError(self.data_from)
        return local(self.found[name])

    @property
    def data(self) -> str:
        return self.file("data_dir")

    @property
    def output(self) -> Path:
        return place(self.file("output_dir"))

    @property
    def trained(self) -> Path:
        return place(self.file("trained_dir"))

    def in_data(self, pattern: str) -> str:
        return under(self.data, pattern)

    def describe(self) -> str:
        """Every place given, one a line, as doctor shows them."""
        lines = ["places:"]
        for name, value in self.found.items():
            try:
                lines += [f"  {name}: {self.file(name)}"] if value != "" else []
            except UserError as error:
                lines.append(f"  {name}: not found: {error}")
        return "\n".join(lines)


def find(cfg: Config, sources: Sources) -> Places:
    """Every place of a run, found now; `sources`, where each of its values came from."""
    try:
        data, data_from = data_folder(cfg, sources)
    except UserError as error:
        data, data_from = None, str(error)
    found = {"data_dir": data}
    typed = given_fields(cfg, sources, typed=True)
    for name in PLACED:
        value = getattr(cfg, name)
        lost = data is None and value and not value.startswith(kaggle_inputs.PREFIX)
        found[name] = None if lost else value and field_path(cfg, name, data, typed)
    working = KAGGLE_WORKING if kaggle_inputs.in_notebook() else "output"
    found["output_dir"] = cfg.output_dir or str(working)
    found["trained_dir"] = cfg.trained_dir or found["output_dir"]
    return Places(data_from, found)


def data_folder(cfg: Config, sources: Sources) -> tuple[str, str]:
    """The data folder and where it came from: the field, $DATA_DIR, Kaggle's input, else data/."""
    if cfg.data_dir.startswith(kaggle_inputs.PREFIX):
        found = kaggle_inputs.find(cfg.data_dir, KAGGLE_INPUT)
        return found.folder, f"{came_from(cfg, sources, 'data_dir')} {cfg.data_dir}, {found.how}"
    if cfg.data_dir:
        return cfg.data_dir, came_from(cfg, sources, "data_dir")
    if os.environ.get("DATA_DIR"):
        return os.environ["DATA_DIR"], "$DATA_DIR"
    competition = f"{kaggle_inputs.PREFIX}competitions/{cfg.competition}"
    if kaggle_inputs.in_notebook():  # attached, or an error that lists what is
        found = kaggle_inputs.find(competition, KAGGLE_INPUT)
        return found.folder, f"the competition {cfg.competition}, {found.how}"
    for folder in kaggle_inputs.layouts("competitions", cfg.competition, KAGGLE_INPUT):
        if folder.is_dir():
            return str(folder), "Kaggle input"
    return "data", f"default: no {named('data_dir')}, $DATA_DIR or {KAGGLE_INPUT / cfg.competition}"


def local(value: str) -> str:
    """A path field's value as a local path: a Kaggle input (`kaggle:...`) where it is mounted."""
    if value.startswith(kaggle_inputs.PREFIX):
        return kaggle_inputs.find(value, KAGGLE_INPUT).folder
    return value


def field_path(cfg: Config, name: str, folder: str, typed: frozenset[str]) -> str:
    """A field's path: in the data folder, or as `typed` unless it matches only there."""
    value = getattr(cfg, name)
    if value.startswith(kaggle_inputs.PREFIX):  # an attached input: found where it is read
        return value
    if name not in typed:
        return under(folder, at_image_size(cfg, value, folder))
    there = instead_in(folder, value)
    return there if there and not matches(value) and matches(there) else value


def under(folder: str, pattern: str) -> str:
    """Comma-separated patterns under the data folder; absolute paths and URLs stand as they are."""
    if "," in pattern:
        return ",".join(under(folder, part) for part in pattern.split(","))
    if pattern.startswith("/") or "://" in pattern or folder.startswith("tfds:"):
        return pattern  # a TFDS set has no folder: other files stand where they are
    return os.path.join(folder, pattern)


def instead_in(folder: str, pattern: str) -> str:
    """A relative pattern the user gave, read in the local data folder instead of where they run;
    "" for an absolute path, a URL, a bucket or TFDS set, or a data folder that is their own."""
    if not pattern or any(part.startswith("/") or "://" in part for part in pattern.split(",")):
        return ""
    if "://" in folder or folder.startswith("tfds:") or os.path.abspath(folder) == os.getcwd():
        return ""
    return ",".join(os.path.join(folder, part) for part in pattern.split(","))


# A folder named by its images' size (Kaggle's flowers ship tfrecords-jpeg-192x192 to -512x512).
SIZED_FOLDER = re.compile(r"^(?P<stem>.*-)(?P<size>\d+)x(?P=size)$")


def at_image_size(cfg: Config, pattern: str, folder: str) -> str:
    """A default pattern in a sized folder, moved to the smallest size the data folder holds at or
    above Config.image_size (else the largest): the pipeline then decodes and resizes the least."""
    first, _, rest = pattern.partition("/")
    named = SIZED_FOLDER.match(first)
    if not named or not rest or not os.path.isdir(folder):  # most patterns: nothing to look for
        return pattern
    stem = named["stem"]
    folders = glob.glob(os.path.join(glob.escape(folder), glob.escape(stem) + "*"))
    sized = [SIZED_FOLDER.match(os.path.basename(path)) for path in folders if os.path.isdir(path)]
    sizes = [int(there["size"]) for there in sized if there and there["stem"] == stem]
    if not sizes:
        return pattern
    size = min([s for s in sizes if s >= cfg.image_size] or [max(sizes)])
    return f"{stem}{size}x{size}/{rest}"


def matches(pattern: str) -> bool:
    return any(glob.glob(part) for part in pattern.split(","))
