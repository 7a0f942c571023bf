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
    except (OSError, ValueError) as error:
        blend, why = None, first_line(error)
    else:
        why = problem(blend)
    if why:
        raise UserError(
            f"{path}: not a {BLEND} that `blend` wrote ({why}); give the {BLEND} in the folder "
            "`blend --output-dir` wrote"
        )
    return blend


def problem(blend) -> str:
    """What a read blend.json lacks of what its readers use; "" when nothing."""
    runs = blend.get("runs") if isinstance(blend, dict) else None
    if not (isinstance(runs, list) and len(runs) >= 2 and blend.get("classes")):
        return "no runs"
    if not all(isinstance(run, dict) and "weight" in run and "name" in run for run in runs):
        return "a run without weight"
    return ""


def cv(blend: dict) -> str:
    """The blend's CV as a submission's description carries it: "cv macro_f1 0.8345, blend of 3"."""
    return f"cv {blend['metric']} {blend['blend_cv']:.4f}, blend of {len(blend['runs'])}"
