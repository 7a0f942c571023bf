"""Everything a run depends on that can be checked without training, checked before the
model is built.

`doctor` prints every check. `train`, `predict`, `evaluate` and `preview` run the same
checks first and stop on any problem, so a run that cannot work fails in seconds, not after
an epoch of TPU quota.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from . import backbones, checkpoints, config, folds, plan, submission
from .accelerator import Accelerator
from .config import Config, UserError, data_path, field_path, named, output_dir, resolve_data_dir
from .data import pipeline, records, scan, tfds_sets
from .files import unwritable

# What each command needs, in the order it is checked. doctor checks what train needs and
# what predict needs after it (trained weights train has not made yet are no problem).
NEEDS = {
    "train": (
        *("config", "output", "manifest", "train", "valid", "plan", "skip", "batch"),
        *("weights", "resume"),
    ),
    "predict": ("config", "output", "manifest", "test", "sample", "trained"),
    "evaluate": ("config", "output", "manifest", "valid", "trained"),
    "preview": ("config", "output", "manifest", "train", "plan"),
    "doctor": (
        *(
            "config",
            "output",
            "data",
            "manifest",
            "values",
            "train",
            "valid",
            "test",
            "sample",
            "plan",
        ),
        *("skip", "batch", "weights", "resume", "trained"),
    ),
}
SPLITS = {  # split: the Config field of its files, and whether its records carry labels
    "train": ("train_files", True),
    "valid": ("valid_files", True),
    "test": ("test_files", False),
}
NEEDED_BY = {"train": "train", "valid": "evaluate", "test": "predict"}  # an empty field stops it


@dataclasses.dataclass
class Preflight:
    """What the checks found, for the command to use, and every problem they met."""

    command: str
    cfg: Config  # the config with what the data's manifest says (records.with_manifest)
    manifest: dict | None = None
    files: dict[str, list[str]] = dataclasses.field(default_factory=dict)  # by split
    records: dict[str, int] = dataclasses.field(default_factory=dict)  # by split
    run: plan.Plan | None = None
    backbone: backbones.Backbone | None = None  # loaded once: train builds its model on it
    skipped: frozenset[str] = frozenset()  # bad training records left out (--bad-records skip)
    sample: pd.DataFrame | None = None
    layout: submission.Layout | None = None  # the columns submission.csv will have
    test_ids: list[str] = dataclasses.field(default_factory=list)  # every test record's id
    runs: list[Config] = dataclasses.field(default_factory=list)  # whose trained weights predict
    said: dict[str, str] = dataclasses.field(default_factory=dict)  # by check, as doctor says it
    problems: list[str] = dataclasses.field(default_factory=list)
    failed: set[str] = dataclasses.field(default_factory=set)  # the checks that found one


def check(cfg: Config, found: Accelerator, command: str, say=lambda line: None) -> Preflight:
    """Run every check `command` needs; `say` gets what each found (doctor prints it)."""
    state = Preflight(command, cfg)
    for name in NEEDS[command]:
        check_one, topic = CHECKS[name]
        try:
            said = check_one(state.cfg, found, state)
        except UserError as error:
            state.problems.append(str(error))
            state.failed.add(name)
            say(f"{topic}: PROBLEM: {error}")
        else:
            if said:
                state.said[name] = said
                say(said)
    return state


def ready(cfg: Config, found: Accelerator, command: str) -> Preflight:
    """The checks `command` needs, or one error listing every problem they found."""
    state = check(cfg, found, command)
    if found.processes > 1:
        stop_together(state.problems)
    if len(state.problems) == 1:
        raise UserError(state.problems[0])
    if state.problems:
        raise UserError(
            f"`{command}` cannot start; {len(state.problems)} problems (`doctor` shows every "
            "check):\n" + "\n".join(f"- {problem}" for problem in state.problems)
        )
    return state


def stop_together(problems: list[str]) -> None:
    """With several processes, one that stops alone leaves the others waiting for it in their
    first collective step: if any process found a problem, every process stops."""
    import numpy as np
    from jax.experimental import multihost_utils

    counts = multihost_utils.process_allgather(np.int32(len(problems))).tolist()
    failed = [process for process, count in enumerate(counts) if count]
    if failed and not problems:
        raise UserError(
            f"process {', '.join(map(str, failed))} found problems (its output names them); "
            "fix them, then start every process again"
        )


def config_values(cfg, found, state):
    """Config refuses bad values when it is made; a notebook may change a field after."""
    wrong = config.problems(cfg)
    if wrong:
        raise UserError("; ".join(wrong))


def output(cfg, found, state):
    # train writes into checkpoints/ too: a file of that name would stop it at epoch 1's end.
    folder = checkpoints.folder(cfg) if state.command in ("train", "doctor") else output_dir(cfg)
    reason = unwritable(folder)
    if reason:
        raise UserError(
            f"cannot write the output in {folder}: {reason}; set {named('output_dir')} to a "
            "folder this run can write (in a Kaggle notebook: /kaggle/working)"
        )
    source = named("output_dir") if cfg.output_dir else "default: no " + named("output_dir")
    return f"output: {output_dir(cfg)} (from {source})"


def data(cfg, found, state):
    folder, source = resolve_data_dir(cfg)
    return f"data dir: {folder} (from {source})"


def split(name: str):
    field, labeled = SPLITS[name]

    def check_split(cfg, found, state):
        if not getattr(cfg, field):
            if state.command == NEEDED_BY[name]:
                raise UserError(f"nothing to {state.command}: {named(field)} is empty")
            return f"{name}: none ({named(field)} is empty)"
        if tfds_sets.name_of(cfg):  # a TFDS set's split: checked by TFDS when prepared
            if state.manifest is None:
                return ""  # the set itself is the problem, said already
            state.records[name], ids = tfds_sets.check_split(cfg, field, labeled)
            state.files[name] = [getattr(cfg, field)]
            if not labeled:
                state.test_ids = ids
            return f"{name}: {state.records[name]} examples (TFDS split {getattr(cfg, field)})"
        files = records.find_checked(cfg, field, labeled)  # names the feature keys at fault
        shards = scan.check_split(files, cfg, field, labeled)  # every record's label or id
        state.files[name] = files
        state.records[name] = sum(shard.records for shard in shards)
        if not labeled:
            state.test_ids = [key for shard in shards for key in shard.ids]
        pattern = field_path(cfg, field)
        return f"{name}: {len(files)} files, {state.records[name]} records ({pattern})"

    return check_split


def manifest(cfg, found, state):
    state.cfg, state.manifest = records.with_manifest(cfg)
    if state.manifest is None:
        return ""
    if tfds_sets.name_of(cfg):
        return tfds_sets.describe(state.cfg, state.manifest)
    folds, classes = state.manifest["folds"], state.manifest["classes"]
    held_out = f", fold {state.cfg.fold} validates" if folds > 1 else ""
    names = f": {', '.join(classes[:5])}{', ...' if len(classes) > 5 else ''}" if classes else ""
    heading = (
        f"records: {data_path(cfg, records.MANIFEST)}: {folds} folds{held_out}, "
        f"{state.manifest['num_classes']} classes{names}"
    )
    balance = [  # what each fold holds: a fold short of a class scores it badly
        f"  fold {fold}: {held['records']} records, {min(held['classes'].values())} to "
        f"{max(held['classes'].values())} per class ({len(held['classes'])} classes)"
        for fold, held in state.manifest["train"]["per_fold"].items()
    ]
    return "\n".join([heading, *balance])


def values(cfg, found, state):
    """Each value that is not a default, and where it came from: what the user gave wins over
    what the records' manifest or the TFDS set says."""
    shown = [
        f"  {field.name} = {getattr(cfg, field.name)!r} ({config.origin(cfg, field.name)})"
        for field in config.knobs()
        if field.name in cfg.sources
    ]
    return "values (flag, notebook, preset, manifest; the rest are defaults):\n" + "\n".join(shown)


