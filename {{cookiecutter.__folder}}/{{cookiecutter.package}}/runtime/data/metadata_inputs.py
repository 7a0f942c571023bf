"""A run's metadata inputs (metadata.py encodes them): the table its data holds (the records'
metadata.csv, or the training CSV and Config.test_csv beside images), the columns it uses,
the encoding fitted on its training folds and saved with it, and each split's rows.

train calls `for_training` (and saves the encoding it fitted beside its weights), predict
`for_test` with the encoding the trained run saved.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..config import Config, validating_fold
from ..errors import UserError, named
from ..platform.files import reaching
from ..platform.paths import Places
from . import images, metadata, tables
from .kinds import Data


@dataclasses.dataclass
class Found:
    """Every training image's row (id, fold, then the columns) and what it came from."""

    table: pd.DataFrame
    columns: list[str]  # those the run uses
    left_out: dict[str, str]  # with why
    where: str  # the table, as messages name it


def found(cfg: Config, places: Places, data: Data) -> Found | None:
    """The metadata the run's data holds and the run asks for; None for images alone."""
    if not cfg.metadata_columns.strip():
        return None
    if data.trains_from == "images":
        return from_training_csv(cfg, places)
    kept = (data.manifest or {}).get("metadata") or {}
    available = kept.get("columns") or []
    where = places.in_data(metadata.TABLE)
    if cfg.metadata_columns == metadata.AUTO:
        columns = available
    else:
        columns = [name.strip() for name in cfg.metadata_columns.split(",") if name.strip()]
        missing = [name for name in columns if name not in available]
        if missing:
            kept = f"keep {', '.join(available)}" if available else "keep no metadata"
            raise UserError(
                f"{named('metadata_columns')} {cfg.metadata_columns!r}: the records {kept}, not "
                f"{missing[0]!r}; write them again with `records --test-csv ... "
                f"--metadata-columns ...`, or leave {missing[0]!r} out"
            )
    if not columns:
        return None
    table = read_table(where)
    table = table[table["split"] == "train"]
    return Found(table[["id", "fold", *columns]], columns, kept.get("left_out") or {}, where)


def read_table(where: str) -> pd.DataFrame:
    import tensorflow as tf  # the records may be in a bucket

    with reaching(where):
        try:
            with tf.io.gfile.GFile(where, "rb") as file:
                return tables.read_csv(file.read(), where)
        except (OSError, ValueError, tf.errors.OpError) as error:
            raise UserError(
                f"{where}: {error}; write the records again with `records`, or put back the "
                "file it wrote"
            ) from None


def from_training_csv(cfg: Config, places: Places) -> Found | None:
    """Beside the images: the training CSV's columns, chosen against Config.test_csv's."""
    made = images.table(cfg, places)
    train = made.found["columns"]
    test = test_table(cfg, places) if cfg.test_csv else None
    reserved = {made.found["id_column"], made.found["label_column"], cfg.group_column}
    columns, left_out = metadata.chosen(
        train, test, cfg.metadata_columns, reserved, named("metadata_columns"), named("test_csv")
    )
    if not columns:
        return None
    rows = pd.DataFrame({"id": made.rows["id"], "fold": made.rows["fold"].astype(str)})
    table = rows.join(train[columns].reset_index(drop=True))
    return Found(table, columns, left_out, places.file("train_csv"))


def test_table(cfg: Config, places: Places) -> pd.DataFrame:
    return metadata.read_test_table(places.file("test_csv"), named("test_csv"), cfg.id_column)


def for_training(cfg: Config, places: Places, data: Data):
    """The run's metadata.Features for every training image, its encoding (`spec`) fitted on
    the training folds; None for images alone."""
    held = found(cfg, places, data)
    if held is None:
        return None
    table = held.table
    in_folds = table["fold"].nunique() > 1  # as the data is split, whatever Config.folds says
    training = table[table["fold"] != str(validating_fold(cfg))] if in_folds else table
    spec = metadata.fitted(training, held.columns)
    features = metadata.Features(spec, table["id"].tolist(), metadata.encoded(spec, table))
    print(
        f"metadata: {', '.join(held.columns)} from {held.where} ({features.width} inputs, "
        f"fitted on {len(training)} training images)"
        + (f"; left out: {metadata.left_out_line(held.left_out)}" if held.left_out else "")
    )
    return features


def for_test(
    cfg: Config, places: Places, data: Data, specs: list[dict | None], ids: list[str],
    who: str = "the trained run",
) -> list:  # fmt: skip
    """The test images' metadata.Features by each trained run's encoding in `specs` (None:
    that run trained on images alone), from one reading of their table: Config.test_csv,
    else the records' metadata.csv. `who` joins the rows, as a refusal names it."""
    used = [spec for spec in specs if spec]
    if not used:
        return [None] * len(specs)
    columns = sorted({column for spec in used for column in metadata.columns_of(spec)})
    fix = (
        f"{who} joins {', '.join(columns)} to each image: give each test image's "
        f"row in {named('test_csv')}"
    )
    if cfg.test_csv:
        where = places.file("test_csv")
        table = test_table(cfg, places)
    else:
        where = places.in_data(metadata.TABLE)
        import tensorflow as tf

        with reaching(where):
            there = data.tests_from != "tfds" and tf.io.gfile.exists(where)
        if not there:
            raise UserError(f"no table of the test images' metadata; {fix}")
        table = read_table(where)
        table = table[table["split"] == "test"]
    missing = [column for column in columns if column not in table]
    if missing:
        raise UserError(f"{where} has no column {missing[0]!r}; {fix}")
    rows = metadata.of_ids_rows(table, ids, where, fix)  # each id matched once, for every run
    return [metadata.Features(spec, list(ids), metadata.encoded(spec, rows)) if spec else None
            for spec in specs]  # fmt: skip


# Who joins the test table's rows to pseudo-labeled test images, as a refusal names it.
PSEUDO_WHO = "this run, training on pseudo-labeled test images,"


def with_test_rows(
    cfg: Config, places: Places, data: Data, training: metadata.Features, ids: list[str]
):
    """The training images' Features and, by the same encoding, the rows of the test images
    `ids` (pseudo-labeled, trained on beside them: Config.test_csv's, or the records')."""
    (test,) = for_test(cfg, places, data, [training.spec], ids, PSEUDO_WHO)
    shared = sorted(set(training.ids) & set(test.ids))
    if shared:
        raise UserError(
            f"{named('pseudo_labels')}: {len(shared)} test images share a training image's id "
            f"(e.g. {shared[0]!r}), so their metadata rows cannot be told apart; give the test "
            "images ids of their own"
        )
    values = np.vstack([training.values, test.values])
    return metadata.Features(training.spec, [*training.ids, *test.ids], values)


def for_validation(cfg: Config, places: Places, data: Data, spec: dict | None):
    """The training images' metadata.Features by a trained run's encoding (evaluate)."""
    if spec is None:
        return None
    held = found(cfg, places, data)
    if held is None:
        columns = ", ".join(metadata.columns_of(spec))
        raise UserError(
            f"the trained run joins {columns} to each image, and the data holds no such table now "
            f"({named('metadata_columns')} {cfg.metadata_columns!r}); give the data it trained on"
        )
    return metadata.Features(spec, held.table["id"].tolist(), metadata.encoded(spec, held.table))
