"""Files written whole or not at all: a crash mid-write keeps the previous version."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from .config import UserError

MANIFEST = "manifest.json"  # what `records` writes beside its shards: counts, folds, classes
# Image files `records` reads, and the extensions an id may carry or drop between the records
# and a sample submission (t0.jpg and t0).
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff"}


@contextlib.contextmanager
def written_whole(path: Path | str):
    """Yield a temporary path beside `path`; it replaces `path` only if the block finishes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(".tmp-" + path.name)  # same suffix: Keras checks it
    try:
        yield temporary
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_json(path: Path | str, value) -> None:
    with written_whole(path) as temporary:
        temporary.write_text(json.dumps(value, indent=2) + "\n")


def unwritable(folder: Path | str) -> str:
    """Why files cannot be written in `folder` (made when missing), or "" when they can.

    Makes nothing: the folder, or the nearest one above it that exists, must take new files.
    """
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
