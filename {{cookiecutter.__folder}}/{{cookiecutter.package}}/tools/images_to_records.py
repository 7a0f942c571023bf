"""A competition's images and CSV become sharded TFRecords with folds, and a manifest.

    python -m {{ cookiecutter.package }} records --images train_images --csv train.csv --output records \
        [--group-column patient] [--folds 5] [--resize 512] [--test-images test_images] \
        [--id-column image_id] [--label-column label] [--multi-label]

writes
    <output>/train/fold0-00-<records>.tfrec ...  image (JPEG), class, id, fold: one fold a file
    <output>/test/00-<records>.tfrec ...         image, id (the file's path under --test-images,
                                                 extension included: t0.jpg, sub/t0.jpg)
    <output>/manifest.json                       shards, records per fold and class, class
                                                 names, the CSV columns used, multi_label,
                                                 image sizes, skipped files, the command

Ids stay as the competition spells them. Without --id-column the id column is the one whose
values name the most images; without --label-column the labels are in "label", else in the
one column left. A label of several space-separated names (`scab frog_eye_leaf_spot`), or
--multi-label, makes the competition multi-label: "class" is then a multi-hot row (1 for each
label the image has, one value per class), and folds are stratified by each image's rarest
label.

Images are decoded in parallel over the cores (image_files.py), shards of about 150 MB are
written as shards.py writes every shard, and the manifest comes last: a killed run leaves no
shard that looks whole and no manifest that lists one. The loader reads the
manifest (records.with_manifest), so `train --data-dir <output>` needs no other file flag.
"""

from __future__ import annotations

import collections
import concurrent.futures
import multiprocessing
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold
from tqdm.auto import tqdm

from ..runtime.config import Config, UserError, given, named
from ..runtime.files import IMAGE_SUFFIXES, MANIFEST, output_folder, write_json
from .image_files import Prepared, prepare_all
from .shards import serialized, write_in_shards

SHARD_BYTES = 150 * 2**20  # Kaggle's advice for TPUs: shards of 100 to 200 MB
WHOLE_NUMBER = re.compile(r"-?\d+")


def write_records(
    cfg: Config, images: str, csv: str, output: str, group_column: str = "",
    resize: int = 0, test_images: str = "", command: str = "",
) -> dict:  # fmt: skip
    """Write the records and the manifest into `output`; returns the manifest. `command` is
    recorded in the manifest as what made it."""
    output = Path(output)
    refuse_unusable_output(output)
    rows = read_csv(csv)
    files = image_files(images, "--images")
    id_column = find_id_column(cfg, rows, files, csv, images, group_column)
    label_column = find_label_column(cfg, rows, csv, id_column, group_column)
    check_rows(rows, csv, id_column, label_column, group_column)
    rows["path"] = [files.get(key, "") for key in rows[id_column]]
    skipped = [
        {"file": os.path.join(images, key), "reason": f"no image for this id in {csv}"}
        for key in rows.loc[rows["path"] == "", id_column]
    ]
    rows = rows[rows["path"] != ""].reset_index(drop=True)
    multi_label = cfg.multi_label or holds_several(rows[label_column], csv, label_column)
    if multi_label:
        classes, rows["number"], rows["stratum"] = multi_hot(rows[label_column])
    else:
        classes, labels = label_numbers(rows[label_column], csv, label_column)
        rows["number"] = rows["stratum"] = labels
    rows["fold"] = assign_folds(rows, cfg.folds, cfg.seed, group_column, csv)
    sizes, kept = [], []  # filled as images are written: (width, height), (fold, classes held)
    train, test = [], []
    with worker_pool() as pool:
        for fold in range(max(cfg.folds, 1)):
            chosen = rows[rows["fold"] == fold]
            part = pd.DataFrame({"id": chosen[id_column], **chosen[["path", "number", "fold"]]})
            where = (output, "train", f"fold{fold}-")
            train += write_split(pool, *where, part, resize, skipped, sizes, kept)
        if test_images:
            found = sorted(set(image_files(test_images, "--test-images").values()))
            ids = [Path(path).relative_to(test_images).as_posix() for path in found]
            part = pd.DataFrame({"id": ids, "path": found})
            test = write_split(pool, output, "test", "", part, resize, skipped, sizes, [])
    manifest = {
        "command": command,
        "csv": csv,
        "images": images,
        "test_images": test_images,
        "id_column": id_column,
        "label_column": label_column,
        "group_column": group_column,
        "classes": classes,
        "multi_label": multi_label,
        "num_classes": len(classes) if classes else int(rows["number"].max()) + 1,
        "folds": cfg.folds,
        "seed": cfg.seed,
        "resize": resize,
        "train": {**summary(train), "per_fold": per_fold(kept)},
        "test": summary(test),
        "image_sizes": size_range(sizes),
        "skipped": skipped,
    }
    write_json(output / MANIFEST, manifest)
    return manifest


