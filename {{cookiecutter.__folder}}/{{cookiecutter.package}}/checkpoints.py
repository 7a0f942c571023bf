"""Checkpoints every epoch, and resuming from the last one.

After each epoch: the weights with the optimizer's state (Keras' .weights.h5), then the epoch
reached and the history so far. Each file is replaced whole, so a run killed at any moment
and started again with the same command continues from the last finished epoch.

Why not keras.callbacks.BackupAndRestore: it writes its weights file in place (a kill
mid-write loses it), every process writes it (several JAX processes would race on one file),
it keeps no history of the epochs before a restart, and it deletes itself when training ends.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path

import keras

from . import model, plan
from .accelerator import Accelerator
from .config import Config, UserError, named, output_path
from .files import write_json, written_whole


def folder(cfg: Config) -> Path:
    return output_path(cfg, "checkpoints")


def trained_weights(cfg: Config) -> Path:
    """Where `train` leaves the final weights and `predict` and `evaluate` find them."""
    return output_path(cfg, "model.weights.h5")


def load_trained(cfg: Config, found: Accelerator):
    """The trained model; call inside found.scope()."""
    path = trained_weights(cfg)
    if not path.is_file():
        raise UserError(
            f"no trained weights at {path}; run `train` first or set {named('output_dir')}"
        )
    untrained = dataclasses.replace(cfg, weights="none")
    net = model.build(untrained, found.image_dtype, plan.precision(found, cfg.precision))
    net.load_weights(path)  # trained weights replace the backbone's
    return net


class EveryEpoch(keras.callbacks.Callback):
    """Saves the checkpoint at the end of every epoch; `history` gathers each epoch's logs."""

    def __init__(self, cfg: Config, history: dict, writes_files: bool):
        super().__init__()
        self.folder = folder(cfg)
        self.history = history
        self.writes_files = writes_files

    def on_epoch_end(self, epoch, logs=None):
        for name, value in (logs or {}).items():
            self.history.setdefault(name, []).append(float(value))
        save_weights(self.model, self.folder / "checkpoint.weights.h5", self.writes_files)
        if self.writes_files:
            state = {"epoch": epoch + 1, "history": self.history}
            write_json(self.folder / "checkpoint.json", state)


def save_weights(net: keras.Model, path: Path, writes_files: bool) -> None:
    """Write the weights whole. With several JAX processes every process must call this:
    Keras makes variables while saving, and making one is a step all processes take together.
    The others write into a scratch folder."""
    if writes_files:
        with written_whole(path) as temporary:
            net.save_weights(temporary)
        return
    with tempfile.TemporaryDirectory() as scratch:
        net.save_weights(Path(scratch) / path.name)


def resume(net: keras.Model, cfg: Config) -> tuple[int, dict]:
    """The epochs already done and their history, after loading the last checkpoint if any."""
    where = folder(cfg)
    state = where / "checkpoint.json"
    saved = {"epoch": 0, "history": {}}
    if cfg.resume and state.is_file():
        saved = json.loads(state.read_text())
    if cfg.num_processes > 1:
        check_same_start(saved["epoch"], where)
    if not saved["epoch"]:
        return 0, {}
    net.optimizer.build(net.trainable_variables)  # so its saved state has somewhere to go
    try:
        net.load_weights(where / "checkpoint.weights.h5")
    except (ValueError, OSError) as error:
        raise UserError(
            f"the checkpoint in {where} does not fit this model ({error}); start over with "
            f"{named('resume')} off (--no-resume), or pick another {named('output_dir')}"
        ) from error
    print(f"resuming after epoch {saved['epoch']} from {where} (--no-resume starts over)")
    return saved["epoch"], saved["history"]


def check_same_start(epoch: int, where: Path) -> None:
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
