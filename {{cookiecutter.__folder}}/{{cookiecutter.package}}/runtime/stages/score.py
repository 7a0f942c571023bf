"""`score`: the output's submission.csv against the true labels, joined by id, with the
metrics the submission's columns allow (learning/scoring.py computes them), and whether its
rows follow the sample submission row for row."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Config, inputs_of
from ..data import tables
from ..errors import UserError, named
from ..learning.scoring import mean_roc_auc, score_labels
from ..platform.paths import data_path, field_path, output_path

if TYPE_CHECKING:
    import pandas as pd

# The Config fields `score` reads.
CONFIG_FIELDS = (
    "competition",
    "data_dir",
    "output_dir",
    "sample_submission",
    "id_column",
    "label_column",
)


def read_table(path: str, *columns: str) -> pd.DataFrame:
    """A CSV file as text (ids such as 007 stay as they are), after checking it has `columns`;
    a byte-order mark, as spreadsheet programs write, is read past."""
    import pandas as pd  # slow to load: `score --help` needs none

    try:
        table = tables.read_csv(path)
    except FileNotFoundError:
        raise UserError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise UserError(f"{path} is a folder; give the CSV file") from None
    except (ValueError, pd.errors.ParserError) as error:  # not UTF-8, empty, not a CSV
        raise UserError(f"{path}: {error}; give the CSV file") from None
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise UserError(
            f"{path} has no column {missing[0]!r} (it has {list(table.columns)}); check "
            f"{named('id_column')} and {named('label_column')}"
        )
    return table


def sample_columns(cfg: Config, sample: str) -> tuple[str, str]:
    """The id and label columns to score by: those given, else the sample's (or, without one,
    the submission's), as predict wrote submission.csv by them (its id column, and its one
    label column), else the defaults."""
    id_column, label_column = cfg.id_column, cfg.label_column
    if not sample or not Path(sample).is_file():
        return id_column, label_column
    present = list(read_table(sample).columns)
    named = inputs_of(cfg).given
    if "id_column" not in named and id_column not in present:
        id_column = present[0]
    rest = [column for column in present if column != id_column]
    if "label_column" not in named and label_column not in present and len(rest) == 1:
        label_column = rest[0]
    return id_column, label_column


def check_same_kind(truth: pd.Series, guessed: pd.Series, submission: str, solution: str) -> None:
    """Labels are compared as text: class names on one side and class numbers on the other
    never match, and would score 0 as if the model had learned nothing."""

    def tokens(labels: pd.Series) -> set[str]:
        return set(" ".join(labels).split())

    ours, theirs = tokens(guessed), tokens(truth)
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


def score_files(submission: str, solution: str, id_column: str, label_column: str) -> dict:
    """Scores of a submission, joined to the solution (id and label columns) by id: accuracy
    and macro F1 of a label column, samples F1 of space-separated labels, ROC AUC of a
    probability column per class."""
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.preprocessing import MultiLabelBinarizer

    theirs, ours = read_table(solution), read_table(submission, id_column)
    if not {id_column, label_column} <= set(theirs.columns):
        raise UserError(
            f"{solution} has the columns {list(theirs.columns)}, {submission} "
            f"{list(ours.columns)}: the solution needs the id column {id_column!r} and the "
            f"label column {label_column!r}; give one that has them, or set "
            f"{named('id_column')} and {named('label_column')}"
        )
    truth = theirs.set_index(id_column)[label_column]
    predicted = ours.set_index(id_column)
    if set(predicted.index) != set(truth.index):
        raise UserError(f"{submission} and {solution} hold different ids")
    predicted = predicted.loc[truth.index]  # joined by id, not by row
    if label_column not in predicted.columns:  # a probability column per class, by class name
        classes = list(predicted.columns)
        truth_rows = MultiLabelBinarizer(classes=classes).fit_transform(truth.str.split())
        return {"roc_auc": mean_roc_auc(truth_rows, predicted.to_numpy(float))}
    guessed = predicted[label_column]
    check_same_kind(truth, guessed, submission, solution)
    if (truth.str.contains(" ") | guessed.str.contains(" ")).any():  # several labels per image
        binarizer = MultiLabelBinarizer().fit([*truth.str.split(), *guessed.str.split()])
        rows = [binarizer.transform(labels.str.split()) for labels in (truth, guessed)]
        return {"samples_f1": score_labels(*rows, "samples_f1")}
    return {
        "macro_f1": float(f1_score(truth, guessed, average="macro", zero_division=0)),
        "accuracy": float(accuracy_score(truth, guessed)),
    }


def arguments(parser) -> None:
    parser.add_argument(
        "--solution", default="", help="true labels (default: <data-dir>/solution.csv)"
    )


def command(args, cfg: Config, found=None) -> int:
    """`score`: the output's submission.csv against the solution, and, when the sample
    submission is there, whether its rows are the sample's, row for row."""
    submission = str(output_path(cfg, "submission.csv"))
    solution = args.solution or data_path(cfg, "solution.csv")
    if not (args.solution or Path(solution).exists()):  # most competitions keep theirs hidden
        raise UserError(
            f"no true labels to score with: {solution} does not exist; give them with "
            "--solution FILE (a CSV of ids and labels, as the sample submission has them)"
        )
    sample = field_path(cfg, "sample_submission") if cfg.sample_submission else ""
    with_sample = sample and Path(sample).is_file()
    id_column, label_column = sample_columns(cfg, sample if with_sample else submission)
    scores = score_files(submission, solution, id_column, label_column)
    if with_sample:
        count = check_rows_match(submission, sample, id_column)
        print(f"rows: {count}, ids match {sample} row for row")
    print(f"submission: {Path(submission).resolve()}")
    for metric, value in scores.items():
        print(f"{metric}: {value:.4f}")
    return 0
