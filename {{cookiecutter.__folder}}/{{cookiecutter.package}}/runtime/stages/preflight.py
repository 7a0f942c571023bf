"""Everything a run depends on that can be checked without training, checked before the model
is built (`doctor` prints every check), so a run that cannot work fails in seconds, not after an
epoch of TPU quota. A check in CHECKS takes what those before it found (a Preflight), returns a
Result, raises UserError, or returns None where a check it reads found a problem."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

import pandas as pd
import tensorflow as tf

from .. import config
from ..data.records import Split
from ..errors import UserError, first_line, named
from ..outputs import fitted, submission, trained_run
from ..outputs.run_files import CHECKPOINTS, refuse_others
from ..platform import processes, versions
from ..platform.files import is_url, unwritable
from ..platform.lock_holder import held_by
from ..scoring import METRICS
from . import folds
from .run import Run, with_data

if TYPE_CHECKING:  # what training_checks.py finds
    from ..data import corrections, pseudo_labels
    from ..learning import backbones, plan

T = TypeVar("T")
SPLITS = {  # split: the Config field of its files, and whether its records carry labels
    "train": ("train_files", True), "valid": ("valid_files", True), "test": ("test_files", False),
}  # fmt: skip
NEEDED_BY = {"train": "train", "valid": "evaluate", "test": "predict"}  # an empty field stops it


@dataclasses.dataclass(frozen=True)
class Result(Generic[T]):
    """What one check found: the line doctor prints ("": none), and the value later ones use."""

    line: str
    value: T = None


@dataclasses.dataclass(frozen=True)
class Trained:
    """The trained runs predict averages (evaluate's one), and their cuts or thresholds averaged."""

    runs: list[Run]
    thresholds: list[float] | None = None


@dataclasses.dataclass(slots=True)  # slots: a check that keeps its Result in a field not here fails
class Preflight:
    """Each kept Result (None: its check did not run or found a problem), and every problem."""

    command: str
    run: Run  # as the command started it: checked, never changed here
    data_dir: Result[str] | None = None  # None: a folder the splits are in is missing
    manifest: Result[dict | None] | None = None
    train: Result[Split | None] | None = None  # value None: the split's field is empty
    valid: Result[Split | None] | None = None
    test: Result[Split | None] | None = None
    # The sample (None: rows sorted by id), the submission's shape, each image's answer (None).
    sample: Result[tuple[pd.DataFrame | None, submission.Shape, list | None]] | None = None
    corrections: Result[corrections.Corrections] | None = None  # to the training labels
    pseudo: Result[pseudo_labels.PseudoLabels | None] | None = None  # test images trained on
    plan: Result[plan.Plan] | None = None
    skip: Result[frozenset[str]] | None = None  # bad training records left out (--bad-records skip)
    weights: Result[backbones.Backbone] | None = None  # loaded once: train builds its model on it
    resume: Result[None] | None = None  # train prints where it starts
    trained: Result[Trained] | None = None
    problems: list[str] = dataclasses.field(default_factory=list)

    @property
    def cfg(self):
        return self.run.cfg

    @property
    def splits(self) -> dict[str, Split]:
        checked = {"train": self.train, "valid": self.valid, "test": self.test}
        return {name: found.value for name, found in checked.items() if found and found.value}

    def scanned(self):
        """Each checked split's name, Split and shards, every image decoded (None: a TFDS set)."""
        for name, split in self.splits.items():
            field, labeled = SPLITS[name]
            spelled = None
            if not labeled and self.sample:  # a test image by its id as the sample spells it
                table, shape, _ = self.sample.value
                spelled = submission.as_sample_spells(split.ids, table, shape.id_column)
            yield name, split, self.run.data.reader(field).scanned(split.files, labeled, spelled)


@dataclasses.dataclass(frozen=True)
class Check:
    """A check, the topic of its problem, its commands, and its Preflight field ("": none)."""

    does: Callable[[Preflight], Result | None]
    topic: str
    commands: tuple[str, ...]
    keep: str = ""


def check(run: Run, command: str, say=lambda line: None, training: tuple = ()) -> Preflight:
    """Every check of `command`, in order (`training`'s before the trained weights'), to `say`."""
    checked = Preflight(command, run)
    for one in (*CHECKS[:-1], *training, CHECKS[-1]):
        if command not in one.commands:
            continue
        try:
            result = one.does(checked)
        except UserError as error:
            if str(error) not in checked.problems:  # two checks that read one bad field
                checked.problems.append(str(error))
            say(f"{one.topic}: PROBLEM: {error}")
            continue
        if result is None:
            continue  # what it needs found a problem, said already
        if one.keep:
            setattr(checked, one.keep, result)
        if result.line:
            say(result.line)
    return checked


def ready(run: Run, command: str, training: tuple = ()) -> Preflight:
    """The checks `command` needs (`training`: as `check`), or one error listing every problem."""
    state = check(run, command, training=training)
    if run.cfg.num_processes > 1:  # one process that stops alone leaves the others waiting
        processes.stop_together(state.problems)
    if len(state.problems) == 1:
        raise UserError(state.problems[0])
    if state.problems:
        raise UserError(
            f"`{command}` cannot start; {len(state.problems)} problems (`doctor` shows every "
            "check):\n" + "\n".join(f"- {problem}" for problem in state.problems)
        )
    return state


def config_values(p: Preflight) -> Result:
    """Config refuses bad values when it is made; a notebook may change a field after."""
    if wrong := config.problems(p.cfg):
        raise UserError("; ".join(wrong))
    return Result("")


def packages(p: Preflight) -> None:
    """Said here, not by keras-hub's preset loading, which blames the preset's folder."""
    if refused := versions.refusal(p.cfg.backbone):
        raise UserError(refused)


def output(p: Preflight) -> Result:
    """The folders the command writes can be written, and no train writes there now."""
    cfg, runs, output = p.cfg, train_runs(p), p.run.places.output
    # train writes into checkpoints/ too: a file of that name would stop it at epoch 1's end.
    training = p.command in ("train", "doctor")
    for folder in [run.places.output / CHECKPOINTS for run in runs] if training else [output]:
        if reason := unwritable(folder, buckets=True):
            raise UserError(
                f"cannot write the output in {folder}: {reason}; set {named('output_dir')} to "
                "a folder this run can write (in a Kaggle notebook: /kaggle/working)"
            )
    # No local data folder in the whole run's output folder: runs would write among its files.
    root, data = folds.run_root(output if is_url(output) else output.resolve()), p.run.places.data
    local = data and not is_url(root) and not is_url(data) and Path(data).is_dir()
    if local and Path(data).resolve().is_relative_to(root):
        raise UserError(
            f"{named('output_dir')} {root} holds the data folder {Path(data)}: a run writes only "
            f"into a folder of its own; give another, such as {root.parent / 'output'}"
        )
    # The user's files, another command's: left as they are (doctor checks train's folder).
    refuse_others(root, "train" if p.command == "doctor" else p.command)
    holder = held_by(output) if p.command == "doctor" else ""
    if holder:  # train would be refused the folder
        raise UserError(
            f"{named('output_dir')} {output} is in use by a running train ({holder}); "
            f"let it finish or stop it, or give this run another {named('output_dir')}"
        )
    source = named("output_dir") if cfg.output_dir else "default: no " + named("output_dir")
    line = f"output: {output} (from {source})"
    if runs[0] is not p.run:  # doctor: train writes each fold's run into its own folder
        line += "; train writes " + ", ".join(str(run.places.output) for run in runs)
    return Result(line)


def train_runs(p: Preflight) -> list[Run]:
    """The runs train makes: train's own, doctor's every run of folds.runs where it can say."""
    if p.command != "doctor" or p.run.data is None:
        return [p.run]
    try:
        return folds.runs(p.run)
    except UserError:
        return [p.run]


def data_dir(p: Preflight) -> Result[str]:
    """The data folder, which must exist where a split reads from it: one problem, not per file."""
    at = p.run.places
    folder, source = at.data, at.data_from
    local = "://" not in folder and not folder.startswith("tfds:")
    inside = os.path.abspath(folder) + os.sep
    fields = [field for field, _ in SPLITS.values() if getattr(p.cfg, field)]
    read_there = [
        field for field in fields
        if any(os.path.abspath(part).startswith(inside) for part in at.file(field).split(","))
    ]  # fmt: skip
    if local and read_there and not os.path.isdir(folder):
        raise UserError(
            f"the data folder {folder} does not exist (from {source}); give the folder that "
            "holds the competition's files with --data-dir (in a notebook: Config.data_dir), "
            "or fetch them into data/ with `kaggle download`"
        )
    return Result(f"data dir: {folder} (from {source})", folder)


def manifest(p: Preflight) -> Result[dict | None] | None:
    """What the data says of itself; read again for its problem where it did not read at start."""
    if p.data_dir is None:
        return None  # the data folder is missing: said once
    data = p.run.data or with_data(p.run).data
    return Result(data.train.describe(), data.manifest)


def values(p: Preflight) -> Result:
    return Result(config.given_values(p.cfg, p.run.sources))


def split(name: str) -> Callable[[Preflight], Result[Split | None] | None]:
    """The check of one split's files: their records counted, their labels or ids read."""
    field, labeled = SPLITS[name]

    def check_split(p: Preflight) -> Result[Split | None] | None:
        pooled = labeled and p.run.data and p.run.data.pooled  # valid: a share of the pool
        if not getattr(p.cfg, field) and not pooled:
            if p.command == NEEDED_BY[name]:
                raise UserError(f"nothing to {p.command}: {named(field)} is empty")
            return Result(f"{name}: none ({named(field)} is empty)")
        if p.manifest is None:
            return None  # a set that cannot be prepared has no splits to check
        read = p.run.data.reader(field).split(field, labeled)
        return Result(f"{name}: {read.said}", read)

    return check_split


def sample(p: Preflight) -> Result[tuple]:
    run, cfg, names = p.run, p.cfg, config.class_names(p.cfg)
    table = submission.load_sample(cfg, run.sources, run.places)
    test = p.test.value if p.test else None
    ids = test.ids if test else ()
    shape = submission.layout(cfg, run.sources, table, cfg.num_classes, names, ids)
    answers = submission.answers_of(cfg, run.places, table, shape.id_column, ids) if test else None
    if test and answers is None:  # a submission must never lack an id: check before the model
        submission.check_ids(test.ids, table, shape.id_column, test.fields, test.skipped)
    mapping = shape.numbering(names)
    what = shape.describe(cfg.multi_label) + (f"; {mapping}" if mapping else "")
    line = f"none, rows will be sorted by id; columns: {what}"
    if table is not None:
        line = f"{run.places.file('sample_submission')} ({len(table)} rows; {what})"
    return Result(f"sample submission: {line}", (table, shape, answers))


def trained(p: Preflight) -> Result[Trained] | None:
    if p.manifest is None:
        return None  # which folds the data has comes from it
    cfg, run = p.cfg, p.run
    runs = folds.trained_runs(run) if p.command != "evaluate" else [run]
    if p.command == "doctor":  # train makes them, or replaces them: in its fold folders
        shown = runs if runs[0] is not run else train_runs(p)
        described = [trained_run.describe_trained(one.cfg, one.places) for one in shown]
        return Result("trained weights: " + "; ".join(described), Trained(runs))
    # A trained run a train is writing now (its folder, or a fold's run's parent) is refused.
    for place in dict.fromkeys([run.places.trained, folds.run_root(run.places.trained)]):
        if holder := held_by(place):
            raise UserError(
                f"{place} is in use by a running train ({holder}): the models in it are being "
                f"replaced; let it finish, or set {named('trained_dir')} to a finished run"
            )
    made = folds.runs(run)  # the runs train makes: with data in folds, in fold folders
    nothing = runs[0] is run and made[0] is not run
    if nothing and not trained_run.trained_weights(run.places).is_file():
        raise UserError(  # nothing trained yet: name where train would leave it
            f"no trained weights at {trained_run.trained_weights(made[0].places)}, where train "
            f"writes fold {made[0].cfg.fold}'s; run `train` first or set {named('output_dir')}"
        )
    paths = [trained_run.check_trained(one.cfg, one.places) for one in runs]
    cuts, folders = None, [one.places.trained for one in runs]
    if cfg.multi_label:
        cuts = fitted.averaged_thresholds(folders, cfg.num_classes, config.class_names(cfg))
    elif METRICS[cfg.metric].graded:
        cuts = fitted.averaged_grade_cuts(folders, cfg.num_classes)
    return Result(f"trained weights: {', '.join(paths)}", Trained(runs, cuts))


EVERY = ("train", "predict", "evaluate", "preview", "doctor")
# In the order doctor prints them: a check runs after the ones whose results it reads. doctor
# runs what train needs, then what predict needs (weights not trained yet are no problem).
CHECKS = (
    Check(config_values, "config", EVERY),
    Check(packages, "packages", EVERY),
    Check(output, "output", EVERY),
    Check(data_dir, "data dir", EVERY, keep="data_dir"),
    Check(manifest, "records", EVERY, keep="manifest"),
    Check(values, "values", ("doctor",)),
    Check(split("train"), "train", ("train", "preview", "doctor"), keep="train"),
    Check(split("valid"), "valid", ("train", "evaluate", "doctor"), keep="valid"),
    Check(split("test"), "test", ("predict", "doctor"), keep="test"),
    Check(sample, "sample submission", ("predict", "doctor"), keep="sample"),
    # Here training_checks.CHECKS run: a notebook that only predicts carries none of them.
    Check(trained, "trained weights", ("predict", "evaluate", "doctor"), keep="trained"),
)


@contextlib.contextmanager
def bad_images_named(checked: Preflight, stopped: str, fix: str):
    """An image that does not decode in the block (fit, predict): every image decoded now, the
    error names the shards and test ids at fault. A DICOM file's py function: UnknownError."""
    try:
        yield
    except (tf.errors.InvalidArgumentError, tf.errors.UnknownError) as error:
        print(f"an image did not decode ({first_line(error)}); scanning every image")
        named_shards = [
            shard.describe() for *_, shards in checked.scanned() for shard in shards or []
            if shard.problems
        ]  # fmt: skip
        if not named_shards:
            raise  # not the data's fault: TensorFlow's own error
        if len(named_shards) == 1:  # one file: one line, as every other error
            raise UserError(f"{stopped}: {named_shards[0]}; {fix}") from error
        listed = "\n".join(f"  {line}" for line in named_shards)
        raise UserError(f"{stopped}:\n{listed}\n{fix}; `doctor --scan` lists them") from error
