"""A competition's images and CSV become sharded TFRecords with folds, and a manifest.

    python -m {{ cookiecutter.package }} records --images train_images --csv train.csv --output records \
        [--id-column image_id] [--label-column label] [--group-column patient] [--folds 5] \
        [--resize 512] [--test-images test_images]

writes
    <output>/train/fold0-00-<records>.tfrec ...  image (JPEG), class, id, fold: one fold a file
    <output>/test/00-<records>.tfrec ...         image, id (the file name without extension)
    <output>/manifest.json                       shards, records per fold and class, class
                                                 names, image sizes, skipped files, the command

Images are decoded in parallel over the cores (images.py), shards of about 150 MB are
written under a .partial name and renamed when whole, and the manifest comes last: a killed
run leaves no shard that looks whole and no manifest that lists one. The loader reads the
manifest (records.with_manifest), so `train --data-dir <output>` needs no other file flag.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold
from tqdm.auto import tqdm

from .config import Config, UserError, named
from .files import MANIFEST, output_folder, write_json
from .images import Prepared, prepare_all

SHARD_BYTES = 150 * 2**20  # Kaggle's advice for TPUs: shards of 100 to 200 MB
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff"}
WHOLE_NUMBER = re.compile(r"-?\d+")


def write_records(
    cfg: Config, images: str, csv: str, output: str, group_column: str = "",
    resize: int = 0, test_images: str = "", command: str = "",
) -> dict:  # fmt: skip
    """Write the records and the manifest into `output`; returns the manifest. `command` is
    recorded in the manifest as what made it."""
    output = Path(output)
    refuse_unusable_output(output)
    rows = read_rows(csv, cfg.id_column, cfg.label_column, group_column)
    files = image_files(images, "--images")
    rows["path"] = [files.get(key, "") for key in rows[cfg.id_column]]
    skipped = [
        {"file": os.path.join(images, key), "reason": f"no image for this id in {csv}"}
        for key in rows.loc[rows["path"] == "", cfg.id_column]
    ]
    rows = rows[rows["path"] != ""].reset_index(drop=True)
    classes, labels = label_numbers(rows[cfg.label_column], csv, cfg.label_column)
    rows["number"] = labels
    rows["fold"] = assign_folds(rows, cfg.folds, cfg.seed, group_column, csv)
    sizes, kept = [], []  # filled as images are written: (width, height), (fold, number)
    train, test = [], []
    with worker_pool() as pool:
        for fold in range(max(cfg.folds, 1)):
            chosen = rows[rows["fold"] == fold]
            part = pd.DataFrame({"id": chosen[cfg.id_column], **chosen[["path", "number", "fold"]]})
            where = (output, "train", f"fold{fold}-")
            train += write_split(pool, *where, part, resize, skipped, sizes, kept)
        if test_images:
            found = sorted(set(image_files(test_images, "--test-images").values()))
            part = pd.DataFrame({"id": [Path(path).stem for path in found], "path": found})
            test = write_split(pool, output, "test", "", part, resize, skipped, sizes, [])
    manifest = {
        "command": command,
        "csv": csv,
        "images": images,
        "test_images": test_images,
        "id_column": cfg.id_column,
        "label_column": cfg.label_column,
        "group_column": group_column,
        "classes": classes,
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


def read_rows(csv: str, id_column: str, label_column: str, group_column: str) -> pd.DataFrame:
    """The CSV as text, after checking the columns and that every id is there once."""
    try:
        rows = pd.read_csv(csv, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (OSError, ValueError) as error:  # missing, a folder, not a CSV
        raise UserError(f"records --csv {csv}: {error}") from error
    wanted = {id_column: "id_column", label_column: "label_column"}
    if group_column:
        wanted[group_column] = "--group-column"
    for column, field in wanted.items():
        if column not in rows.columns:
            flag = field if field.startswith("--") else named(field)
            raise UserError(
                f"{csv} has no column {column!r} ({flag}); its columns are "
                f"{', '.join(rows.columns)}"
            )
    repeated = rows[id_column][rows[id_column].duplicated()].tolist()
    if repeated:
        raise UserError(f"{csv}: ids occur more than once, e.g. {repeated[:3]}")
    blank = rows.index[rows[label_column] == ""].tolist()
    if blank:
        raise UserError(
            f"{csv}: rows without a label in {label_column!r}, e.g. rows "
            f"{[index + 2 for index in blank[:3]]} (counting the header as row 1)"
        )
    return rows


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


def assign_folds(rows: pd.DataFrame, folds: int, seed: int, group_column: str, csv: str):
    """A fold per row: stratified by class, and by group when a group column is given."""
    if folds <= 1:
        return np.zeros(len(rows), int)
    if folds > len(rows):
        raise UserError(f"{named('folds')} {folds}: {csv} has only {len(rows)} usable rows")
    if group_column:
        splitter = StratifiedGroupKFold(folds, shuffle=True, random_state=seed)
        splits = splitter.split(rows, rows["number"], groups=rows[group_column])
    else:
        splits = StratifiedKFold(folds, shuffle=True, random_state=seed).split(rows, rows["number"])
    fold = np.zeros(len(rows), int)
    for number, (_, held_out) in enumerate(splits):
        fold[held_out] = number
    return fold


def write_split(pool, output, split, prefix, part, resize, skipped, sizes, kept) -> list[dict]:
    """Write one fold (or the test images: no "number" column) as shards; returns what each
    shard holds. Adds what it skips, the image sizes and each (fold, class) it keeps."""
    import tensorflow as tf  # here: the image workers never import it

    if part.empty:
        return []
    folder = output / split
    folder.mkdir(parents=True, exist_ok=True)
    source_bytes = sum(os.path.getsize(path) for path in part["path"])
    per_shard = max(1, round(SHARD_BYTES / max(1, source_bytes / len(part))))
    shards, writer, written = [], None, []
    jobs = [(path, resize) for path in part["path"]]
    prepared = pool.map(prepare_all, jobs, chunksize=16)
    rows = part.to_dict("records")
    label = f"{split} {prefix.rstrip('-') or 'images'}"
    for row, image in tqdm(
        zip(rows, prepared, strict=True), total=len(rows), desc=label, unit="image"
    ):
        if image.problem:
            skipped.append({"file": row["path"], "reason": image.problem})
            continue
        if writer is None:
            partial = folder / f"{prefix}{len(shards):02d}.partial"
            writer = tf.io.TFRecordWriter(str(partial))
        writer.write(example(row, image))
        written.append(row)
        sizes.append((image.width, image.height))
        if "number" in row:
            kept.append((int(row["fold"]), int(row["number"])))
        if len(written) == per_shard:
            shards.append(finish(writer, partial, prefix, len(shards), written, output))
            writer, written = None, []
    if writer is not None:
        shards.append(finish(writer, partial, prefix, len(shards), written, output))
    return shards


def worker_pool():
    """Processes that decode images, one per core; spawned, since TensorFlow's threads make
    forking unsafe."""
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=os.cpu_count(), mp_context=multiprocessing.get_context("spawn")
    )


def example(row: dict, image: Prepared) -> bytes:
    """The record: the features the loader reads by default (image, class, id) and the fold."""
    import tensorflow as tf

    from .records import feature

    values = {"image": image.jpeg, "id": str(row["id"])}
    if "number" in row:
        values.update({"class": int(row["number"]), "fold": int(row["fold"])})
    features = {name: feature(value) for name, value in values.items()}
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def finish(writer, partial: Path, prefix: str, index: int, written: list, output: Path) -> dict:
    """Close a shard and give it its Kaggle-style name with its record count."""
    writer.close()
    path = partial.with_name(f"{prefix}{index:02d}-{len(written)}.tfrec")
    os.replace(partial, path)
    shard = {"file": str(path.relative_to(output)), "records": len(written)}
    if "fold" in written[0]:
        shard["fold"] = int(written[0]["fold"])
    return shard


def summary(shards: list[dict]) -> dict:
    return {"records": sum(shard["records"] for shard in shards), "shards": shards}


def per_fold(kept: list[tuple[int, int]]) -> dict:
    """Records written per fold, and per class within each: what the folds really hold."""
    counts = pd.DataFrame(kept, columns=["fold", "number"])
    return {
        str(fold): {
            "records": len(group),
            "classes": {str(k): int(v) for k, v in sorted(group["number"].value_counts().items())},
        }
        for fold, group in counts.groupby("fold")
    }


def size_range(sizes: list[tuple[int, int]]) -> dict:
    if not sizes:
        return {}
    areas = [width * height for width, height in sizes]
    return {
        "smallest": list(sizes[int(np.argmin(areas))]),
        "largest": list(sizes[int(np.argmax(areas))]),
    }
