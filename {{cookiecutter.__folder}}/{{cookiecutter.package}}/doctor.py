"""Check the accelerator, the data, the output, the weights and the checkpoint before
spending hours of quota: the checks train and predict run first (preflight.py), all printed."""

from __future__ import annotations

from . import accelerator, preflight
from .accelerator import Accelerator
from .config import Config, UserError


def doctor(cfg: Config, found: Accelerator | None = None, require: str = "") -> list[str]:
    """Print what a run would use; return the problems that would stop train or predict
    (none: ready).

    `require` ("tpu" or "gpu") makes a missing accelerator a problem: a notebook pushed to a
    TPU machine then stops at once instead of training for hours on the host's CPU.
    """
    found = found or accelerator.detect(cfg)
    problems = []
    try:
        accelerator.require(found, require)
    except UserError as error:
        problems.append(str(error))
        print(f"accelerator: PROBLEM: {error}")
    global_batch = cfg.batch_size * found.replicas
    print(f"global batch: {global_batch} ({cfg.batch_size} per replica x {found.replicas})")
    problems += preflight.check(cfg, found, "doctor", say=print).problems
    print(f"problems: {len(problems)} (above)" if problems else "problems: none, ready to train")
    return problems
