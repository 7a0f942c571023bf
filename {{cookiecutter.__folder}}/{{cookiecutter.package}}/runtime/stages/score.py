"""`score`: the output's submission.csv against the true labels, joined by id, with the
metrics the submission's columns allow (scoring.py computes them), and whether its
rows follow the sample submission row for row."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd

from .. import scoring
from ..config import Config, given_fields, names_in
from ..data import tables
from ..errors import UserError, named
from ..outputs.run_record import read_record, run_records
from ..scoring import METRICS
from .run import Run

CONFIG_FIELDS = ("competition", "data_dir", "output_dir", "sample_submission", "id_column",
                 "label_column", "metric", "num_classes", "pauc_min_tpr", "map_k",
                 "target_weights")  # fmt: skip
# The metrics of each class's probability over all images (ROC AUC): of any file of them.
EVERY_CLASS = [name for name, metric in METRICS.items()
               if metric.reads == "probabilities" and not metric.single_label]  # fmt: skip


def read_table(path: str, *columns: str) -> pd.DataFrame:
    """A CSV file as text (ids such as 007 stay as they are), after checking it has `columns`;
    a byte-order mark, as spreadsheet programs write, is read past."""
    try:
        table = tables.read_csv(path)
    except FileNotFoundError:
        raise UserError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise UserError(f"{path} is a folder; give the CSV file") from None
    except (ValueError, pd.errors.ParserError) as error:  # not UTF-8, empty, not a CSV
        raise UserError(f"{path}: {error}; give the CSV file") from None
    if missing := [column for column in columns if column not in table.columns]:
        raise UserError(
            f"{path} has no column {missing[0]!r} (it has {list(table.columns)}); check "
            f"{named('id_column')} and {named('label_column')}"
        )
    return table


def sample_columns(run: Run, sample: str, trained: str) -> tuple[str, str]:
    """The id and label columns to score by: those given, else the sample's (or, without one, the
    submission's), as predict wrote submission.csv by them (its id column: the run's, `trained`,
    wherever the sample has it, else its first; and its one label column), else the defaults."""
    cfg, given = run.cfg, given_fields(run.cfg, run.sources)
    id_column, label_column = cfg.id_column, cfg.label_column
    if not sample or not Path(sample).is_file():
        return id_column, label_column
    present = list(read_table(sample).columns)
    if "id_column" not in given and id_column not in present:
        id_column = trained if trained in present else present[0]
    rest = [column for column in present if column != id_column]
    if "label_column" not in given and label_column not in present and len(rest) == 1:
        label_column = rest[0]
    return id_column, label_column


def check_same_kind(truth: pd.Series, guessed: pd.Series, submission: str, solution: str) -> None:
    """Labels are compared as text: class names on one side and class numbers on the other
    never match, and would score 0 as if the model had learned nothing."""
    ours, theirs = (set(" ".join(labels).split()) for labels in (guessed, truth))
    numbers = [bool(side) and all(token.isdigit() for token in side) for side in (ours, theirs)]
    names = [bool(side) and not any(token.isdigit() for token in side) for side in (ours, theirs)]
    if (numbers[0] and names[1]) or (names[0] and numbers[1]):
        kinds = ["class numbers" if number else "class names" for number in numbers]
        raise UserError(
            f"{submission} labels its images with {kinds[0]} (e.g. {guessed.iloc[0]!r}), "
            f"{solution} with {kinds[1]} (e.g. {truth.iloc[0]!r}): they cannot be compared. "
            "predict writes what the sample submission shows: check "
            f"{named('sample_submission')} and --solution"
        )


def check_rows_match(submission: str, sample: str, id_column: str) -> int:
    """The number of rows, after checking the submission's ids follow the sample row for row."""
    ours = read_table(submission, id_column)[id_column].tolist()
    theirs = read_table(sample, id_column)[id_column].tolist()
    if ours != theirs:
        pairs = enumerate(zip(ours, theirs, strict=False))
        first = next((i for i, (a, b) in pairs if a != b), min(len(ours), len(theirs)))
        raise UserError(
            f"{submission} ({len(ours)} rows) does not follow {sample} ({len(theirs)} rows) "
            f"row for row (first difference at row {first}); write it again with `predict`"
        )
    return len(ours)


