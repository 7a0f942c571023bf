"""Where files go and how: a folder the user names is a local path or a bucket's URL, never made a
pathlib.Path (Path("gs://B/x") is gs:/B/x), and every file is written whole or not at all, so a
crash, a full disk or a dropped connection mid-write keeps the previous version."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path

from ..errors import UserError, first_line, named
from .kaggle_inputs import ROOT

MANIFEST = "manifest.json"  # what `records` writes beside its shards: counts, folds, classes
METADATA_TABLE = "metadata.csv"  # `records --test-csv`'s: each image's metadata (data/metadata.py)
BLEND = "blend.json"  # beside `blend`'s submission: the runs, their weights and CVs
STACK = "stack.json"  # beside `stack`'s submission: the runs, the metadata columns, the CVs
FETCHED_FROM = "kaggle-notebook.json"  # beside `kaggle output`'s files: the notebook they are of
# What a run fits and keeps beside its weights for some configs only (fitted.py); a run that
# fits none removes an earlier run's, which its weights would not go with.
FITTED = {
    "grades": "grade_cuts.json", "thresholds": "thresholds.json", "metadata": "metadata.json",
    "standardized": "standardized.json",
}  # fmt: skip
# Image files `records` reads; an id may carry or drop them (t0.jpg and t0).
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff"}
DICOM_SUFFIXES = {".dcm", ".dicom"}  # read as DICOM even without its mark; ids may drop them too
NO_ROOM = (errno.ENOSPC, errno.EDQUOT)  # a full disk, or the user's quota spent
# Why a folder for files on this machine (demo-data's, kernel's) is not a bucket.
BUCKET_OUTPUT = (
    "a bucket: this command writes a folder on this machine; give one here, and copy it up "
    "after (`gcloud storage cp -r FOLDER gs://BUCKET/...`) if a bucket should hold it"
)
BUCKET_FIX = (
    "check the bucket's name, and that these credentials may write to it "
    "(`gcloud auth application-default login` on a laptop; on a TPU VM or in Colab, the "
    "account's Storage Object User role on the bucket)"
)


def is_url(path: Path | str) -> bool:
    return "://" in str(path)


def place(folder: Path | str) -> Path:
    """A path the user gave with pathlib's methods: for a URL, an etils.epath.Path."""
    if is_url(folder):
        from etils import epath  # installed with tensorflow-datasets, as Kaggle and Colab have it

        return epath.Path(str(folder))
    return Path(folder)


@contextlib.contextmanager
def written_whole(path: Path | str):
    """Yield a temporary beside `path` (a bucket's: here) that replaces it if the block finishes."""
    if is_url(path):  # a local temporary named as the object (Keras reads its suffix)
        with tempfile.TemporaryDirectory(prefix="upload-") as scratch:
            temporary = Path(scratch) / str(path).rsplit("/", 1)[-1]
            try:
                yield temporary
            except OSError as error:
                if error.errno not in NO_ROOM:
                    raise
                raise disk_full(temporary, bucket=str(path)) from error
            upload(temporary, str(path))
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(".tmp-" + path.name)  # same suffix: Keras checks it
    try:
        yield temporary
        os.replace(temporary, path)
    except OSError as error:
        if error.errno not in NO_ROOM:
            raise
        raise disk_full(path) from error
    finally:
        temporary.unlink(missing_ok=True)


def upload(local: Path, url: str) -> None:
    """A whole file copied up into a bucket: the object appears whole when the upload completes."""
    import tensorflow as tf

    try:
        tf.io.gfile.copy(str(local), url, overwrite=True)
    except tf.errors.OpError as error:
        raise UserError(f"cannot write {url} ({first_line(error)}); {BUCKET_FIX}") from None


def for_pandas(path: Path):
    """What pandas reads `path` from: the path, or an object's bytes (pandas would need gcsfs)."""
    return io.BytesIO(path.read_bytes()) if is_url(path) else path


@contextlib.contextmanager
def on_this_machine(folder: Path):
    """A local folder with `folder`'s files (a bucket's copied), for a library that reads no URL."""
    if not is_url(folder):
        yield str(folder)
        return
    import tensorflow as tf

    with tempfile.TemporaryDirectory(prefix="download-") as scratch:
        for path in folder.iterdir():
            if path.is_file():
                tf.io.gfile.copy(str(path), os.path.join(scratch, path.name))
        yield scratch


def disk_full(path: Path, needed: int = 0, bucket: str = "") -> UserError:
    """The error for a file the disk has no room for (bound for a bucket: `path` is a temporary)."""
    free = shutil.disk_usage(path.parent).free
    if bucket:
        return UserError(
            f"cannot write {bucket}: this machine's temporary folder {path.parent.parent} is full "
            f"({free:,} bytes free) and each file is written there before its upload; the object "
            "in the bucket is as it was. Free some space there, or set TMPDIR to a folder with room"
        )
    room = f"{free:,} bytes free" + (f", about {needed:,} needed" if needed else "")
    kept = f"; the {path.name} written before is kept" if path.exists() else ""
    return UserError(
        f"cannot write {path}: the disk is full ({room}){kept}; free some space there or "
        "write elsewhere, then run the same command again"
    )


def write_json(path: Path | str, value) -> None:
    with written_whole(path) as temporary:
        temporary.write_text(json.dumps(value, indent=2) + "\n")


def read_json(path: Path, fix: str):
    """A JSON file a hand may have changed, or the line that says it is not JSON and `fix`."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as error:  # bad bytes are ValueErrors too
        raise UserError(f"{path} is not readable JSON ({first_line(error)}); {fix}") from None


def unwritable(folder: Path | str, buckets: bool = False) -> str:
    """Why files cannot be written in `folder` (or the nearest existing folder above), or "";
    a bucket, where `buckets`, is tried with a write: nothing less tells what credentials allow."""
    if is_url(folder):
        return bucket_unwritable(str(folder)) if buckets else BUCKET_OUTPUT
    existing = Path(folder)
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing} is read-only here"
    return ""


# Bucket folders a write went through, as each check is a round trip; a refusal is asked again.
WRITTEN: set[str] = set()


def bucket_unwritable(folder: str) -> str:
    import tensorflow as tf

    if folder in WRITTEN:
        return ""
    probe = f"{folder.rstrip('/')}/.write-check-{uuid.uuid4().hex[:8]}"
    try:
        with tf.io.gfile.GFile(probe, "wb") as file:
            file.write(b"")
        tf.io.gfile.remove(probe)
    except tf.errors.OpError as error:
        return f"the bucket refuses a write ({first_line(error)}); {BUCKET_FIX}"
    WRITTEN.add(folder)
    return ""


def refuse_foreign(flag: str, folder: Path, command: str, foreign: list[str]) -> None:
    """Stop where `folder` holds files `command` did not write: writing there would change them."""
    if foreign:
        more = f", ... ({len(foreign)} in all)" if len(foreign) > 3 else ""
        raise UserError(
            f"{flag} {folder} holds files {command} did not write ({', '.join(foreign[:3])}"
            f"{more}); give an empty folder or a new one"
        )


def output_folder(path: Path | str, flag: str, buckets: bool = False) -> Path:
    """The folder a command writes into, once it is writable (a bucket only where `buckets`)."""
    if reason := unwritable(path, buckets):
        raise UserError(f"{flag} {path}: {reason}; give a folder to write into")
    return place(path)


@contextlib.contextmanager
def reaching(path: str):
    """A bucket that cannot be reached, as one line that says what to check."""
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
            f"the competition's files are already local under {ROOT}: set {named('data_dir')} there"
        ) from error
