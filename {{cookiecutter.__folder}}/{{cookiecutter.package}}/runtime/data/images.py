"""A competition's own image files and CSV as a data source, beside records and TFDS, read
straight from where Kaggle mounts them. Folds are made at run time (grouped by
Config.group_column, drawn with Config.fold_seed, not the training's seed) and saved as folds.csv
in the run's output, so a resumed run, the out-of-fold score and predict agree on them. Every file
is checked before the first step. Records stay the faster path for big data: a JPEG file is read
whole here, a record with its neighbours."""

from __future__ import annotations

import collections
import dataclasses
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import tensorflow as tf

from ..config import Config, Sources, filled, given_fields, targets, validating_fold
from ..errors import UserError, named
from ..platform.files import IMAGE_SUFFIXES, for_pandas, is_url, written_whole
from ..platform.paths import Places
from . import competition_files, dicom, scan
from .kinds import Reader, Split

FLAGS = {"images": named("train_images"), "csv": named("train_csv"), "group": named("group_column")}
FOLDS = "folds.csv"  # the run's folds, beside its checkpoints
# The first bytes of each image format tf.io.decode_image reads.
SIGNATURES = (b"\xff\xd8\xff", b"\x89PNG", b"GIF8", b"BM")
# A path the pipeline reads as a file; any other is a DICOM file or series (dicom.py).
AN_IMAGE = r".*\.(" + "|".join(sorted(suffix[1:] for suffix in IMAGE_SUFFIXES)) + ")"


@dataclasses.dataclass
class Table:
    rows: pd.DataFrame  # id, path, number (the class or a multi-hot row), fold
    found: dict  # what competition_files found: columns, classes, multi_label, skipped
    folds_from: str  # where the folds came from, as doctor says it


tables: dict[tuple, Table] = {}  # read once a session while the inputs stay the same
# After the data filled the config in, its columns are those to read (sources: "manifest").
FILLED = frozenset({"id_column", "label_column"})


def table(cfg: Config, places: Places, given: frozenset[str] = FILLED) -> Table:
    """Every training image with its label and fold; `given`, the fields the user gave (the
    CSV's columns are found where they did not)."""
    csv, images = places.file("train_csv"), places.file("train_images")
    saved = places.output / FOLDS
    key = (csv, images, cfg.folds, cfg.fold_seed, cfg.group_column, cfg.id_column, cfg.label_column)
    key += (cfg.multi_label, targets(cfg), mtime(csv), mtime(saved))
    if key not in tables:
        rows, found = competition_files.training_rows(
            cfg, images, csv, cfg.group_column, FLAGS, dicom=True, given=given
        )
        if found["skipped"]:  # said once a session, by whichever command reads the CSV first
            print(left_out(found["skipped"]))
        folds_from = f"made from {Path(csv).name} (fold seed {cfg.fold_seed})"
        if saved.is_file():
            rows["fold"] = saved_folds(rows, saved, csv)
            folds_from = f"as saved in {saved}"
        tables[key] = Table(rows, found, folds_from)
    return tables[key]


def mtime(path) -> float:
    """When a file changed (0 when it is missing or in a bucket: its folds are read again)."""
    return os.path.getmtime(path) if not is_url(path) and os.path.exists(path) else 0.0


def saved_folds(rows: pd.DataFrame, saved: Path, csv: str) -> list[int]:
    """The folds a run saved, for the same images; an error when the CSV has changed since."""
    folds = pd.read_csv(for_pandas(saved), dtype={"id": str, "fold": int}, keep_default_na=False)
    held = dict(zip(folds["id"], folds["fold"], strict=True))
    new = [key for key in rows["id"] if key not in held]
    gone = sorted(set(held) - set(rows["id"]))
    if new or gone:
        raise UserError(
            f"{csv} is not what {saved} was made from: {len(new)} ids are new (e.g. {new[:3]}), "
            f"{len(gone)} are gone (e.g. {gone[:3]}); train into another {named('output_dir')}, "
            f"or remove {saved} and the run beside it to start over"
        )
    return [held[key] for key in rows["id"]]


def save_folds(cfg: Config, places: Places) -> None:
    """The folds of this run, into its output folder (train calls this before its first step)."""
    rows = table(cfg, places).rows
    path = places.output / FOLDS
    if not path.is_file():
        with written_whole(path) as temporary:
            rows[["id", "fold"]].to_csv(temporary, index=False)


def left_out(skipped: list[dict]) -> str:
    """The CSV's ids that name no image, as train and doctor say them."""
    shown = ", ".join(Path(entry["file"]).name for entry in skipped[:5])
    more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
    return f"{len(skipped)} ids of the CSV have no image and are left out: {shown}{more}"


