"""The notebook's settings: the config cell, with the fields tuned most and every value the
notebook was made with, grouped by Config's sections, and above it a table of every other
field with its default, folded away."""

from __future__ import annotations

import json
import pprint

from ..runtime.config import (
    FILE_FIELDS,
    TRAINING_DATA,
    TRAINING_ONLY,
    Config,
    fields_with,
    given,
    sections,
)
from ..runtime.data.kinds import Data
from ..runtime.outputs import blend_record
from ..runtime.stages.run import Run


def shown_fields(run: Run, notebook: str = "training", reading: Run | None = None) -> set[str]:
    """The config cell's fields: those tuned most, and every value this notebook was made
    with that is not a default; of what `settings` offers."""
    defaults = Config()
    return {
        field.name
        for field in settings(notebook, (reading or run).data)
        if field.metadata["tuned"] or value(run, field.name) != getattr(defaults, field.name)
    }


def of(kind: str):
    return lambda data: data.reads(kind)


def in_folds(data: Data) -> bool:
    """Whether Config.fold picks a fold: the data is in folds, or is records that carry none
    (pooled into folds where a fold is asked)."""
    return data.folds > 1 or (data.trains_from == "records" and data.manifest is None)


# What a field is used for, where only some runs use it: as the notebook reads its data.
USED = {
    **dict.fromkeys(("train_files", "valid_files", "test_files"), of("records")),
    **dict.fromkeys(("train_images", "group_column", "window"), of("images")),
    **dict.fromkeys(("test_csv", "metadata_columns"), lambda data: data.uses_metadata),
    "fold": in_folds,
}


# No notebook offers these: a notebook is one process on one machine, and replicas rehearsed
# on the CPU are a laptop's (`--simulate-replicas`); the metric and whether an image has several
# labels are the competition's, and what scores and answers for them is carried as it is
# (`kernel --metric` writes a notebook for another).
NOT_IN_NOTEBOOKS = (
    "simulate_replicas", "coordinator", "coordinator_timeout", "num_processes", "process_id",
    "metric", "multi_label",
)  # fmt: skip


def settings(notebook: str = "training", data: Data | None = None) -> list:
    """The fields the notebook offers: those its run uses (USED, of its `data` as the notebook
    reads it; None: not read, any). The inference notebooks leave out what only
    training reads, the folds, and what predict takes from the trained run (the model, the
    classes, the metric, and the weights: its own): a value there would count as given, and
    refuse a run trained with another. A blend's notebook leaves out the trained run and its
    flips too: BLEND gives each run's; a stack's, as a blend's, but for the training table."""
    from_the_run = (*fields_with("trained", "model"), "weights")
    folds = ("fold", "folds", "fold_seed")
    left_out = {
        "training": NOT_IN_NOTEBOOKS,
        "inference": (*NOT_IN_NOTEBOOKS, *TRAINING_ONLY, *TRAINING_DATA, *from_the_run, *folds),
    }
    left_out["blend"] = (*left_out["inference"], "trained_dir", "tta")
    # A stack's trees are fitted again on the training table's metadata: it reads train_csv.
    left_out["stack"] = tuple(name for name in left_out["blend"] if name != "train_csv")
    fields = [field for fields in sections().values() for field in fields]
    return [
        field
        for field in fields
        if field.name not in left_out[notebook]
        and (data is None or USED.get(field.name, lambda data: True)(data))
    ]


def value(run: Run, name: str):
    """A field's value as the notebook sets it: a preset's file as the path it names (in the
    notebook every value is given, and a given path is used as it is). Defaults stay as they
    are: the notebook looks them up in its own data folder, Kaggle's input."""
    cfg = run.cfg
    if (
        name in FILE_FIELDS
        and getattr(cfg, name)
        and given(cfg, run.sources, name).startswith("preset")
    ):
        return run.places.file(name)
    return getattr(cfg, name)


def config_source(
    run: Run, accelerator: str, notebook: str = "training", blend: dict | None = None,
    built: list[str] = (), wheels: str = "", reading: Run | None = None,
) -> str:  # fmt: skip
    """The config cell: the fields tuned most and the values given, by Config's sections; in a
    blend's notebook, the blend's runs and weights after them. `built`: the backbones an inference
    notebook builds (the trained runs'), for the install cell; a training notebook builds CONFIG's.
    `wheels`: the attached dataset the install cell installs from; `reading`: as shown_fields."""
    shown = shown_fields(run, notebook, reading)
    lines = [
        "# The settings of this run, by Config's sections: those tuned most, and every value",
        "# the notebook was made with. Every other field is listed above, with its default:",
        "# add it here to change it. The accelerator cell checks them all.",
        "CONFIG = dict(",
    ]
    for title_, fields in sections().items():
        chosen = [field for field in fields if field.name in shown]
        if chosen:
            lines.append(f"    # {title_}")
        for field in chosen:
            literal = python_literal(value(run, field.name))
            lines.append(f"    {field.name}={literal},  # {field.metadata['help']}")
    required = "" if accelerator == "cpu" else accelerator
    lines += [
        ")",
        "# The notebook stops in its first cells if Kaggle gives it another accelerator.",
        f"ACCELERATOR = {python_literal(required)}",
        "# The backbones it builds: the install cell checks that keras-hub has them.",
        "BACKBONES_BUILT = "
        + ('[CONFIG["backbone"]]' if notebook == "training" else python_literal(list(built))),
        "# Where the install cell finds what the image lacks, offline (`kaggle wheels`).",
        f"WHEELS = {python_literal(wheels)}",
        *blend_source(blend),
    ]
    return "\n".join(lines)


def blend_source(blend: dict | None) -> list[str]:
    """BLEND: the runs, each with its training notebook's output as trained_dir, and the
    weights `blend` fitted; or STACK, a stack's runs and metadata columns; empty without."""
    if not blend:
        return []
    if blend_record.is_stack(blend):
        return [
            "# The runs this notebook stacks, each predicted from its training notebook's output",
            "# (trained_dir) with its own flips; the trees are fitted again on their out-of-fold",
            "# predictions and these metadata columns, as `stack` fitted them (cv: each run's).",
            "STACK = " + pprint.pformat(blend, sort_dicts=False, width=95),
        ]
    return [
        "# The runs this notebook blends, each predicted from its training notebook's output",
        "# (trained_dir) with its own flips, weighed as `blend` fitted them on the runs'",
        "# out-of-fold predictions (cv: each run's, and the blend's).",
        "BLEND = " + pprint.pformat(blend, sort_dicts=False, width=95),
    ]


def other_settings(run: Run, notebook: str = "training", reading: Run | None = None) -> str:
    """Every field the config cell leaves out, with its default, one click away."""
    shown = shown_fields(run, notebook, reading)
    offered = {field.name for field in settings(notebook, (reading or run).data)}
    rows = []
    for title_, fields in sections().items():
        rest = [field for field in fields if field.name in offered and field.name not in shown]
        if rest:
            rows.append(f"| **{title_}** | | |")
        rows += [
            f"| `{field.name}` | `{python_literal(value(run, field.name))}` | "
            f"{field.metadata['help'].replace('|', '/')} |"
            for field in rest
        ]
    return (
        "The next cell holds the settings tuned most. Every other field of `Config`, with "
        "its default, is one click away: add any of them to `CONFIG` to change it.\n\n"
        "<details><summary>Every other setting</summary>\n\n"
        "| field | default | what it does |\n|---|---|---|\n" + "\n".join(rows) + "\n\n</details>"
    )


def python_literal(value) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)