def refuse_unusable_output(output: Path) -> None:
    output_folder(output, "records --output")
    held = sorted(output.glob("*/*.tfrec")) + sorted(output.glob(MANIFEST))
    if held:
        raise UserError(
            f"records --output {output} already holds records ({held[0]}, ...); give an "
            "empty folder, or delete this one to write it again"
        )


def read_csv(csv: str) -> pd.DataFrame:
    """The CSV, every value as text (ids such as 007 stay as they are)."""
    try:
        return pd.read_csv(csv, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (OSError, ValueError) as error:  # missing, a folder, not a CSV
        raise UserError(f"records --csv {csv}: {error}") from error


def find_id_column(
    cfg: Config, rows: pd.DataFrame, files: dict, csv: str, images: str, group_column: str
) -> str:
    """Config.id_column when given, else the column whose values name the most images."""
    if given(cfg, "id_column"):
        refuse_missing(rows, csv, cfg.id_column, named("id_column"))
        return cfg.id_column
    others = {group_column, cfg.label_column if given(cfg, "label_column") else ""}
    naming = {
        column: int(rows[column].isin(files.keys()).sum())
        for column in rows.columns
        if column not in others
    }
    best = max(naming, key=naming.get, default="")
    if not best or naming[best] == 0:
        example = next(iter(files))
        raise UserError(
            f"{csv}: no column names the images in {images} (such as {example!r}); its "
            f"columns are {', '.join(rows.columns)}; set {named('id_column')} to the column "
            "of image ids"
        )
    return best


def find_label_column(
    cfg: Config, rows: pd.DataFrame, csv: str, id_column: str, group_column: str
) -> str:
    """Config.label_column when given, else "label", else the one column left."""
    if given(cfg, "label_column"):
        return cfg.label_column
    if "label" in rows.columns and id_column != "label":
        return "label"
    left = [column for column in rows.columns if column not in (id_column, group_column)]
    if len(left) != 1:
        raise UserError(
            f"{csv}: cannot tell which column holds the labels: its columns are "
            f"{', '.join(rows.columns)} (ids in {id_column!r}), none named 'label'; set "
            f"{named('label_column')} to the column of labels"
        )
    return left[0]


def check_rows(
    rows: pd.DataFrame, csv: str, id_column: str, label_column: str, group_column: str
) -> None:
    """The columns are there, every id is there once, and every row has a label."""
    wanted = {id_column: "id_column", label_column: "label_column"}
    if group_column:
        wanted[group_column] = "--group-column"
    for column, field in wanted.items():
        refuse_missing(rows, csv, column, field if field.startswith("--") else named(field))
    repeated = rows[id_column][rows[id_column].duplicated()].tolist()
    if repeated:
        raise UserError(f"{csv}: ids occur more than once, e.g. {repeated[:3]}")
    blank = rows.index[rows[label_column].str.strip() == ""].tolist()
    if blank:
        raise UserError(
            f"{csv}: rows without a label in {label_column!r}, e.g. rows "
            f"{[index + 2 for index in blank[:3]]} (counting the header as row 1)"
        )


def refuse_missing(rows: pd.DataFrame, csv: str, column: str, flag: str) -> None:
    if column not in rows.columns:
        raise UserError(
            f"{csv} has no column {column!r} ({flag}); its columns are {', '.join(rows.columns)}"
        )


def image_files(folder: str, flag: str) -> dict[str, str]:
    """Every image under the folder, by relative path, file name and file name stem."""
    if not os.path.isdir(folder):
        raise UserError(f"records {flag} {folder}: not a folder of images")
    found = {}
    for path in sorted(Path(folder).rglob("*")):
        if path.suffix.lower() in IMAGE_SUFFIXES and path.is_file():
            for key in (str(path.relative_to(folder)), path.name, path.stem):
                found.setdefault(key, str(path))
    if not found:
        raise UserError(f"records {flag} {folder}: no image files ({', '.join(IMAGE_SUFFIXES)})")
    return found


def label_numbers(labels: pd.Series, csv: str, column: str) -> tuple[list[str] | None, list]:
    """Class numbers, and the class names when the labels were names (None for numbers)."""
    if labels.map(lambda value: bool(WHOLE_NUMBER.fullmatch(value))).all():
        numbers = labels.astype(int)
        if (numbers < 0).any():
            raise UserError(f"{csv}: negative labels in {column!r}; classes count from 0")
        return None, numbers.tolist()
    classes = sorted(labels.unique())
    index = {name: number for number, name in enumerate(classes)}
    return classes, [index[name] for name in labels]


def holds_several(labels: pd.Series, csv: str, column: str) -> bool:
    """Whether any image has several space-separated labels: a multi-label competition."""
    several = labels.str.split().str.len() > 1
    if several.any():
        first = several.idxmax()
        print(
            f"{csv}: {column!r} holds several labels per image (e.g. {labels[first]!r}): "
            "writing multi-label records"
        )
    return bool(several.any())


def multi_hot(labels: pd.Series) -> tuple[list[str], pd.Series, list[int]]:
    """Class names (sorted; as numbers when all are whole numbers), a row of 0s and 1s per
    image (1 for each label it has) and each image's rarest label, which its fold follows."""
    held = labels.str.split().map(set)
    names = set().union(*held)
    numeric = all(WHOLE_NUMBER.fullmatch(name) for name in names)
    classes = sorted(names, key=int if numeric else None)
    index = {name: number for number, name in enumerate(classes)}
    counts = collections.Counter(name for row in held for name in row)
    rows = [[int(name in row) for name in classes] for row in held]
    rarest = [index[min(row, key=lambda name: (counts[name], index[name]))] for row in held]
    return classes, pd.Series(rows, index=labels.index, dtype=object), rarest


def classes_held(number) -> list[int]:
    """The class numbers of a record's label: its class, or the 1s of its multi-hot row."""
    if isinstance(number, list):
        return [position for position, value in enumerate(number) if value]
    return [int(number)]


def assign_folds(rows: pd.DataFrame, folds: int, seed: int, group_column: str, csv: str):
    """A fold per row: stratified by class (a multi-label image's rarest label), and by group
    when a group column is given."""
    if folds <= 1:
        return np.zeros(len(rows), int)
    if folds > len(rows):
        raise UserError(f"{named('folds')} {folds}: {csv} has only {len(rows)} usable rows")
    if group_column:
        splitter = StratifiedGroupKFold(folds, shuffle=True, random_state=seed)
        splits = splitter.split(rows, rows["stratum"], groups=rows[group_column])
    else:
        splitter = StratifiedKFold(folds, shuffle=True, random_state=seed)
        splits = splitter.split(rows, rows["stratum"])
    fold = np.zeros(len(rows), int)
    for number, (_, held_out) in enumerate(splits):
        fold[held_out] = number
    return fold


def write_split(pool, output, split, prefix, part, resize, skipped, sizes, kept) -> list[dict]:
    """Write one fold (or the test images: no "number" column) as shards; returns what each
    shard holds. Adds what it skips, the image sizes and each (fold, classes) it keeps."""
    if part.empty:
        return []
    source_bytes = sum(os.path.getsize(path) for path in part["path"])
    per_shard = max(1, round(SHARD_BYTES / max(1, source_bytes / len(part))))
    prepared = pool.map(prepare_all, [(path, resize) for path in part["path"]], chunksize=16)
    rows = part.to_dict("records")
    label = f"{split} {prefix.rstrip('-') or 'images'}"

    def kept_records():
        for row, image in tqdm(
            zip(rows, prepared, strict=True), total=len(rows), desc=label, unit="image"
        ):
            if image.problem:
                skipped.append({"file": row["path"], "reason": image.problem})
                continue
            sizes.append((image.width, image.height))
            if "number" in row:
                kept.append((int(row["fold"]), classes_held(row["number"])))
            yield example(row, image)

    fold = {"fold": int(rows[0]["fold"])} if "fold" in rows[0] else {}
    return [
        {"file": str(path.relative_to(output)), "records": count, **fold}
        for path, count in write_in_shards(output / split, kept_records(), per_shard, prefix)
    ]


def worker_pool():
    """Processes that decode images, one per core; spawned, since TensorFlow's threads make
    forking unsafe."""
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=os.cpu_count(), mp_context=multiprocessing.get_context("spawn")
    )


