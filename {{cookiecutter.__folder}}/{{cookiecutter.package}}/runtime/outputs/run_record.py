"""model.json, what a trained run's weights were trained for, as `train` writes it beside
them: where a run's are (its own, or its folds') and reading one. Plain JSON, no Keras:
`kaggle submit` scores a run's CV and `blend` reads runs with it."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import UserError, first_line


def run_records(folder: Path) -> list[Path]:
    """The model.json files of the run in `folder`: its own, else its folds' (fold<k>/)."""
    return sorted(folder.glob("model.json")) + sorted(folder.glob("fold*/model.json"))


def read_record(path: Path) -> dict:
    """model.json, what the weights beside it were trained for, as `train` writes it: a JSON
    object, or an error naming the file."""
    fix = "train again, or put back the model.json that train wrote"
    try:
        recorded = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as error:  # bad bytes are ValueErrors too
        raise UserError(f"{path} is not readable JSON ({first_line(error)}); {fix}") from None
    if not isinstance(recorded, dict):
        raise UserError(f"{path} holds {type(recorded).__name__}, not an object; {fix}")
    return recorded
