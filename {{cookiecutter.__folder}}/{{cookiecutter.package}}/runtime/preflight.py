"""Everything a run depends on that can be checked without training, checked before the
model is built.

`doctor` prints every check. `train`, `predict`, `evaluate` and `preview` run the same
checks first and stop on any problem, so a run that cannot work fails in seconds, not after
an epoch of TPU quota.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pandas as pd

from . import backbones, checkpoints, config, folds, plan, submission, thresholds
from .accelerator import Accelerator
from .config import Config, UserError, first_line, given_values, named
from .data import pipeline, scan, source
from .files import held_by, unwritable
from .paths import field_path, output_dir, resolve_data_dir, trained_dir

# What each command needs, in the order doctor prints it. A check that needs another's result
# asks for it (Preflight.passed), so this order is only the order of the lines. doctor checks
# what train needs and what predict needs after it (trained weights train has not made yet
# are no problem).
NEEDS = {
    "train": (
        *("config", "output", "manifest", "train", "valid", "plan", "skip"),
        *("weights", "resume"),
    ),
    "predict": ("config", "output", "manifest", "test", "sample", "trained"),
    "evaluate": ("config", "output", "manifest", "valid", "trained"),
    "preview": ("config", "output", "manifest", "train", "plan"),
    "doctor": (
        *("config", "output", "data", "manifest", "values", "train", "valid", "test"),
        *("sample", "plan", "skip", "batch", "weights", "resume", "trained"),
    ),
}
SPLITS = {  # split: the Config field of its files, and whether its records carry labels
    "train": ("train_files", True),
    "valid": ("valid_files", True),
    "test": ("test_files", False),
}
NEEDED_BY = {"train": "train", "valid": "evaluate", "test": "predict"}  # an empty field stops it


class Unchecked(Exception):
    """A check that needs another's result, when that one found a problem (said already)."""


@dataclasses.dataclass
class Preflight:
    """What the checks found, for the command to use, and every problem they met."""

    command: str
    cfg: Config  # as the command resolved it (source.resolved): checked, never changed here
    found: Accelerator
    say: Callable[[str], None]
    data: source.Records | source.TfdsSet | source.CompetitionImages  # what trains
    manifest: dict | None = None
    splits: dict[str, source.Split] = dataclasses.field(default_factory=dict)  # by split
    plan: plan.Plan | None = None
    backbone: backbones.Backbone | None = None  # loaded once: train builds its model on it
    skipped: frozenset[str] = frozenset()  # bad training records left out (--bad-records skip)
    sample: pd.DataFrame | None = None
    layout: submission.Shape | None = None  # the columns submission.csv will have
    thresholds: list[float] | None = None  # multi-label: each class's, checked
    runs: list[Config] = dataclasses.field(default_factory=list)  # whose trained weights predict
    said: dict[str, str] = dataclasses.field(default_factory=dict)  # by check, as doctor says it
    problems: list[str] = dataclasses.field(default_factory=list)
    failed: set[str] = dataclasses.field(default_factory=set)  # the checks that found one
    done: dict[str, bool] = dataclasses.field(default_factory=dict)  # by check: passed

    def passed(self, name: str) -> bool:
        """Run check `name` once (a later ask gets its first answer): whether it passed."""
        if name not in self.done:
            check_one, topic = CHECKS[name]
            self.done[name] = False
            try:
                said = check_one(self.cfg, self.found, self)
            except Unchecked:
                return False
            except UserError as error:
                self.problems.append(str(error))
                self.failed.add(name)
                self.say(f"{topic}: PROBLEM: {error}")
                return False
            self.done[name] = True
            if said:
                self.said[name] = said
                self.say(said)
        return self.done[name]

    def needs(self, *names: str) -> None:
        """Stop the asking check, unproblematically, unless every check named passed."""
        answers = [self.passed(name) for name in names]  # each runs, and says its problem
        if not all(answers):
            raise Unchecked()

    def split(self, name: str) -> source.Split | None:
        """The split as checked; None when it is empty or its check found a problem."""
        return self.splits.get(name) if self.passed(name) else None


