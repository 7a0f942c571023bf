"""model.json, what a trained run's weights were trained for: finding and reading it. Plain
JSON, no Keras: `kaggle submit` and `blend` read runs with it."""

from __future__ import annotations

from pathlib import Path

from ..config import Config, Sources, fields_with, filled
from ..errors import UserError, named
from ..platform.files import read_json

# What predict takes from the trained run for the fields the user did not give (config.knob's
# "trained" and "model" fields: checkpoints.py holds the rules).
FROM_TRAINED = fields_with("trained", "model")


def run_records(folder: Path) -> list[Path]:
    """The model.json files of the run in `folder`: its own, else its folds' (fold<k>/)."""
    return sorted(folder.glob("model.json")) + sorted(folder.glob("fold*/model.json"))


def read_record(path: Path) -> dict:
    """A model.json as a JSON object, or an error naming the file."""
    fix = "train again, or put back the model.json that train wrote"
    recorded = read_json(path, fix)
    if not isinstance(recorded, dict):
        raise UserError(f"{path} holds {type(recorded).__name__}, not an object; {fix}")
    return recorded


def with_trained(cfg: Config, sources: Sources, trained: Path) -> tuple[Config, Sources]:
    """With Config.trained_dir, the config with the trained run's model and classes for the
    fields the user did not give, and sources: the run is all predict needs."""
    if not cfg.trained_dir:
        return cfg, sources
    records = run_records(trained)
    if not records:
        raise UserError(
            f"{named('trained_dir')} {cfg.trained_dir} ({trained}) holds no trained run "
            "(model.json and model.weights.h5, or fold*/ with them); give the output folder of "
            "a finished `train`, or the training notebook's output"
        )
    recorded = read_record(records[0])
    given = {name: recorded[name] for name in FROM_TRAINED if name in recorded}
    return filled(cfg, sources, given, f"the trained run {records[0]}")
