"""The table beside each image (age, sex, site, a device's measures): which columns a run
uses, how each becomes numbers, and the lookup that joins them to each image in the pipeline.

Which (Config.metadata_columns): by default every column the training table and the test images'
table (Config.test_csv, `records --test-csv`) both hold, besides the id, label and group: a column
only the training table holds is never used, since the test images cannot supply it (it is often
made from the label, as ISIC 2024's diagnosis columns are). "" trains on the images alone.

How, fitted on the run's training folds only and saved with the run (metadata.json), so
predict and the inference notebook apply exactly what training fitted: a column of numbers is
standardised with their mean and deviation, a missing value becomes 0 and is flagged in a
feature of its own; any other column is one-hot over its values (the MOST_VALUES commonest),
with one slot for a value training never saw and for a missing one.

The table is the records' metadata.csv, or beside images the training CSV and Config.test_csv;
train calls `for_training` and saves the encoding, predict `for_test` with the one saved.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import tensorflow as tf

from ..config import AUTO, Config, validating_fold
from ..errors import UserError, named
from ..platform.files import FITTED, METADATA_TABLE, reaching
from ..platform.paths import Places
from . import images
from .kinds import Data
from .tables import read_csv, spellings, stem

SPEC = FITTED["metadata"]  # the run's encoding, beside its weights
TABLE = METADATA_TABLE  # records: every image's columns, by its record's id, beside the shards
OWN_COLUMNS = ("id", "split", "fold")  # what TABLE holds before the columns
MOST_VALUES = 32  # values one-hot per column; the rarer share the unknown slot
# Standardised numbers beyond this many deviations are clipped: one typo is not a scale.
SPREAD = 10.0


def chosen(
    train: pd.DataFrame, test: pd.DataFrame | None, requested: str, reserved: set[str],
    flag: str, tables: str,
) -> tuple[list[str], dict[str, str]]:  # fmt: skip
    """The columns used, in the training table's order, and those left out with why.
    `reserved` are the id, label and group columns; `flag` and `tables` name the option and
    the two tables in messages."""
    if not requested.strip():
        return [], {}
    if requested == AUTO:
        if test is None:  # nothing tells which columns the test images will have
            return [], {}
        used, left_out = [], {}
        for column in train.columns:
            if column in reserved:
                continue
            if column not in test.columns:
                left_out[column] = "only the training table has it"
            elif (train[column] == "").all():
                left_out[column] = "it holds no values"
            elif train[column].nunique() == 1 and set(test[column]) <= set(train[column]):
                left_out[column] = f"every image has {train[column].iloc[0]!r}"
            else:
                used.append(column)
        return used, left_out
    names = [name.strip() for name in requested.split(",") if name.strip()]
    for name in names:
        if name in reserved:
            raise UserError(
                f"{flag} {requested!r}: {name!r} is the id, label or group column, not metadata; "
                "leave it out"
            )
        if name not in train.columns:
            raise UserError(
                f"{flag} {requested!r}: the training table has no column {name!r}; its columns "
                f"are {', '.join(column for column in train.columns if column not in reserved)}"
            )
        if test is None:
            raise UserError(
                f"{flag} {requested!r}: no table of the test images says their {name!r}; give "
                f"it ({tables}), or --metadata-columns '' to train on the images alone"
            )
        if name not in test.columns:
            raise UserError(
                f"{flag} {requested!r}: the test images' table has no column {name!r}, so a model "
                "trained on it could not predict them; leave it out"
            )
        if (train[name] == "").all():
            raise UserError(f"{flag} {requested!r}: column {name!r} holds no values; leave it out")
    return names, {}


def left_out_line(left_out: dict[str, str]) -> str:
    return "; ".join(f"{column} ({why})" for column, why in left_out.items())


def fitted(train: pd.DataFrame, columns: list[str]) -> dict:
    """The encoding of `columns`, fitted on `train` (the run's training folds' rows)."""
    encodings = []
    for column in columns:
        present = train[column][train[column] != ""]
        if len(present) and pd.to_numeric(present, errors="coerce").notna().all():
            numbers = pd.to_numeric(present)
            deviation = float(numbers.std(ddof=0))
            std = deviation if deviation > 0 else 1.0
            how = {"kind": "number", "mean": float(numbers.mean()), "std": std}
        else:
            counts = present.value_counts()
            common = counts.sort_index().sort_values(ascending=False, kind="stable")
            how = {"kind": "category", "values": sorted(common.index[:MOST_VALUES])}
        encodings.append({"column": column, **how})
    return {"columns": encodings}


def feature_names(spec: dict) -> list[str]:
    """What each of the model's metadata inputs is, in order."""
    names = []
    for encoding in spec["columns"]:
        column = encoding["column"]
        if encoding["kind"] == "number":
            names += [column, f"{column} missing"]
        else:
            names += [f"{column}={value}" for value in encoding["values"]]
            names.append(f"{column} other or missing")
    return names


