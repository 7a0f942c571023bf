"""Where a run reads and writes: the data folder (a flag, $DATA_DIR, Kaggle's input, else
data/), the file a field names in it, and the output folder (a flag, Kaggle's working folder,
else output/)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .config import Config, UserError, first_line, named, typed

# Kaggle mounts competition data here, and keeps what a notebook writes here (submission.csv
# among it); module constants so tests can point them elsewhere.
KAGGLE_INPUT = Path("/kaggle/input")
KAGGLE_WORKING = Path("/kaggle/working")


def on_kaggle() -> bool:
    return bool(os.environ.get("KAGGLE_KERNEL_RUN_TYPE"))  # set in every Kaggle notebook


def resolve_data_dir(cfg: Config) -> tuple[str, str]:
    """The data folder and where it came from: the field, $DATA_DIR, Kaggle's input, else data/."""
    if cfg.data_dir:
        return cfg.data_dir, "Config.data_dir"
    if os.environ.get("DATA_DIR"):
        return os.environ["DATA_DIR"], "$DATA_DIR"
    kaggle = KAGGLE_INPUT / cfg.competition
    if kaggle.is_dir():
        return str(kaggle), "Kaggle input"
    return "data", f"default: no {named('data_dir')}, $DATA_DIR or {kaggle}"


def data_path(cfg: Config, pattern: str) -> str:
    """A file pattern under the data folder; absolute paths and gs:// URLs stand as they are.
    Several patterns are separated by commas."""
    if "," in pattern:
        return ",".join(data_path(cfg, part) for part in pattern.split(","))
    folder = resolve_data_dir(cfg)[0]
    if pattern.startswith("/") or "://" in pattern or folder.startswith("tfds:"):
        return pattern  # a TFDS set has no folder: other files stand where they are
    return os.path.join(folder, pattern)


def field_path(cfg: Config, name: str) -> str:
    """The path (or pattern) a file field names: as given when the user gave it, as every
    command-line tool reads a path; a default, a preset's or the manifest's, in the data folder."""
    value = getattr(cfg, name)
    return value if typed(cfg, name) else data_path(cfg, value)


def output_dir(cfg: Config) -> Path:
    """Where a run writes: the field, else /kaggle/working in a Kaggle notebook (Kaggle keeps
    that folder and looks there for submission.csv), else output/."""
    if cfg.output_dir:
        return Path(cfg.output_dir)
    return KAGGLE_WORKING if on_kaggle() else Path("output")


def output_path(cfg: Config, name: str) -> Path:
    return output_dir(cfg) / name


@contextlib.contextmanager
def reaching(path: str):
    """A bucket that cannot be reached (no network, no credentials, no such bucket) as one
    line that says what to check; TensorFlow's error says only that a request failed."""
    import tensorflow as tf  # loaded already by whoever reads the path

    try:
        yield
    except tf.errors.OpError as error:
        if "://" not in path:
            raise
        bucket = "/".join(path.split("/")[:3])
        raise UserError(
            f"cannot reach {bucket} from this machine ({first_line(error)}); check the network, "
            "the Google Cloud credentials (`gcloud auth application-default login`, or a Kaggle "
            "notebook's Add-ons > Google Cloud SDK) and the bucket's name. In a Kaggle notebook "
            f"the competition's files are already local under {KAGGLE_INPUT}: set "
            f"{named('data_dir')} there"
        ) from error
