"""blend.json and stack.json, as `blend` and `stack` write them and `kernel --inference
--blend` and `kaggle submit` read them: the runs (each with its folder, the notebook it came
from, backbone, image size, flips and CV; a blend's with its weight), the metric and classes
they share, and the CVs (a blend's equal-weight and fitted; a stack's nested and in-sample,
with the metadata columns its trees read)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import UserError, first_line
from ..platform.files import BLEND, STACK

# What an inference notebook predicts each run with: each run of a blend or a stack lists it.
PREDICTED_WITH = ("backbone", "image_size", "tta")


def read(path: Path | str) -> dict:
    """A blend.json or a stack.json, or one line naming the file."""
    path = Path(path)
    try:
        blend = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        blend, why = None, first_line(error)
    else:
        why = problem(blend)
    if why:
        name, command = (STACK, "stack") if path.name == STACK else (BLEND, "blend")
        raise UserError(
            f"{path}: not a {name} that `{command}` wrote ({why}); give the {name} in the folder "
            f"`{command} --output-dir` wrote"
        )
    return blend


def is_stack(blend: dict) -> bool:
    """Whether it is a stack's (trees on the runs' predictions), not a blend's (weights)."""
    return "stack_cv" in blend


def problem(blend) -> str:
    """What a read blend.json or stack.json lacks of what its readers use; "" when nothing."""
    runs = blend.get("runs") if isinstance(blend, dict) else None
    fewest = 1 if isinstance(blend, dict) and is_stack(blend) else 2
    if not (isinstance(runs, list) and len(runs) >= fewest and blend.get("classes")):
        return "no runs"
    if not all(isinstance(run, dict) and "name" in run for run in runs):
        return "a run without a name"
    if is_stack(blend):
        if not isinstance(blend.get("metadata_columns"), list):
            return "no metadata columns"
        if not all(key in run for run in runs for key in PREDICTED_WITH):
            return "no backbone, image size or flips for a run: run `stack` again"
        return ""
    return "" if all("weight" in run for run in runs) else "a run without weight"


def cv(blend: dict) -> str:
    """The CV as a submission's description carries it: "cv macro_f1 0.8345, blend of 3", or
    "cv pauc 0.1604, stack of 1"."""
    if is_stack(blend):
        return f"cv {blend['metric']} {blend['stack_cv']:.4f}, stack of {len(blend['runs'])}"
    return f"cv {blend['metric']} {blend['blend_cv']:.4f}, blend of {len(blend['runs'])}"