def columns_of(spec: dict) -> list[str]:
    return [encoding["column"] for encoding in spec["columns"]]


def width(spec: dict | None) -> int:
    return len(feature_names(spec)) if spec else 0


def encoded(spec: dict, table: pd.DataFrame) -> np.ndarray:
    """The table's rows as the model's metadata inputs (rows x width, float32)."""
    parts = []
    for encoding in spec["columns"]:
        values = table[encoding["column"]]
        if encoding["kind"] == "number":
            numbers = pd.to_numeric(values.where(values != ""), errors="coerce").to_numpy(float)
            missing = ~np.isfinite(numbers)
            scaled = (numbers - encoding["mean"]) / encoding["std"]
            scaled = np.clip(np.where(missing, 0.0, scaled), -SPREAD, SPREAD)
            parts += [scaled[:, None], missing[:, None].astype(float)]
        else:
            known = encoding["values"]
            index = {value: number for number, value in enumerate(known)}
            slots = values.map(index).fillna(len(known)).to_numpy(int)  # unknown: the last
            parts.append(np.eye(len(known) + 1)[slots])
    return np.concatenate(parts, axis=1).astype(np.float32)


def saved(path) -> dict | None:
    """The encoding a trained run saved (a bucket's too); None: it trained on images alone."""
    if not tf.io.gfile.exists(str(path)):
        return None
    with tf.io.gfile.GFile(str(path)) as file:
        try:
            spec = json.loads(file.read())
            feature_names(spec)
        except (ValueError, KeyError, TypeError) as error:
            raise UserError(
                f"{path} is not the metadata encoding train writes ({error}); train again, or "
                "restore the file"
            ) from None
    return spec


@dataclasses.dataclass
class Features:
    """Each image's metadata inputs by its id: what the pipeline joins to its image."""

    spec: dict
    ids: list[str]
    values: np.ndarray  # one row per id

    @property
    def width(self) -> int:
        return self.values.shape[1]

    def lookup(self):
        """A function from an example's id (a string tensor) to its inputs (float32)."""
        ids, rows = tf.constant(self.ids), tf.range(len(self.ids), dtype=tf.int64)
        index = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(ids, rows), -1)
        table = tf.constant(self.values)
        # Every id was matched to a row before the pipeline was built (`of_ids`); a row of
        # another id is never read, and the blank rows that fill a batch take row 0.
        return lambda key: tf.gather(table, tf.maximum(index.lookup(key), 0))

    def blank(self):
        return tf.zeros([self.width], tf.float32)


def of_ids_rows(table: pd.DataFrame, ids: list[str], where: str, fix: str) -> pd.DataFrame:
    """The rows of `table` (ids in its "id" column) for the images `ids`, in their order, an
    id matched with or without its file's extension; an id the table lacks is refused, naming
    it: an image without its row would be predicted from another's or from nothing."""
    by_id = table.drop_duplicates("id").set_index("id")
    keys = {stem(key): key for key in by_id.index} | {key: key for key in by_id.index}
    # The test folder's sub/t0.jpg is the table's t0.jpg or t0.
    matched = [next((keys[k] for k in spellings(key) if k in keys), "") for key in ids]
    missing = [key for key, found in zip(ids, matched, strict=True) if not found]
    if missing:
        raise UserError(
            f"{where} has no row for {len(missing)} of the {len(ids)} images (such as "
            f"{missing[0]!r}); {fix}"
        )
    return by_id.loc[matched].reset_index(drop=True)