def example(row: dict, image: Prepared) -> bytes:
    """The record: the features the loader reads by default (image, class, id) and the fold.
    A multi-label record's class is its multi-hot row."""
    values = {"image": image.jpeg, "id": str(row["id"])}
    if "number" in row:
        values["fold"] = int(row["fold"])
        number = row["number"]
        values["class"] = number if isinstance(number, list) else int(number)
    return serialized(values)


def summary(shards: list[dict]) -> dict:
    return {"records": sum(shard["records"] for shard in shards), "shards": shards}


def per_fold(kept: list[tuple[int, list[int]]]) -> dict:
    """Records written per fold, and per class within each the records holding it: what the
    folds really hold."""
    folds = collections.defaultdict(collections.Counter)
    for fold, numbers in kept:
        folds[fold]["records"] += 1
        folds[fold].update(str(number) for number in numbers)
    return {
        str(fold): {
            "records": counts.pop("records"),
            "classes": dict(sorted(counts.items(), key=lambda item: int(item[0]))),
        }
        for fold, counts in sorted(folds.items())
    }


def size_range(sizes: list[tuple[int, int]]) -> dict:
    if not sizes:
        return {}
    areas = [width * height for width, height in sizes]
    return {
        "smallest": list(sizes[int(np.argmin(areas))]),
        "largest": list(sizes[int(np.argmax(areas))]),
    }


def arguments(parser) -> None:
    parser.add_argument("--images", required=True, help="folder of training images")
    parser.add_argument(
        "--csv", required=True, help="one row per training image: id and label columns"
    )
    parser.add_argument("--output", required=True, help="folder to write (empty)")
    parser.add_argument(
        "--group-column", default="", help="keep each group in one fold (e.g. patient)"
    )
    parser.add_argument(
        "--resize", type=int, default=0, help="store N x N images (default: as they are)"
    )
    parser.add_argument("--test-images", default="", help="folder of test images (ids: file names)")


def command(args, cfg: Config, found=None) -> int:
    made = write_records(
        cfg, args.images, args.csv, args.output, args.group_column, args.resize,
        args.test_images, command=" ".join(["python -m {{ cookiecutter.package }}", *sys.argv[1:]]),
    )  # fmt: skip
    print(
        f"records in {args.output}: train {made['train']['records']} in {made['folds']} "
        f"folds, test {made['test']['records']}, skipped {len(made['skipped'])} (listed in "
        f"{args.output}/manifest.json)"
    )
    return 0