def sample(cfg, found, state):
    state.sample = submission.load_sample(cfg)
    shape = submission.layout(cfg, state.sample, cfg.num_classes, config.class_names(cfg))
    state.layout = shape
    if "test" in state.files:  # a submission must never lack an id: check before the model
        submission.check_ids(state.test_ids, state.sample, shape.id_column)
    what = submission.describe(shape, cfg.multi_label)
    if state.sample is None:
        return f"sample submission: none, rows will be sorted by id; columns: {what}"
    rows = len(state.sample)
    return f"sample submission: {field_path(cfg, 'sample_submission')} ({rows} rows; {what})"


def plan_of_run(cfg, found, state):
    if "train" not in state.files:
        return ""  # the training files' problem is said already
    state.run = plan.make(cfg, found, state.records["train"])
    return state.run.describe()


def batch(cfg, found, state):
    if state.run is None:
        return ""
    # Built, not read: its shapes are known at once. XLA compiles only static shapes.
    training = pipeline.for_training(
        state.files["train"], cfg, state.run.global_batch, found.image_dtype, state.skipped
    )
    pipeline.check_static(training, "train_files")
    return f"train batch: {pipeline.describe_spec(training.element_spec)}"


def skip(cfg, found, state):
    """With --bad-records skip, decode every training image now and leave the bad ones out."""
    if cfg.bad_records != "skip" or "train" not in state.files or tfds_sets.name_of(cfg):
        return ""  # TFDS checks a set's images when it prepares it
    shards = scan.scan_split(state.files["train"], cfg, True, decode=True)
    state.skipped = scan.skipped(shards)
    bad = [shard for shard in shards if shard.bad]
    return f"bad records: {len(state.skipped)} in {len(bad)} shards, left out of training" + (
        "".join(f"\n  {shard.describe()}" for shard in bad)
    )


def weights(cfg, found, state):
    """Load the backbone's weights as train will use them, so an offline machine without the
    preset, or a folder of another model, is found before training; train reuses them."""
    precision = state.run.precision if state.run else "float32"
    with found.scope():  # a TensorFlow strategy's variables are made in its scope
        state.backbone = backbones.load(cfg, precision)
    return f"weights: {cfg.backbone}, {state.backbone.source}"


def resume(cfg, found, state):
    return f"resume: {checkpoints.check_resumable(cfg, state.run)}"


def trained(cfg, found, state):
    if "manifest" in state.failed:
        return ""  # which folds the data has is unknown: its problem is said already
    state.runs = folds.trained_runs(cfg) if state.command != "evaluate" else [cfg]
    if state.command == "doctor":  # train makes them, or replaces them
        described = [checkpoints.describe_trained(run) for run in state.runs]
        return "trained weights: " + "; ".join(described)
    paths = [checkpoints.check_trained(run) for run in state.runs]
    return f"trained weights: {', '.join(paths)}"


# Each check, and the topic its problem is printed under.
CHECKS = {
    "config": (config_values, "config"),
    "output": (output, "output"),
    "data": (data, "data dir"),
    "manifest": (manifest, "records"),
    "train": (split("train"), "train"),
    "valid": (split("valid"), "valid"),
    "test": (split("test"), "test"),
    "values": (values, "values"),
    "sample": (sample, "sample submission"),
    "plan": (plan_of_run, "steps per epoch"),
    "skip": (skip, "bad records"),
    "batch": (batch, "train batch"),
    "weights": (weights, "weights"),
    "resume": (resume, "resume"),
    "trained": (trained, "trained weights"),
}
