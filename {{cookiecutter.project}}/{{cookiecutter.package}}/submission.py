"""submission.csv: one row per test id, in the sample submission's order, written whole."""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

from .config import UserError
from .files import written_whole


def read_sample(text: str, where: str, id_column: str, label_column: str):
    """The columns and ids of a sample submission, in its order, after checking its columns."""
    reader = csv.DictReader(io.StringIO(text))
    columns = reader.fieldnames or []
    if sorted(columns) != sorted([id_column, label_column]):
        raise UserError(
            f"{where} has columns {columns}, expected {id_column!r} and {label_column!r}; "
            "set --id-column and --label-column to the sample's column names"
        )
    return columns, [row[id_column] for row in reader]


def arrange(ids: list[str], labels: list[int], sample_ids: list[str] | None) -> list[tuple]:
    """(id, label) rows in the sample's order (sorted by id without one); every id exactly once."""
    repeated = [key for key, times in Counter(ids).items() if times > 1]
    if repeated:
        raise UserError(
            f"{len(repeated)} ids occur more than once in the test records, e.g. {repeated[:3]}; "
            "check --test-files for a shard given twice or ids that are not unique"
        )
    predicted = dict(zip(ids, labels, strict=True))
    if sample_ids is None:
        return sorted(predicted.items())
    missing = [key for key in sample_ids if key not in predicted]
    unexpected = sorted(set(predicted) - set(sample_ids))
    if missing or unexpected:
        raise UserError(
            f"test records and sample submission disagree: {len(missing)} sample ids have no "
            f"test record (e.g. {missing[:3]}), {len(unexpected)} test ids are not in the sample "
            f"(e.g. {unexpected[:3]}); check --test-files, --id-key and --sample-submission"
        )
    return [(key, predicted[key]) for key in sample_ids]


def write(path: Path, columns: list[str], id_column: str, rows: list[tuple]) -> None:
    """(id, label) rows under the sample's two columns, in the sample's column order."""
    label_first = columns[0] != id_column
    with written_whole(path) as temporary, open(temporary, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(columns)
        writer.writerows((label, key) if label_first else (key, label) for key, label in rows)