def metadata_tables(
    rows: pd.DataFrame, training: dict, test_csv: str, test_ids: list[str], requested: str,
    group_column: str, flags: dict,
) -> tuple[pd.DataFrame | None, dict]:  # fmt: skip
    """What `records` writes beside its shards: the metadata columns chosen for every training
    image (`rows` and `training`, from training_rows) and every test image (`test_ids`, matched
    to the rows of `test_csv`): one table by id, "split" train or test, the fold, then the
    columns; None when no column is used. And what the manifest and the screen say of them."""
    train = training["columns"]
    test = read_test_table(test_csv, flags["test_csv"], training["id_column"]) if test_csv else None
    reserved = {training["id_column"], training["label_column"], group_column}
    tables_flag = flags["test_csv"]
    columns, left_out = chosen(train, test, requested, reserved, flags["metadata"], tables_flag)
    clashing = [column for column in columns if column in OWN_COLUMNS]
    if clashing:
        raise UserError(
            f"{flags['metadata']}: the column {clashing[0]!r} has the name of one {TABLE} keeps "
            f"for itself ({', '.join(OWN_COLUMNS)}); rename it in both tables"
        )
    said = {"columns": columns, "left_out": left_out, "test_csv": test_csv}
    if not columns:
        return None, said
    own = pd.DataFrame({"id": rows["id"], "split": "train", "fold": rows["fold"].astype(str)})
    parts = [own.join(train[columns].reset_index(drop=True))]
    if test is not None and test_ids:
        matched = of_ids_rows(test, test_ids, f"{tables_flag} {test_csv}", (
            f"give a row for every image of {flags['test_images']}, or --metadata-columns '' "
            "to train on the images alone"
        ))  # fmt: skip
        parts.append(
            pd.DataFrame({"id": test_ids, "split": "test", "fold": ""}).join(matched[columns])
        )
    return pd.concat(parts, ignore_index=True), said


def read_test_table(csv: str, flag: str, id_column: str) -> pd.DataFrame:
    """The test images' table, its ids in "id": the training table's id column when it has
    one, else its first column."""
    table = read_csv(csv, flag)
    if table.empty:
        raise UserError(f"{flag} {csv}: no rows under its header; give the test images' table")
    column = id_column if id_column in table.columns else table.columns[0]
    repeated = table[column][table[column].duplicated()].tolist()
    if repeated:
        raise UserError(
            f"{flag} {csv}: ids occur more than once in {column!r}, e.g. {repeated[:3]}"
        )
    return table.assign(id=table[column]) if column != "id" else table


@dataclasses.dataclass
class Found:
    """Every training image's row (id, fold, then the columns) and what it came from."""

    table: pd.DataFrame
    columns: list[str]  # those the run uses
    left_out: dict[str, str]  # with why
    where: str  # the table, as messages name it


def found(cfg: Config, places: Places, data: Data) -> Found | None:
    """The metadata the run's data holds and the run asks for (beside images, the training
    CSV's columns, chosen against Config.test_csv's); None for images alone."""
    if not cfg.metadata_columns.strip():
        return None
    if data.trains_from == "images":
        made = images.table(cfg, places)
        train = made.found["columns"]
        test = None
        if cfg.test_csv:
            test = read_test_table(places.file("test_csv"), named("test_csv"), cfg.id_column)
        reserved = {made.found["id_column"], made.found["label_column"], cfg.group_column}
        flags = named("metadata_columns"), named("test_csv")
        columns, left_out = chosen(train, test, cfg.metadata_columns, reserved, *flags)
        rows = pd.DataFrame({"id": made.rows["id"], "fold": made.rows["fold"].astype(str)})
        table = rows.join(train[columns].reset_index(drop=True))
        return Found(table, columns, left_out, places.file("train_csv")) if columns else None
    kept = (data.manifest or {}).get("metadata") or {}
    available = kept.get("columns") or []
    where = places.in_data(TABLE)
    if cfg.metadata_columns == AUTO:
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
    table = read_table(where, "train")
    return Found(table[["id", "fold", *columns]], columns, kept.get("left_out") or {}, where)


