"""The trained run `predict` and `evaluate` read: its weights, checked against the model they
were trained for (model.json), loaded into the model rebuilt on the architecture saved beside."""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path

import keras

from ..backbone_choices import uses_preset
from ..config import Config, fields_with, targets
from ..data import metadata
from ..data.kinds import Data
from ..errors import UserError, first_line, named
from ..learning import backbones, model
from ..platform.accelerator import Accelerator
from ..platform.files import is_url, on_this_machine, place
from ..platform.paths import Places
from . import fitted
from .run_record import read_record

# What shapes the model (config.knob's "model" fields): the trained weights were made for them.
MODEL_FIELDS = fields_with("model")
# Beside the trained weights: the backbone preset's architecture and input scaling, so that
# a notebook that only predicts needs nothing but the trained run (no Kaggle Models).
ARCHITECTURE = "backbone"


def trained_weights(places: Places) -> Path:
    """The final weights, in the trained run's folder (Config.trained_dir, else the output's)."""
    return places.trained / "model.weights.h5"


def differences(recorded: dict, now: dict) -> dict[str, tuple]:
    changed = [name for name, value in now.items() if name in recorded and recorded[name] != value]
    return {name: (recorded[name], now[name]) for name in changed}


def listed(changes: dict[str, tuple]) -> str:
    def change(name: str, then, now) -> str:
        if name.endswith("_sha256"):  # a file's contents (checkpoints.CONTENTS)
            return f"the contents of {name.removesuffix('_sha256')}: sha256 {then} then, {now} now"
        return f"{name} {then!r} then, {now!r} now"

    return ", ".join(change(name, *values) for name, values in changes.items())


def describe_trained(cfg: Config, places: Places) -> str:
    """Trained weights as doctor sees them: train will make or replace them."""
    path = trained_weights(places)
    if not path.is_file():
        return f"none yet; train writes {path}"
    try:
        return f"{check_trained(cfg, places)} (train replaces them)"
    except UserError as error:
        return f"{error} (train replaces them)"


def check_trained(cfg: Config, places: Places) -> str:
    """The trained weights' path, after checking they exist and were made for this model."""
    path = trained_weights(places)
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


def load_trained(cfg: Config, places: Places, data: Data, accelerator: Accelerator):
    """The trained model, built by model.py's build_model; call inside accelerator.scope()."""
    check_trained(cfg, places)
    path = trained_weights(places)
    precision = accelerator.precision(cfg.precision)
    saved = path.with_name(ARCHITECTURE)  # the preset's architecture, saved by the run
    with contextlib.ExitStack() as stack:
        if uses_preset(cfg) and (saved / "config.json").is_file():
            cfg = dataclasses.replace(cfg, weights=stack.enter_context(on_this_machine(saved)))
        architecture = backbones.load(cfg, precision, with_weights=False)
    keras.mixed_precision.set_global_policy(precision)  # read by each layer as it is made
    # Each target's mean and spread, saved beside the weights of a run of values.
    values = fitted.standardized(path) if targets(cfg) == "values" else {}
    # The table's width where the run joins one (nothing for images alone: a model cell of
    # before the metadata is asked no more).
    width = ()
    if data.uses_metadata:
        spec = metadata_spec(places, data)
        width = (metadata.width(spec),) if spec else ()
    net = model.build_model(cfg, architecture, accelerator.image_dtype, *width, **values)
    try:
        net.load_weights(str(path))  # trained weights replace the backbone's
    except (ValueError, OSError) as error:
        raise UserError(
            damaged(path, "train again")
            or f"{path} does not fit this model ({first_line(error)}); train again, or set "
            f"{named('output_dir')} to the run that made it"
        ) from error
    return net


def metadata_spec(places: Places, data: Data) -> dict | None:
    """The metadata encoding the trained run saved beside its weights (None: images alone)."""
    if not data.uses_metadata:
        return None
    return metadata.saved(trained_weights(places).with_name(metadata.SPEC))


def damaged(path: Path, fix: str) -> str:
    """Why a weights file cannot be read at all (cut short by a copy or a kill, or not HDF5),
    as a refusal says it; "" where it reads whole, so that its error is about the model."""
    import h5py  # installed with Keras: its .weights.h5 files are HDF5

    try:
        with h5py.File(place(path).open("rb") if is_url(path) else path, "r") as file:
            file.visititems(lambda name, item: item[()] if isinstance(item, h5py.Dataset) else None)
    except (OSError, ValueError, KeyError) as error:
        why = "it was cut short or is not a weights file"
        return f"{path} is damaged ({first_line(error)}): {why}; {fix}"
    return ""