def split_rows(cfg: Config, places: Places, field: str) -> pd.DataFrame:
    """The training images of a split: every fold but the one that validates, or that one."""
    rows = table(cfg, places).rows
    if cfg.folds == 1:
        return rows if field == "train_files" else rows.iloc[:0]
    held = rows["fold"] == validating_fold(cfg)
    return rows[~held if field == "train_files" else held]


def ids_of(places: Places, paths: list[str]) -> list[str]:
    folder = places.file("test_images")
    return [Path(path).relative_to(folder).as_posix() for path in paths]


def checked(paths: list[str], flag: str) -> None:
    """Every file there and an image: a missing or empty file, or one of another kind, is named
    before the first step."""
    odd = [f"{path} ({why})" for path in paths if (why := image_problem(path, flag))]
    if odd:
        # A training image may go (its row is left out); a test image's id must be submitted.
        fix = "replace them" if flag == named("test_images") else "replace or remove them"
        shown = ", ".join(odd[:3]) + ("; ..." if len(odd) > 3 else "")
        raise UserError(
            f"{len(odd)} of the {len(paths)} images of {flag} cannot be read as images: {shown}; "
            f"{fix}"
        )


def read_as_dicom(path: str) -> bool:
    """Whether the pipeline reads `path` as a DICOM file or series: any AN_IMAGE does not name
    (image_files finds these by their content, dicom.is_dicom)."""
    return not re.fullmatch(AN_IMAGE, path.lower())


def image_problem(path: str, flag: str) -> str:
    """Why a file cannot be read as an image, by its first bytes (a DICOM file or series, by
    its headers); "": it can."""
    try:
        if not read_as_dicom(path):
            with open(path, "rb") as file:
                head = file.read(16)
            if head.startswith(SIGNATURES) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP"):
                return ""
            return "not a JPEG, PNG, GIF, BMP or WebP" if head else "empty"
        if os.path.isdir(path):
            dicom.series(path)
        else:
            dicom.decodable(dicom.read(path, pixels=False))
    except OSError as error:
        return error.strerror
    except dicom.Unreadable as error:
        return str(error)
    except ModuleNotFoundError:  # pydicom: not on every platform's image
        install = f"{sys.executable} -m pip install pydicom {dicom.DECODERS}"
        raise UserError(f"{flag} holds DICOM files; pydicom is not installed: {install}") from None
    return ""


def of_images(cfg: Config, places: Places, paths: list[str], column: str) -> list:
    """The training CSV's `column` ("id", or "number": the label) of each image."""
    rows = table(cfg, places).rows
    by_path = dict(zip(rows["path"], rows[column], strict=True))
    return [by_path[path] for path in paths]


def labels_of(cfg: Config, places: Places, paths: list[str]) -> np.ndarray:
    kind = np.int64 if targets(cfg) == "classes" else np.float32  # values, shares: rows
    return np.array(of_images(cfg, places, paths, "number"), kind)


def with_table(cfg: Config, sources: Sources, places: Places) -> tuple[Config, Sources, dict]:
    """The config with the CSV's classes and columns for the fields the user did not give,
    where its values came from, and what doctor shows of them, in the shape of a records
    manifest."""
    made = table(cfg, places, given_fields(cfg, sources))
    read = made.found
    fields = ("num_classes", "multi_label", "id_column", "label_column", "series_depth")
    values = {key: read[key] for key in fields}
    values["class_names"] = ",".join(read["classes"] or [])
    if cfg.folds == 1:
        values["valid_files"] = ""
    held = made.rows["number"].map(competition_files.classes_held)  # an image of several: each
    per_fold = {}
    for fold in range(cfg.folds):
        in_fold = held[made.rows["fold"] == fold]
        counts = collections.Counter(str(number) for numbers in in_fold for number in numbers)
        per_fold[str(fold)] = {"records": len(in_fold), "classes": dict(counts)}
    manifest = {
        "folds": cfg.folds, "classes": read["classes"], "num_classes": read["num_classes"],
        "train": {"records": len(made.rows), "per_fold": per_fold},
        "folds_from": made.folds_from, "skipped": read["skipped"],
    }  # fmt: skip
    return *filled(cfg, sources, values, f"the training CSV {cfg.train_csv}"), manifest