def read_table(where: str, split: str) -> pd.DataFrame:
    """The rows of a split ("train", "test") of the records' metadata.csv (a bucket's too)."""
    with reaching(where):
        try:
            with tf.io.gfile.GFile(where, "rb") as file:
                table = read_csv(file.read(), where)
            return table[table["split"] == split]
        except (OSError, ValueError, tf.errors.OpError) as error:
            raise UserError(
                f"{where}: {error}; write the records again with `records`, or put back the "
                "file it wrote"
            ) from None


def for_training(cfg: Config, places: Places, data: Data):
    """The run's Features for every training image, its encoding (`spec`) fitted on
    the training folds; None for images alone."""
    held = found(cfg, places, data)
    if held is None:
        return None
    table = held.table
    in_folds = table["fold"].nunique() > 1  # as the data is split, whatever Config.folds says
    training = table[table["fold"] != str(validating_fold(cfg))] if in_folds else table
    spec = fitted(training, held.columns)
    features = Features(spec, table["id"].tolist(), encoded(spec, table))
    print(
        f"metadata: {', '.join(held.columns)} from {held.where} ({features.width} inputs, "
        f"fitted on {len(training)} training images)"
        + (f"; left out: {left_out_line(held.left_out)}" if held.left_out else "")
    )
    return features


def for_test(
    cfg: Config, places: Places, data: Data, specs: list[dict | None], ids: list[str],
    who: str = "the trained run",
) -> list:  # fmt: skip
    """The test images' Features by each trained run's encoding in `specs` (None:
    that run trained on images alone), from one reading of their table: Config.test_csv,
    else the records' metadata.csv. `who` joins the rows, as a refusal names it."""
    used = [spec for spec in specs if spec]
    if not used:
        return [None] * len(specs)
    columns = sorted({column for spec in used for column in columns_of(spec)})
    fix = (
        f"{who} joins {', '.join(columns)} to each image: give each test image's "
        f"row in {named('test_csv')}"
    )
    if cfg.test_csv:
        where = places.file("test_csv")
        table = read_test_table(where, named("test_csv"), cfg.id_column)
    else:
        where = places.in_data(TABLE)
        with reaching(where):
            there = data.tests_from != "tfds" and tf.io.gfile.exists(where)
        if not there:
            raise UserError(f"no table of the test images' metadata; {fix}")
        table = read_table(where, "test")
    missing = [column for column in columns if column not in table]
    if missing:
        raise UserError(f"{where} has no column {missing[0]!r}; {fix}")
    rows = of_ids_rows(table, ids, where, fix)  # each id matched once, for every run
    return [Features(spec, list(ids), encoded(spec, rows)) if spec else None
            for spec in specs]  # fmt: skip


# Who joins the test table's rows to pseudo-labeled test images, as a refusal names it.
PSEUDO_WHO = "this run, training on pseudo-labeled test images,"


def with_test_rows(cfg: Config, places: Places, data: Data, training: Features, ids: list[str]):
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
    return Features(training.spec, [*training.ids, *test.ids], values)


def for_validation(cfg: Config, places: Places, data: Data, spec: dict | None):
    """The training images' Features by a trained run's encoding (evaluate)."""
    if spec is None:
        return None
    held = found(cfg, places, data)
    if held is None:
        columns = ", ".join(columns_of(spec))
        raise UserError(
            f"the trained run joins {columns} to each image, and the data holds no such table now "
            f"({named('metadata_columns')} {cfg.metadata_columns!r}); give the data it trained on"
        )
    return Features(spec, held.table["id"].tolist(), encoded(spec, held.table))