def check(cfg: Config, found: Accelerator, command: str, say=lambda line: None) -> Preflight:
    """Run every check `command` needs on the config as resolved (source.resolved); `say`
    gets what each found (doctor prints it)."""
    state = Preflight(command, cfg, found, say, source.of(cfg))
    for name in NEEDS[command]:
        state.passed(name)
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
    holder = held_by(output_dir(cfg)) if state.command == "doctor" else ""
    if holder:  # train would be refused the folder
        raise UserError(
            f"{named('output_dir')} {output_dir(cfg)} is in use by a running train ({holder}); "
            f"let it finish or stop it, or give this run another {named('output_dir')}"
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
        state.needs("manifest")  # a set that cannot be prepared has no splits to check
        state.splits[name] = source.of(cfg, field).split(cfg, field, labeled)
        return f"{name}: {state.splits[name].said}"

    return check_split


def manifest(cfg, found, state):
    _, state.manifest = state.data.resolved(cfg)
    return state.data.describe(cfg, state.manifest) if state.manifest else ""


def values(cfg, found, state):
    return given_values(cfg)


def sample(cfg, found, state):
    state.sample = submission.load_sample(cfg)
    shape = submission.layout(cfg, state.sample, cfg.num_classes, config.class_names(cfg))
    state.layout = shape
    test = state.split("test") if "test" in NEEDS[state.command] else None
    if test:  # a submission must never lack an id: check before the model
        submission.check_ids(test.ids, state.sample, shape.id_column, test.fields, test.skipped)
    what = shape.describe(cfg.multi_label)
    mapping = shape.numbering(config.class_names(cfg))
    what += f"; {mapping}" if mapping else ""
    if state.sample is None:
        return f"sample submission: none, rows will be sorted by id; columns: {what}"
    rows = len(state.sample)
    return f"sample submission: {field_path(cfg, 'sample_submission')} ({rows} rows; {what})"


def plan_of_run(cfg, found, state):
    train = state.split("train")
    if train is None:
        raise Unchecked()  # the training files' problem is said already
    state.plan = plan.make(cfg, found, train.records)
    return state.plan.describe()


def batch(cfg, found, state):
    """Built, not read: its shapes are known at once. XLA compiles only static shapes."""
    state.needs("plan")
    train = state.splits["train"]
    training = pipeline.for_training(train.files, cfg, state.plan.global_batch, found.image_dtype)
    pipeline.check_static(training, "train_files")
    return f"train batch: {pipeline.describe_spec(training.element_spec)}"


def skip(cfg, found, state):
    """With --bad-records skip, decode every training image now and leave the bad ones out."""
    train = state.split("train") if cfg.bad_records == "skip" else None
    shards = state.data.scanned(cfg, train.files, True) if train else None
    if shards is None:
        return ""  # nothing to skip, or a TFDS set, whose images TFDS checked when preparing it
    state.skipped = scan.skipped(shards)
    bad = [shard for shard in shards if shard.bad]
    return f"bad records: {len(state.skipped)} in {len(bad)} shards, left out of training" + (
        "".join(f"\n  {shard.describe()}" for shard in bad)
    )


def weights(cfg, found, state):
    """Load the backbone's weights as train will use them, so an offline machine without the
    preset, or a folder of another model, is found before training; train reuses them."""
    precision = state.plan.precision if state.passed("plan") else "float32"
    with found.scope():  # a TensorFlow strategy's variables are made in its scope
        state.backbone = backbones.load(cfg, precision)
    return f"weights: {cfg.backbone}, {state.backbone.source}"


def resume(cfg, found, state):
    state.needs("plan")
    if state.command == "doctor":  # with records in folds, each fold resumes from its folder
        state.needs("manifest")
        resumed = [checkpoints.check_resumable(run, state.plan) for run in folds.runs(cfg)]
        return "resume: " + "; ".join(resumed)
    return f"resume: {checkpoints.check_resumable(cfg, state.plan)}"


def trained(cfg, found, state):
    state.needs("manifest")  # which folds the data has comes from it
    state.runs = folds.trained_runs(cfg) if state.command != "evaluate" else [cfg]
    if state.command == "doctor":  # train makes them, or replaces them: in its fold folders
        runs = state.runs if state.runs != [cfg] else folds.runs(cfg)
        described = [checkpoints.describe_trained(run) for run in runs]
        return "trained weights: " + "; ".join(described)
    being_trained(cfg)
    paths = [checkpoints.check_trained(run) for run in state.runs]
    if cfg.multi_label:  # predict's and evaluate's: read before the model runs
        state.thresholds = thresholds.averaged(state.runs)
    return f"trained weights: {', '.join(paths)}"


def being_trained(cfg: Config) -> None:
    """Refuse a trained run a train is writing now (its folder, or for a fold's run the folder
    above it, held): its weights are being replaced, a fold's perhaps from scratch."""
    folder = trained_dir(cfg)
    held = [folder, folder.parent] if folder.name.startswith("fold") else [folder]
    for place in held:
        holder = held_by(place)
        if holder:
            raise UserError(
                f"{place} is in use by a running train ({holder}): the models in it are being "
                f"replaced; let it finish, or set {named('trained_dir')} to a finished run"
            )


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


def bad_image(checked: Preflight, error: Exception, stopped: str, fix: str) -> Exception:
    """The error for a record the pipeline could not read mid-run: the preflight reads labels
    and ids, not images, so decode every image of the run's splits now and name the shards
    (and, for test records, the ids); `stopped` says what was kept, `fix` what to do."""
    print(f"an image did not decode ({first_line(error)}); scanning every image")
    named_shards = []
    for name, split in checked.splits.items():
        reading = source.of(checked.cfg, SPLITS[name][0])
        shards = reading.scanned(checked.cfg, split.files, name != "test") or []
        named_shards += [shard.describe() for shard in shards if shard.problems]
    if not named_shards:
        return error  # not the data's fault: show TensorFlow's own error
    if len(named_shards) == 1:  # one file: one line, as every other error
        return UserError(f"{stopped}: {named_shards[0]}; {fix}")
    listed = "\n".join(f"  {line}" for line in named_shards)
    return UserError(f"{stopped}:\n{listed}\n{fix}; `doctor --scan` lists them")
