"""blend.json, as `blend` writes it and `kernel --inference --blend` and `kaggle submit` read
it: the runs (each with its folder, the notebook it came from, backbone, image size, flips,
CV and weight), the metric and classes they share, the equal-weight and the blend's CVs."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import UserError, first_line
from ..platform.files import BLEND


def read(path: Path | str) -> dict:
    """A blend.json, or one line naming the file."""
    path = Path(path)
    try:
        blend = json.loads(path.read_text())
        runs = blend["runs"]
        assert isinstance(runs, list) and len(runs) >= 2 and blend["classes"], "no runs"
        assert all("weight" in run and "name" in run for run in runs), "a run without weight"
    except (OSError, ValueError, AssertionError, KeyError, TypeError) as error:
        raise UserError(
            f"{path}: not a {BLEND} that `blend` wrote ({first_line(error)}); give the "
            f"{BLEND} in the folder `blend --output-dir` wrote"
        ) from None
    return blend


def cv(blend: dict) -> str:
    """The blend's CV as a submission's description carries it: "cv macro_f1 0.8345, blend of 3"."""
    return f"cv {blend['metric']} {blend['blend_cv']:.4f}, blend of {len(blend['runs'])}"
