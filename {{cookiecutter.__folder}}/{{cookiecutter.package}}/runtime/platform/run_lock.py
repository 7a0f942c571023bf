"""One run at a time in a folder: two runs into one folder would replace each other's files.

On this machine the lock is the operating system's (fcntl), so a run that is killed lets go of the
folder as it dies. A bucket has no such lock, and TensorFlow's gs:// client cannot create an object
only if it is absent (GCS's ifGenerationMatch=0). So a run in a bucket writes a lock object naming
itself, reads it back, and renews it every BEAT_SECONDS; a lock not renewed for a while
(lock_holder.STALE_SECONDS) was left by a run that died (a preempted TPU VM), and the next run
takes it. What this cannot promise: two runs starting within the same second or two may both take
the folder (each checks, then writes); and hosts whose clocks differ by more than that
misjudge each other's locks. lock_holder.py reads who holds a folder without taking it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
import sys
import threading
import time
import uuid
from pathlib import Path

from ..errors import UserError
from .files import is_url, place, unwritable, write_json
from .lock_holder import LOCK, alive, read_lock

BEAT_SECONDS = 30


@contextlib.contextmanager
def one_run_at_a_time(folder: Path | str, flag: str):
    """Hold `folder` while the block runs: a second run into it is refused at once, naming
    the run that holds it."""
    folder = place(folder)
    if unwritable(folder, buckets=True):  # nothing to hold: the preflight says why
        yield folder
        return
    with (bucket_lock if is_url(folder) else local_lock)(folder, flag):
        yield folder


def in_use(flag: str, folder: Path, holder: str) -> UserError:
    return UserError(
        f"{flag} {folder} is in use by another run ({holder}); let it finish or stop it, or "
        "give this run another folder"
    )


def this_run(host: str = "") -> str:
    """The run, as a lock names it; a bucket's lock names the host too (any may hold it)."""
    return f"process {os.getpid()}{host and ' on ' + host}: {' '.join(sys.argv)}"


@contextlib.contextmanager
def local_lock(folder: Path, flag: str):
    made = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a place that takes no folders (/proc), though it looks writable
        raise UserError(
            f"{flag} {folder}: cannot be made ({error.strerror}); give a folder to write into"
        ) from error
    path = folder / LOCK
    with open(path, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            raise in_use(flag, folder, lock.read().strip() or "another process") from None
        lock.truncate(0)
        lock.write(this_run() + "\n")
        lock.flush()
        try:
            yield
        finally:
            path.unlink(missing_ok=True)  # no trace in the folder; a run starting now locks anew
            if made:
                with contextlib.suppress(OSError):  # a run that wrote nothing leaves no folder
                    folder.rmdir()


@contextlib.contextmanager
def bucket_lock(folder: Path, flag: str):
    path = folder / LOCK
    left = read_lock(path)
    if alive(left):
        raise in_use(flag, folder, alive(left))
    if left:  # a run that died: a preempted VM, a killed notebook
        print(f"{flag} {folder}: taking over the lock of a run that stopped ({left.get('run')})")
    mine = {"run": this_run(socket.gethostname()), "token": uuid.uuid4().hex}
    write_json(path, mine | {"beat": time.time()})
    written = read_lock(path)
    if written.get("token") != mine["token"]:  # another run wrote after this one
        raise in_use(flag, folder, alive(written) or "another run")
    stop = threading.Event()

    def renew():
        while not stop.wait(BEAT_SECONDS):
            with contextlib.suppress(Exception):  # a dropped request: the next beat is soon
                write_json(path, mine | {"beat": time.time()})

    beating = threading.Thread(target=renew, daemon=True)
    beating.start()
    try:
        yield
    finally:
        stop.set()
        beating.join()
        with contextlib.suppress(Exception):  # left behind, it goes stale
            path.unlink()
