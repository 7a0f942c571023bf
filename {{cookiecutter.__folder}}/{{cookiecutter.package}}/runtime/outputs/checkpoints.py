"""Checkpoints every epoch, and resuming from the last one.

After each epoch: the weights with the optimizer's state (Keras' .weights.h5), then the epoch
reached, the history so far and the run that made them. Each file is replaced whole, so a run killed
at any moment and started again with the same command continues from the last finished epoch; a run
with another model or other data refuses to continue it.

Why not keras.callbacks.BackupAndRestore: it writes its weights file in place (a kill mid-write
loses it), every process writes it (several JAX processes would race on one file), it keeps no
history of the epochs before a restart, and it deletes itself when training ends."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import tempfile
import time
from pathlib import Path

import keras
import numpy as np

from ..config import LABEL_FILES, Config, fields_with
from ..errors import UserError, first_line, named
from ..learning import backbones, plan
from ..platform import processes
from ..platform.files import NO_ROOM, disk_full, is_url, place, write_json, written_whole
from ..platform.paths import Places
from .run_files import CHECKPOINTS
from .trained_run import ARCHITECTURE, damaged, differences, listed

# What a run records of its config (checkpoint.json's made_by, model.json), and what resuming
# and predicting do with each field, by the field's `checkpoint` (config.knob):
# - "where" the run happens, not what it trains: not recorded;
# - "recorded" (the rest): a change since the checkpoint is said when resuming, and allowed;
# - "trained": as recorded, and predict takes it from the trained run unless the user gave it;
# - "data" it learns from, or where in the learning-rate schedule an epoch starts: resuming
#   with it changed would continue another run, and is refused;
# - "model", what shapes the model: as "data" and as "trained", and the trained weights must
#   have been made for it.
# The plan's global batch (it depends on the replicas) is recorded beside them, and must match
# too; its steps per epoch (they depend on the records) are recorded for the field's 0.
RECORDED = fields_with("recorded", "trained", "data", "model")
# A file of labels (the audit's rows to drop, pseudo's) edited between a kill and a resume is
# other data under the same name: its contents' digest is recorded beside its path.
CONTENTS = {name: f"{name}_sha256" for name in LABEL_FILES}
MUST_MATCH = (*fields_with("data", "model"), "global_batch", *CONTENTS.values())


def made_by(cfg: Config, places: Places, numbers: plan.Plan | None) -> dict:
    """What a checkpoint records of its run: every field but where it ran, and the plan's
    global batch and steps per epoch (which depend on the replicas and the records)."""
    record = {name: getattr(cfg, name) for name in RECORDED}
    for name, key in CONTENTS.items():
        if getattr(cfg, name):
            record[key] = digest(places.file(name))
    if numbers:
        record.update(global_batch=numbers.global_batch, steps_per_epoch=numbers.steps_per_epoch)
    return record


def digest(path: str) -> str:
    """The first 16 hex digits of a file's SHA-256 ("" where it cannot be read: the file's
    own check says why)."""
    try:
        return hashlib.sha256(place(path).read_bytes()).hexdigest()[:16]
    except OSError:
        return ""


def check_resumable(cfg: Config, places: Places, numbers: plan.Plan | None) -> str:
    """What `train` would resume from; an error when the checkpoint came from another run."""
    where = places.output / CHECKPOINTS
    if not cfg.resume:
        return f"off ({named('resume')}): training starts at epoch 1"
    saved = read_state(where)
    if not saved:
        return f"no checkpoint in {where}: training starts at epoch 1"
    if not (where / "checkpoint.weights.h5").is_file():
        raise UserError(
            f"{where / 'checkpoint.json'} has no checkpoint.weights.h5 beside it; start over "
            f"with --no-resume ({named('resume')} False), or pick another {named('output_dir')}"
        )
    changes = differences(saved.get("made_by", {}), made_by(cfg, places, numbers))
    refused = {name: change for name, change in changes.items() if name in MUST_MATCH}
    if refused:
        raise UserError(
            f"the checkpoint in {where} is of another run ({listed(refused)}); continuing it "
            f"would train another model or on other data. Start over with --no-resume "
            f"({named('resume')} False), or pick another {named('output_dir')}"
        )
    line = f"after epoch {saved['epoch']} from {where} (--no-resume starts over)"
    if "made_by" not in saved:
        line += " (it does not record the run that made it)"
    if changes:
        line += f"; changed since: {listed(changes)}"
    return line


def read_state(where: Path) -> dict:
    """The checkpoint's epoch, history and run, or {} when there is none."""
    path = where / "checkpoint.json"
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise UserError(
            f"{path} cannot be read ({error}); start over with --no-resume, or pick another "
            f"{named('output_dir')}"
        ) from error


