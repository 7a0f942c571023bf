"""Which run holds a folder a `train` may be writing, read without taking it (run_lock.py
does). A bucket's lock not renewed for STALE_SECONDS was left by a run that died."""

from __future__ import annotations

import fcntl
import json
import time
from pathlib import Path

from .files import is_url, place

LOCK = ".run.lock"
STALE_SECONDS = 120


def read_lock(path: Path) -> dict:
    try:
        lock = json.loads(path.read_text())
    except Exception:  # none, or half-read: no run to name  # noqa: BLE001
        return {}
    return lock if isinstance(lock, dict) else {}


def alive(lock: dict) -> str:
    """The run a bucket's lock names, where it renewed the lock recently; else ""."""
    if not lock or time.time() - float(lock.get("beat", 0)) > STALE_SECONDS:
        return ""
    return str(lock.get("run", "another run"))


def held_by(folder: Path | str) -> str:
    """The run holding `folder`'s lock, as the lock names it ("": none), taking nothing."""
    folder = place(folder)
    if is_url(folder):
        return alive(read_lock(folder / LOCK))
    try:
        lock = open(folder / LOCK)  # noqa: SIM115 (closed below, after the test)
    except OSError:  # no lock file: no run holds the folder
        return ""
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return lock.read().strip() or "another process"
        fcntl.flock(lock, fcntl.LOCK_UN)  # a lock a killed run left: no one holds it
    return ""
