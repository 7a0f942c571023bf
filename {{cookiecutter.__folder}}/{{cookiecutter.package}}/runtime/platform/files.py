"""Files written whole or not at all: a crash or a full disk mid-write keeps the previous
version; and one run at a time in a folder."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import sys
from pathlib import Path

from ..errors import UserError

MANIFEST = "manifest.json"  # what `records` writes beside its shards: counts, folds, classes
# What `blend` writes beside the blended submission: the runs, their weights and CVs.
BLEND = "blend.json"
# Beside a notebook's output fetched with `kaggle output`: the notebook it came from.
FETCHED_FROM = "kaggle-notebook.json"
# Image files `records` reads, and the extensions an id may carry or drop between the records
# and a sample submission (t0.jpg and t0).
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff"}
NO_ROOM = (errno.ENOSPC, errno.EDQUOT)  # a full disk, or the user's quota spent
# Why a folder to write may not be a bucket: a Path of gs://B/x is gs:/B/x, a local folder
# named `gs:` (deleted with a TPU VM). Records and CSVs are read from gs://; runs are not
# written there yet.
BUCKET_OUTPUT = (
    "a bucket: runs are written to a folder on this machine (gs:// is read, not written); "
    "copy the folder up after the run (`gcloud storage cp -r FOLDER gs://BUCKET/...`), or "
    "down before a command reads it"
)


@contextlib.contextmanager
def written_whole(path: Path | str):
    """Yield a temporary path beside `path`; it replaces `path` only if the block finishes."""
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


def disk_full(path: Path, needed: int = 0) -> UserError:
    """The error for a file the disk has no room for; the previous version is kept."""
    free = shutil.disk_usage(path.parent).free
    room = f"{free:,} bytes free" + (f", about {needed:,} needed" if needed else "")
    kept = f"; the {path.name} written before is kept" if path.exists() else ""
    return UserError(
        f"cannot write {path}: the disk is full ({room}){kept}; free some space there or "
        "write elsewhere, then run the same command again"
    )


def write_json(path: Path | str, value) -> None:
    with written_whole(path) as temporary:
        temporary.write_text(json.dumps(value, indent=2) + "\n")


@contextlib.contextmanager
def one_run_at_a_time(folder: Path | str, flag: str):
    """Hold `folder` while the block runs: a second run into it is refused at once, naming
    the process that holds it (two runs would replace each other's files). The lock is the
    operating system's, so a run that is killed lets go of the folder as it dies."""
    folder = Path(folder)
    if unwritable(folder):  # nothing to hold: the preflight says why, with every other problem
        yield folder
        return
    made = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a place that takes no folders (/proc), though it looks writable
        raise UserError(
            f"{flag} {folder}: cannot be made ({error.strerror}); give a folder to write into"
        ) from error
    path = folder / ".run.lock"
    with open(path, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip() or "another process"
            raise UserError(
                f"{flag} {folder} is in use by another run ({holder}); let it finish or stop "
                "it, or give this run another folder"
            ) from None
        lock.truncate(0)
        lock.write(f"process {os.getpid()}: {' '.join(sys.argv)}\n")
        lock.flush()
        try:
            yield folder
        finally:
            path.unlink(missing_ok=True)  # no trace in the folder; a run starting now locks anew
            if made:
                with contextlib.suppress(OSError):  # a run that wrote nothing leaves no folder
                    folder.rmdir()


def held_by(folder: Path | str) -> str:
    """The run holding `folder` (one_run_at_a_time's lock), as its lock names it; "" when no
    run does. Takes nothing and makes nothing."""
    try:
        lock = open(Path(folder) / ".run.lock")  # noqa: SIM115 (closed below, after the test)
    except OSError:  # no lock file: no run holds the folder
        return ""
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return lock.read().strip() or "another process"
        fcntl.flock(lock, fcntl.LOCK_UN)  # a lock a killed run left: no one holds it
    return ""


def unwritable(folder: Path | str) -> str:
    """Why files cannot be written in `folder` (made when missing), or "" when they can.

    Makes nothing: the folder, or the nearest one above it that exists, must take new files.
    """
    if "://" in str(folder):  # a Path of a URL would be a local folder named `gs:`
        return BUCKET_OUTPUT
    existing = Path(folder)
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing} is read-only here"
    return ""


def output_folder(path: Path | str, flag: str) -> Path:
    """The folder a command writes into (`flag` names it in the error), once it is writable."""
    reason = unwritable(path)
    if reason:
        raise UserError(f"{flag} {path}: {reason}; give a folder to write into")
    return Path(path)
