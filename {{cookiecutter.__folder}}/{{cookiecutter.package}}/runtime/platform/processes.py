"""Several JAX processes training together (Cloud TPU pods, or hosts joined by hand with
Config.coordinator): each runs the same command with its own Config.process_id.

JAX waits for every process to join, then aborts with a C++ stack trace that names no
address; a watchdog stops first, after Config.coordinator_timeout, with the fix.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading

from ..config import Config
from ..errors import UserError, named


def join(cfg: Config) -> None:
    """Join the other processes; on TPU pods JAX finds its peers itself. A process joins
    once: its later commands (a notebook's next cell) train with the same peers."""
    import jax

    if jax.distributed.is_initialized():
        return
    with contextlib.suppress(AttributeError, ValueError):  # CPUs need gloo to talk
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    watchdog = threading.Timer(cfg.coordinator_timeout, stop_waiting, args=(cfg,))
    watchdog.daemon = True
    watchdog.start()
    try:
        jax.distributed.initialize(
            cfg.coordinator or None,
            num_processes=cfg.num_processes,
            process_id=cfg.process_id,
            initialization_timeout=cfg.coordinator_timeout + 60,  # the watchdog goes first
        )
    finally:
        watchdog.cancel()


def stop_waiting(cfg: Config) -> None:
    """Runs on the watchdog's thread while JAX holds the main one: print the error, exit 2."""
    where = cfg.coordinator or "the coordinator JAX found"
    joined = f"not all {cfg.num_processes} processes joined; start every process with the same "
    joined += "--coordinator and --num-processes, each with its own --process-id"
    if cfg.process_id == 0:
        why = f"process 0 serves {where}, and {joined}, and check that the other hosts can reach "
        why += "this port"
    elif cfg.coordinator and not answers(cfg.coordinator):
        why = (
            f"nothing answers at {where}: start process 0 first with the same --coordinator, "
            "and check the host name, the port and that no firewall is in between"
        )
    else:
        why = f"{where} answers, but {joined}"
    print(
        f"error: process {cfg.process_id} waited {cfg.coordinator_timeout} s "
        f"({named('coordinator_timeout')}) for the other processes: {why}",
        file=sys.stderr,
        flush=True,
    )
    os._exit(2)  # the main thread is inside JAX and cannot be interrupted


def answers(address: str) -> bool:
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=3).close()
        return True
    except OSError:
        return False


def stop_together(problems: list[str]) -> None:
    """With several processes, one that stops alone leaves the others waiting for it in their
    first collective step: if any process found a problem, every process stops."""
    import numpy as np
    from jax.experimental import multihost_utils

    counts = multihost_utils.process_allgather(np.int32(len(problems))).tolist()
    failed = [process for process, count in enumerate(counts) if count]
    if failed and not problems:
        raise UserError(
            f"process {', '.join(map(str, failed))} found problems (its output names them); "
            "fix them, then start every process again"
        )


def check_same_start(epoch: int, where) -> None:
    """Processes that resume from different epochs would wait on each other for ever."""
    import numpy as np
    from jax.experimental import multihost_utils

    epochs = multihost_utils.process_allgather(np.int32(epoch)).tolist()
    if len(set(epochs)) > 1:
        raise UserError(
            f"the processes found checkpoints of different epochs in {where} ({epochs}, by "
            f"process); give every process the same shared {named('output_dir')}, or start "
            "over with --no-resume"
        )