def score_files(
    submission: str, solution: str, id_column: str, label_column: str, cfg: Config | None = None
) -> dict:
    """Scores of a submission joined to the solution by id, by every metric its columns allow
    (scoring.METRICS: a probability column per class, or labels), `cfg`'s where they allow it."""
    from sklearn.preprocessing import MultiLabelBinarizer  # a second to load: not for --help

    theirs, ours = read_table(solution), read_table(submission, id_column)
    asked = METRICS.get(cfg.metric) if cfg else None
    kind = asked.targets if asked else "classes"  # values, shares: a column each
    given = [column for column in names_in(label_column) if column in ours.columns]  # in order
    columns = [label_column] if kind == "classes" else given or list(ours.columns.drop(id_column))
    if not {id_column, *columns} <= set(theirs.columns):
        raise UserError(
            f"{solution} has the columns {list(theirs.columns)}, {submission} "
            f"{list(ours.columns)}: the solution needs the id column {id_column!r} and the "
            f"label column {', '.join(columns)!r}; give one that has them, or set "
            f"{named('id_column')} and {named('label_column')}"
        )
    truth = theirs.set_index(id_column)[columns]
    predicted = ours.set_index(id_column)
    if set(predicted.index) != set(truth.index):
        raise UserError(f"{submission} and {solution} hold different ids")
    predicted = predicted.loc[truth.index]  # joined by id, not by row
    if kind != "classes":
        return numbers_scores(cfg, truth, predicted[columns], submission, solution)
    truth = truth[label_column]
    if label_column not in predicted.columns:  # a probability column per class, by class name
        classes, probabilities = list(predicted.columns), predicted.to_numpy(float)
        truth_rows = MultiLabelBinarizer(classes=classes).fit_transform(truth.str.split())
        scores = {name: scoring.mean_roc_auc(truth_rows, probabilities) for name in EVERY_CLASS}
        one_each = (truth_rows.sum(axis=1) == 1).all()
        if asked and asked.reads == "probabilities" and asked.single_label and one_each:
            counted = dataclasses.replace(cfg, num_classes=len(classes))  # one class each
            scores[cfg.metric] = scoring.of_run(counted, truth_rows.argmax(1), probabilities)
        return scores
    guessed = predicted[label_column]
    binary = cfg is not None and cfg.num_classes == 2 and not cfg.multi_label
    if binary and asked.reads == "probabilities" and not asked.ranked:  # the positive's
        return binary_scores(cfg, truth, guessed, submission)
    if asked and asked.ranked:
        return {cfg.metric: mean_average_precision(truth, guessed, cfg.map_k)}
    check_same_kind(truth, guessed, submission, solution)
    if (truth.str.contains(" ") | guessed.str.contains(" ")).any():  # several labels per image
        binarizer = MultiLabelBinarizer().fit([*truth.str.split(), *guessed.str.split()])
        rows = [binarizer.transform(labels.str.split()) for labels in (truth, guessed)]
        return {name: scoring.score_labels(*rows, name) for name in of_answers(several=True)}
    scores = {name: scoring.score_labels(truth, guessed, name) for name in of_answers()}
    if asked and asked.graded:  # grades: the class numbers
        if not all(label.isdigit() for label in (*truth, *guessed)):
            raise UserError(
                f"{submission}, {solution}: {cfg.metric} scores grades, numbers 0 and up; "
                f"these hold other labels (e.g. {truth.iloc[0]!r})"
            )
        grades = [labels.astype(int) for labels in (truth, guessed)]
        scores[cfg.metric] = scoring.score_labels(*grades, cfg.metric, num_classes=cfg.num_classes)
    return scores


def numbers_scores(cfg: Config, truth, predicted, submission: str, solution: str) -> dict:
    """Every metric of the run's kind: of values (a column per target) or shares (per class)."""
    try:
        rows = [table.to_numpy(float) for table in (truth, predicted)]
    except ValueError as error:
        raise UserError(f"{submission}, {solution}: {error}; each column holds numbers") from None
    run = dataclasses.replace(cfg, num_classes=rows[0].shape[1])  # target_weights' count
    kind = METRICS[cfg.metric].targets
    return {name: scoring.of_run(dataclasses.replace(run, metric=name), *rows)
            for name, metric in METRICS.items() if metric.targets == kind}  # fmt: skip


def of_answers(several: bool = False) -> list[str]:
    """The metrics of any file of labels: of each image's class, or (`several`) set of labels."""
    return [name for name, metric in METRICS.items() if metric.reads == "labels"
            and not metric.graded and metric.several == several]  # fmt: skip


def binary_scores(cfg: Config, truth: pd.Series, guessed: pd.Series, submission: str) -> dict:
    """The metric and ROC AUC's of one probability per image against labels 0 and 1."""
    positive = pd.to_numeric(guessed, errors="coerce")
    wrong = positive.isna() | ~positive.between(0, 1) | ~truth.isin(["0", "1"]).to_numpy()
    if wrong.any():
        raise UserError(
            f"{submission}: {cfg.metric} scores one probability in 0..1 per image against "
            "labels 0 and 1 (a binary target); write it with `predict`"
        )
    labels = truth.astype(int).to_numpy()
    probabilities = np.stack([1 - positive.to_numpy(float), positive.to_numpy(float)], axis=1)
    return {name: scoring.of_run(dataclasses.replace(cfg, metric=name), labels, probabilities)
            for name in [*EVERY_CLASS, cfg.metric]}  # fmt: skip


def mean_average_precision(truth: pd.Series, guessed: pd.Series, k: int) -> float:
    """MAP@k of each image's listed labels (the most probable first) against its one label."""
    ranks = [
        labels.split()[:k].index(label) + 1 if label in labels.split()[:k] else 0
        for label, labels in zip(truth, guessed, strict=True)
    ]
    return sum(1 / rank for rank in ranks if rank) / len(ranks)


def arguments(parser) -> None:
    solution = "true labels (default: <data-dir>/solution.csv)"
    parser.add_argument("--solution", default="", help=solution)


def command(args, run: Run) -> int:
    cfg, at = run.cfg, run.places  # where this command reads and writes, found once
    submission = str(at.output / "submission.csv")
    solution = args.solution or at.in_data("solution.csv")
    if not (args.solution or Path(solution).exists()):  # most competitions keep theirs hidden
        raise UserError(
            f"no true labels to score with: {solution} does not exist; give them with "
            "--solution FILE (a CSV of ids and labels, as the sample submission has them)"
        )
    sample = at.file("sample_submission")  # "" where none is given
    with_sample = sample and Path(sample).is_file()
    records = run_records(at.output)  # the run's id column, as its model.json names it
    trained = read_record(records[0]).get("id_column", "") if records else ""
    id_column, label_column = sample_columns(run, sample if with_sample else submission, trained)
    scores = score_files(submission, solution, id_column, label_column, cfg)
    if with_sample:
        count = check_rows_match(submission, sample, id_column)
        print(f"rows: {count}, ids match {sample} row for row")
    print(f"submission: {Path(submission).resolve()}")
    for metric, value in scores.items():
        print(f"{metric}: {value:.4f}")
    return 0