class CompetitionImages(Reader):
    """A competition's image files and its training CSV as source.py's readers serve them,
    folds made at run time. `trains_from`: what the run trains on (a test set read as files
    beside records is decoded as they were stored)."""

    kind = "images"

    def __init__(self, cfg: Config, places: Places, manifest: dict | None, trains_from: str):
        self.cfg, self.places, self.manifest, self.trains_from = cfg, places, manifest, trains_from
        # A test set read as files beside records (a code competition's rerun) is decoded as
        # `records` stored the training images: as many slices or frames.
        stored = (manifest or {}).get("dicom") or {} if trains_from == "records" else {}
        self.slices, self.frames = stored.get("slices", 3), stored.get("frames", "middle")

    def describe(self) -> str:
        places, manifest = self.places, self.manifest
        heading = (
            f"images: {places.file('train_csv')} and {places.file('train_images')}: "
            f"{manifest['train']['records']} images, "
            + self.folds_and_classes(f" {manifest['folds_from']}")
        )
        if manifest["skipped"]:
            heading += "\n  " + left_out(manifest["skipped"])
        return heading

    def split(self, field: str, labeled: bool) -> Split:
        """A fold's images by the CSV, or every image under the test folder, its id the path
        under it (where the training CSV names series, folders of DICOM slices, the test set's
        series as deep); each checked there, and an image by its first bytes."""
        cfg, places = self.cfg, self.places
        folder = "train_images" if labeled else "test_images"
        if labeled:
            rows = split_rows(cfg, places, field)
        else:
            depth = cfg.series_depth  # the CSV's, the records', or the trained run's
            rows = competition_files.test_rows(places.file(folder), depth, named(folder))
        paths = rows["path"].tolist()
        if any(read_as_dicom(path) for path in paths):  # the window before any header is read
            dicom.window(cfg.window, named("window"))
        checked(paths, named(folder))
        said = f"{len(paths)} images ({places.file(folder)})"
        values = rows["number"].tolist() if labeled and targets(cfg) != "classes" else []
        return Split(paths, len(paths), rows["id"].tolist(), said, ("test_images",), labels=values)

    def training(self, paths: list[str], skipped: frozenset[str] = frozenset(), with_ids=False):
        """One pass over this process's share of the images (every N-th), in an order drawn
        anew each pass: shuffling paths, not images, costs next to nothing."""
        kept = [path for path in paths if f"{path}#0" not in skipped]
        own = kept[self.cfg.process_id :: self.cfg.num_processes]
        return self.examples(own, True, with_ids).shuffle(len(own), seed=self.cfg.seed)

    def in_order(self, paths: list[str], labeled: bool, with_ids: bool = False):
        return self.examples(paths, labeled, with_ids), len(paths)

    def examples(self, paths: list[str], labeled: bool, with_ids: bool) -> tf.data.Dataset:
        """The files as the records' features: {image_key: the file's path, label_key, id_key}.
        The pipeline reads each file in the step that decodes it (`encoded`): a stage of its own
        for reading cost a tenth more host time per image than decoding alone."""
        cfg, places = self.cfg, self.places
        columns = {cfg.image_key: paths}
        if labeled:
            columns[cfg.label_key] = labels_of(cfg, places, paths)
        if labeled and with_ids:
            columns[cfg.id_key] = of_images(cfg, places, paths, "id")
        elif not labeled:
            columns[cfg.id_key] = ids_of(places, paths)
        return tf.data.Dataset.from_tensor_slices(columns)

    def encoded(self, image: tf.Tensor) -> tf.Tensor:
        """The file the image feature names, read (`examples` serves paths); a DICOM file or
        series as dicom.py shows it, as PNG bytes. Uncompressed: the step after decodes them at
        once, and zlib made encoding and decoding a 512 px slice 12 times slower."""
        return tf.cond(
            tf.strings.regex_full_match(tf.strings.lower(image), AN_IMAGE),
            lambda: tf.io.read_file(image),
            lambda: tf.io.encode_png(
                tf.numpy_function(self.pixels, [image], tf.uint8), compression=0
            ),
        )

    def pixels(self, path) -> np.ndarray:
        """A DICOM file's or series' pixels; `path`, bytes (a 0-d array where run eagerly)."""
        path = np.asarray(path).item().decode()
        return dicom.pixels(path, self.cfg.window, self.slices, self.frames)

    def scanned(self, paths: list[str], labeled: bool, ids=None) -> list[scan.Shard] | None:
        """Every image decoded; each one that does not is named by its path (and its id, as
        `ids` spell it: the sample's), a DICOM file or series with pydicom's reason."""
        ids, bad = None if labeled else ids or ids_of(self.places, paths), []
        for number, path in enumerate(paths):
            tried, why = scan.Shard(path, records=1), ""
            try:
                read = self.encoded(tf.constant(path)).numpy()
            except dicom.Unreadable as error:  # run eagerly, its own error comes through
                read, why = b"", f": {error}"
            except tf.errors.OpError:
                read = b""
            scan.check_image(tried, 0, read, self.cfg.image_size)
            if tried.problems:
                shard = scan.Shard(path, records=1, bad={0})  # bad: what --bad-records skip leaves
                what = "does not decode as an image" + (f" (id {ids[number]})" if ids else "")
                shard.problem(what + why, scan.WHOLE_FILE)
                bad.append(shard)
        return bad
