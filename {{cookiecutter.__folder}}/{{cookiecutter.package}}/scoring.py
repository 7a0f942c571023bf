"""The competition metric, on labels or on a submission file against the true labels."""

from __future__ import annotations

import csv

from sklearn.metrics import accuracy_score, f1_score

from .config import UserError, named


def score(truth, predicted, metric: str) -> float:
    if metric == "macro_f1":
        return float(f1_score(truth, predicted, average="macro"))
    return float(accuracy_score(truth, predicted))


def read_columns(path: str, *columns: str) -> list[tuple[str, ...]]:
    """The named columns of every row of a CSV file, in file order."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as file:  # spreadsheets add a BOM
            return [tuple(row[column] for column in columns) for row in csv.DictReader(file)]
    except FileNotFoundError:
        raise UserError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise UserError(f"{path} is a folder; give the CSV file") from None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not a text CSV file; give the CSV file") from None
    except KeyError as error:
        raise UserError(
            f"{path} has no column {error}; check {named('id_column')} and {named('label_column')}"
        ) from None


def read_labels(path: str, id_column: str, label_column: str) -> dict[str, str]:
    return dict(read_columns(path, id_column, label_column))


def ids_in_order(path: str, id_column: str) -> list[str]:
    return [key for (key,) in read_columns(path, id_column)]


def check_rows_match(submission: str, sample: str, id_column: str) -> int:
    """The number of rows, after checking the submission's ids follow the sample row for row."""
    ours, theirs = ids_in_order(submission, id_column), ids_in_order(sample, id_column)
    if ours != theirs:
        pairs = enumerate(zip(ours, theirs, strict=False))
        first = next((i for i, (a, b) in pairs if a != b), min(len(ours), len(theirs)))
        raise UserError(
            f"{submission} ({len(ours)} rows) does not follow {sample} ({len(theirs)} rows) "
            f"row for row (first difference at row {first}); write it again with `predict`"
        )
    return len(ours)


def score_files(submission: str, solution: str, id_column: str, label_column: str) -> dict:
    """Accuracy and macro F1 of a submission, joined to the solution by id."""
    predicted = read_labels(submission, id_column, label_column)
    truth = read_labels(solution, id_column, label_column)
    if set(predicted) != set(truth):
        raise UserError(f"{submission} and {solution} hold different ids")
    keys = sorted(truth)
    labels = [truth[key] for key in keys], [predicted[key] for key in keys]
    return {metric: score(*labels, metric) for metric in ("accuracy", "macro_f1")}
