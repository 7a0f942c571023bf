"""Checkpoints every epoch, and resuming from the last one.

After each epoch: the weights with the optimizer's state (Keras' .weights.h5), then the epoch
reached, the history so far and the run that made them. Each file is replaced whole, so a
run killed at any moment and started again with the same command continues from the last
finished epoch; a run with another model or other data refuses to continue it.

Why not keras.callbacks.BackupAndRestore: it writes its weights file in place (a kill
mid-write loses it), every process writes it (several JAX processes would race on one file),
it keeps no history of the epochs before a restart, and it deletes itself when training ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import shutil
import tempfile
import time
from pathlib import Path

import keras
import numpy as np

from ..backbone_choices import uses_preset
from ..config import LABEL_FILES, Config, fields_with, filled, places_of
from ..data import metadata
from ..errors import UserError, first_line, named
from ..learning import backbones, plan
from ..platform.accelerator import Accelerator
from ..platform.files import (
    NO_ROOM,
    disk_full,
    is_url,
    on_this_machine,
    place,
    write_json,
    written_whole,
)
from .run_record import read_record, run_records

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
FROM_TRAINED = fields_with("trained", "model")
MODEL_FIELDS = fields_with("model")


# Beside the trained weights: the backbone preset's architecture and input scaling, so that
# a notebook that only predicts needs nothing but the trained run (no Kaggle Models).
ARCHITECTURE = "backbone"


def folder(cfg: Config) -> Path:
    return places_of(cfg).output / "checkpoints"


def trained_weights(cfg: Config) -> Path:
    """Where `predict` and `evaluate` find the final weights: in the trained run's folder
    (Config.trained_dir, else the output folder `train` left them in)."""
    return places_of(cfg).trained / "model.weights.h5"


def with_trained(cfg: Config) -> Config:
    """With Config.trained_dir (another notebook's output, say), the config with the trained
    run's model and classes for the fields the user did not give: the run is all predict needs."""
    if not cfg.trained_dir:
        return cfg
    folder = places_of(cfg).trained
    records = run_records(folder)
    if not records:
        raise UserError(
            f"{named('trained_dir')} {cfg.trained_dir} ({folder}) holds no trained run "
            "(model.json and model.weights.h5, or fold*/ with them); give the output folder of "
            "a finished `train`, or the training notebook's output"
        )
    recorded = read_record(records[0])
    return filled(
        cfg,
        {name: recorded[name] for name in FROM_TRAINED if name in recorded},
        f"the trained run {records[0]}",
    )


def made_by(cfg: Config, run: plan.Plan | None) -> dict:
    """What a checkpoint records of its run: every field but where it ran, and the plan's
    global batch and steps per epoch (which depend on the replicas and the records)."""
    record = {name: getattr(cfg, name) for name in RECORDED}
    for name, key in CONTENTS.items():
        if getattr(cfg, name):
            record[key] = digest(places_of(cfg).file(name))
    if run:
        record.update(global_batch=run.global_batch, steps_per_epoch=run.steps_per_epoch)
    return record


def digest(path: str) -> str:
    """The first 16 hex digits of a file's SHA-256 ("" where it cannot be read: the file's
    own check says why)."""
    try:
        return hashlib.sha256(place(path).read_bytes()).hexdigest()[:16]
    except OSError:
        return ""


def differences(recorded: dict, now: dict) -> dict[str, tuple]:
    return {
        name: (recorded[name], value)
        for name, value in now.items()
        if name in recorded and recorded[name] != value
    }


def listed(changes: dict[str, tuple]) -> str:
    def change(name: str, then, now) -> str:
        if name in CONTENTS.values():
            return f"the contents of {name.removesuffix('_sha256')}: sha256 {then} then, {now} now"
        return f"{name} {then!r} then, {now!r} now"

    return ", ".join(change(name, *values) for name, values in changes.items())


def check_resumable(cfg: Config, run: plan.Plan | None) -> str:
    """What `train` would resume from; an error when the checkpoint came from another run."""
    where = folder(cfg)
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
    changes = differences(saved.get("made_by", {}), made_by(cfg, run))
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


def describe_trained(cfg: Config) -> str:
    """Trained weights as doctor sees them: train will make or replace them."""
    path = trained_weights(cfg)
    if not path.is_file():
        return f"none yet; train writes {path}"
    try:
        return f"{check_trained(cfg)} (train replaces them)"
    except UserError as error:
        return f"{error} (train replaces them)"


def check_trained(cfg: Config) -> str:
    """The trained weights' path, after checking they exist and were made for this model."""
    path = trained_weights(cfg)
    if not path.is_file():
        raise UserError(
            f"no trained weights at {path}; run `train` first or set {named('output_dir')}"
        )
    record = path.with_name("model.json")
    recorded = read_record(record) if record.is_file() else {}
    changes = differences(recorded, {name: getattr(cfg, name) for name in MODEL_FIELDS})
    if changes:
        raise UserError(
            f"{path} was trained for another model ({listed(changes)}, as {record.name} "
            f"records); set {', '.join(named(name) for name in changes)} as it was trained, "
            "or train again"
        )
    return str(path)


def load_trained(cfg: Config, found: Accelerator, build_model=None):
    """The trained model, made by `build_model` (model.py's by default); call inside
    found.scope()."""
    if build_model is None:
        from ..learning.model import (
            build_model,  # the package's own; a notebook passes its model cell's
        )

    check_trained(cfg)
    path = trained_weights(cfg)
    precision = plan.precision(found, cfg.precision)
    saved = path.with_name(ARCHITECTURE)  # the preset's architecture, saved by the run
    with contextlib.ExitStack() as stack:
        if uses_preset(cfg) and (saved / "config.json").is_file():
            cfg = dataclasses.replace(cfg, weights=stack.enter_context(on_this_machine(saved)))
        architecture = backbones.load(cfg, precision, with_weights=False)
    keras.mixed_precision.set_global_policy(precision)  # read by each layer as it is made
    spec = metadata_spec(cfg)
    if spec:  # a model cell of before the metadata takes three arguments: it is not asked more
        net = build_model(cfg, architecture, found.image_dtype, metadata.width(spec))
    else:
        net = build_model(cfg, architecture, found.image_dtype)
    try:
        net.load_weights(str(path))  # trained weights replace the backbone's
    except (ValueError, OSError) as error:
        raise UserError(
            f"{path} does not fit this model ({first_line(error)}); train again, or set "
            f"{named('output_dir')} to the run that made it"
        ) from error
    return net


def metadata_spec(cfg: Config) -> dict | None:
    """The metadata encoding the trained run saved beside its weights (None: images alone)."""
    return metadata.saved(trained_weights(cfg).with_name(metadata.SPEC))


def save_trained(
    net: keras.Model, cfg: Config, run: plan.Plan, writes_files: bool, kept: dict | None = None
) -> None:
    """The final weights, and beside them the run that made them (for predict to check) and,
    with an average of the weights, which were kept and their validation scores."""
    path = places_of(cfg).output / "model.weights.h5"
    save_weights(net, path, writes_files)
    if writes_files:
        record = made_by(cfg, run) | ({"kept_weights": kept} if kept else {})
        write_json(path.with_name("model.json"), record)
        backbones.save_architecture(cfg, path.with_name(ARCHITECTURE))


class EveryEpoch(keras.callbacks.Callback):
    """Saves the checkpoint at the end of every epoch; `history` gathers each epoch's logs."""

    def __init__(self, cfg: Config, run: plan.Plan, history: dict, writes_files: bool):
        super().__init__()
        self.cfg = cfg
        self.folder = folder(cfg)
        self.record = made_by(cfg, run)
        self.history = history
        self.writes_files = writes_files
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


def resume(net: keras.Model, cfg: Config) -> tuple[int, dict]:
    """The epochs already done and their history, after loading the last checkpoint if any.
    `preflight` has checked that the checkpoint is of this run."""
    where = folder(cfg)
    saved = (read_state(where) if cfg.resume else {}) or {"epoch": 0, "history": {}}
    if cfg.num_processes > 1:
        check_same_start(saved["epoch"], where)
    if not saved["epoch"]:
        return 0, {}
    net.optimizer.build(net.trainable_variables)  # so its saved state has somewhere to go
    try:
        net.load_weights(str(where / "checkpoint.weights.h5"))
    except (ValueError, OSError) as error:
        raise UserError(
            f"the checkpoint in {where} does not fit this model ({first_line(error)}); "
            f"start over with {named('resume')} off (--no-resume), or pick another "
            f"{named('output_dir')}"
        ) from error
    return saved["epoch"], saved["history"]


def check_same_start(epoch: int, where: Path) -> None:
    """Processes that resume from different epochs would wait on each other for ever."""
    from jax.experimental import multihost_utils

    epochs = multihost_utils.process_allgather(np.int32(epoch)).tolist()
    if len(set(epochs)) > 1:
        raise UserError(
            f"the processes found checkpoints of different epochs in {where} ({epochs}, by "
            f"process); give every process the same shared {named('output_dir')}, or start "
            "over with --no-resume"
        )