def save_trained(
    net: keras.Model, cfg: Config, places: Places, numbers: plan.Plan, writes_files: bool,
    kept: dict | None = None,
) -> None:  # fmt: skip
    """The final weights, and beside them the run that made them (for predict to check) and,
    with an average of the weights, which were kept and their validation scores."""
    path = places.output / "model.weights.h5"
    save_weights(net, path, writes_files)
    if writes_files:
        record = made_by(cfg, places, numbers) | ({"kept_weights": kept} if kept else {})
        write_json(path.with_name("model.json"), record)
        backbones.save_architecture(cfg, path.with_name(ARCHITECTURE))


class EveryEpoch(keras.callbacks.Callback):
    """Saves the checkpoint at the end of every epoch; `history` gathers each epoch's logs."""

    def __init__(
        self, cfg: Config, places: Places, numbers: plan.Plan, history: dict, writes_files: bool
    ):
        super().__init__()
        self.cfg, self.history, self.writes_files = cfg, history, writes_files
        self.folder, self.record = places.output / CHECKPOINTS, made_by(cfg, places, numbers)
        self.started, self.trained = time.perf_counter(), None

    # The seconds an epoch trained, validation left out: `ablate` shows images a second.
    def on_epoch_begin(self, epoch, logs=None):
        self.started, self.trained = time.perf_counter(), None

    def on_test_begin(self, logs=None):
        self.trained = self.trained or time.perf_counter() - self.started

    def on_epoch_end(self, epoch, logs=None):
        logs = {**(logs or {}), "train_seconds": self.trained or time.perf_counter() - self.started}
        loss = float(logs.get("loss", 0.0))
        if not math.isfinite(loss):  # weights gone to NaN: keep the last good checkpoint
            kept = f"the checkpoint of epoch {epoch} in {self.folder} is kept" if epoch else ""
            raise UserError(
                f"training diverged: the loss is {loss} after epoch {epoch + 1}; lower "
                f"{named('learning_rate')} (now {self.cfg.learning_rate}) or check the labels"
                + (f"; {kept}" if kept else "; no checkpoint was written")
            )
        for name, value in logs.items():
            self.history.setdefault(name, []).append(float(value))
        save_weights(self.model, self.folder / "checkpoint.weights.h5", self.writes_files)
        if self.writes_files:
            state = {"epoch": epoch + 1, "history": self.history, "made_by": self.record}
            write_json(self.folder / "checkpoint.json", state)


def save_weights(net: keras.Model, path: Path, writes_files: bool) -> None:
    """Write the weights whole. With several JAX processes every process must call this:
    Keras makes variables while saving, and making one is a step all processes take together.
    The others write into a scratch folder."""
    if not writes_files:
        with tempfile.TemporaryDirectory() as scratch:
            net.save_weights(Path(scratch) / path.name)
        return
    with written_whole(path) as temporary:
        # HDF5 cannot fail gracefully mid-file: a write that runs out of room leaves it
        # crashing the interpreter later. So the room is measured first.
        needed = weight_bytes(net, path)
        if shutil.disk_usage(temporary.parent).free < needed:
            raise disk_full(path, needed=needed)
        try:
            net.save_weights(temporary)
        except OSError as error:  # the disk filled by someone else while writing
            if error.errno not in NO_ROOM:
                raise
            raise disk_full(path, needed=needed) from error


def weight_bytes(net: keras.Model, path: Path) -> int:
    """About how many bytes the weights file needs: the last one's size, else the model's
    and the optimizer's variables, with room for HDF5's own records."""
    if not is_url(path) and path.is_file():
        return path.stat().st_size + 2**16
    variables = net.variables + (net.optimizer.variables if net.optimizer else [])
    held = sum(math.prod(v.shape) * np.dtype(v.dtype).itemsize for v in variables)
    return int(held * 1.05) + 2**16


def resume(net: keras.Model, cfg: Config, places: Places) -> tuple[int, dict]:
    """The epochs already done and their history, after loading the last checkpoint if any.
    `preflight` has checked that the checkpoint is of this run."""
    where = places.output / CHECKPOINTS
    saved = (read_state(where) if cfg.resume else {}) or {"epoch": 0, "history": {}}
    if cfg.num_processes > 1:
        processes.check_same_start(saved["epoch"], where)
    if not saved["epoch"]:
        return 0, {}
    net.optimizer.build(net.trainable_variables)  # so its saved state has somewhere to go
    start_over = (
        f"start over with {named('resume')} off (--no-resume), or pick another "
        f"{named('output_dir')}"
    )
    try:
        net.load_weights(str(where / "checkpoint.weights.h5"))
    except (ValueError, OSError) as error:
        raise UserError(
            damaged(where / "checkpoint.weights.h5", start_over)
            or f"the checkpoint in {where} does not fit this model ({first_line(error)}); "
            + start_over
        ) from error
    return saved["epoch"], saved["history"]
