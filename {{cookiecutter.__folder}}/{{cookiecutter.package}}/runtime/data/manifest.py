"""manifest.json, which `records` writes beside its shards: what it must hold, the config it
fills in, the records it counts and the test images it skipped."""

from __future__ import annotations

import json
from pathlib import Path

from ..config import Config, Sources, filled, given, validating_fold
from ..errors import UserError, first_line, named
from ..platform.files import MANIFEST, reaching
from ..platform.paths import Places
from ..scoring import METRICS


def with_manifest(
    cfg: Config, sources: Sources, places: Places
) -> tuple[Config, Sources, dict | None]:
    """The config with what the data folder's manifest says for every field not given, their
    sources, and the manifest (None without one). `--fold all` is checked as fold 0."""
    import tensorflow as tf  # for gs://; `read_manifest` alone needs none (kernel's title)

    path = places.in_data(MANIFEST)
    with reaching(path):
        if not tf.io.gfile.exists(path):
            return cfg, sources, None
        with tf.io.gfile.GFile(path, "rb") as file:
            manifest = read_manifest(file.read(), path)
    folds, held_out = manifest["folds"], validating_fold(cfg)
    if held_out >= folds:
        raise UserError(
            f"{named('fold')} {cfg.fold}: {path} has folds 0 to {folds - 1}; pick one of them"
        )
    found = {
        **split_patterns(manifest, held_out), "num_classes": manifest["num_classes"],
        "class_names": ",".join(manifest["classes"] or []),
        "multi_label": bool(manifest.get("multi_label")),
        "id_column": manifest["id_column"], "label_column": manifest["label_column"],
    }  # fmt: skip
    if manifest.get("dicom"):  # how its DICOM images were stored: a test set read as files (a
        found["window"] = manifest["dicom"]["window"]  # rerun's) is read alike
        found["series_depth"] = manifest["dicom"].get("series_depth", 0)
    kind = manifest.get("targets") or "classes"
    if kind != "classes" and not given(cfg, sources, "metric"):  # values or shares: its metric
        found["metric"] = manifest["metric"]
    metric = found.get("metric", cfg.metric)
    if metric in METRICS and METRICS[metric].targets != kind:
        fitting = ", ".join(name for name, entry in METRICS.items() if entry.targets == kind)
        raise UserError(
            f"{path}: the records hold {kind} (records --metric {manifest.get('metric')}), which "
            f"{named('metric')} {metric} does not score; give one of {fitting}, or write the "
            f"records again with --metric {metric}"
        )
    return *filled(cfg, sources, found, f"the records' manifest {path}"), manifest


def split_patterns(manifest: dict, held_out: int) -> dict[str, str]:
    """The patterns of the files `records` wrote for each split, fold `held_out` validating."""
    folds = manifest["folds"]
    training = [f"train/fold{fold}-*.tfrec" for fold in range(folds) if fold != held_out]
    return {
        "train_files": ",".join(training) if folds > 1 else "train/*.tfrec",
        "valid_files": f"train/fold{held_out}-*.tfrec" if folds > 1 else "",
        "test_files": "test/*.tfrec" if manifest["test"]["records"] else "",
    }


def read_manifest(data: bytes, where: str) -> dict:
    """`records`' manifest, checked field by field: a hand-edited one is refused, not half used."""
    fix = "write the records again with `records`, or restore the manifest it wrote"
    try:
        manifest = json.loads(data)
    except (ValueError, RecursionError) as error:  # undecodable bytes are ValueErrors too
        raise UserError(f"{where} is not JSON ({first_line(error)}); {fix}") from None
    if not isinstance(manifest, dict):
        raise UserError(f"{where} holds {type(manifest).__name__}, not an object; {fix}")

    def refuse(name: str, kind: str, value) -> None:
        raise UserError(f"{where}: {name} is {value!r}, not {kind}; {fix}")

    for name, kind, fits in MANIFEST_FIELDS:
        value = manifest
        for key in name.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if not fits(value):
            refuse(name, kind, value)
    classes = manifest.setdefault("classes", None)  # None: the classes are numbers
    if classes and (len(classes) > manifest["num_classes"] or len(set(classes)) < len(classes)):
        refuse("classes", f"{manifest['num_classes']} different names (num_classes)", classes)
    for fold, held in manifest["train"]["per_fold"].items():
        counts = held.get("classes") if isinstance(held, dict) else None
        if not (isinstance(counts, dict) and counts and all(map(is_count, counts.values()))):
            refuse(f"train.per_fold.{fold}.classes", "a record count per class", counts)
        if not is_count(held.get("records")):
            refuse(f"train.per_fold.{fold}.records", "a record count", held.get("records"))
    return manifest


def is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def whole_number(low: int, high: int):
    return lambda value: is_count(value) and low <= value <= high


def are_skips(value) -> bool:
    return isinstance(value, list) and all(
        isinstance(entry, dict)
        and all(isinstance(entry.get(key), str) for key in ("file", "reason"))
        for entry in value
    )


def is_name(value) -> bool:
    return isinstance(value, str) and bool(value)


def names_or_none(value) -> bool:
    return value is None or (isinstance(value, list) and all(map(is_name, value)))


TARGETS = {metric.targets for metric in METRICS.values()}
# What the commands read of a manifest: its dotted name, what it must be, and a test of it.
MANIFEST_FIELDS = (
    ("folds", "a whole number from 1 to 100", whole_number(1, 100)),
    ("num_classes", "a whole number from 1 to 100000", whole_number(1, 100_000)),
    ("test.records", "a record count", is_count),
    ("train.per_fold", "a dict by fold", lambda value: isinstance(value, dict)),
    ("classes", "null or a list of class names", names_or_none),
    ("multi_label", "true or false", lambda value: value is None or isinstance(value, bool)),
    ("targets", "classes, values or shares", lambda value: value is None or value in TARGETS),
    ("id_column", "a column name", is_name),
    ("label_column", "a column name", is_name),
    ("test_images", "a folder, or empty", lambda value: value is None or isinstance(value, str)),
    ("skipped", "a list of {file, reason}", lambda value: value is None or are_skips(value)),
    ("metadata.columns", "a list of the table's columns beside each image", names_or_none),
)


def skipped_tests(manifest: dict | None) -> dict[str, str]:
    """The test images `records` skipped as unreadable: why, by the id their records would carry."""
    if not manifest or not manifest.get("test_images"):
        return {}
    folder, skipped = Path(manifest["test_images"]), {}
    for entry in manifest.get("skipped") or []:
        if Path(entry["file"]).is_relative_to(folder):  # not a training image
            skipped[Path(entry["file"]).relative_to(folder).as_posix()] = entry["reason"]
    return skipped


def check_count(cfg: Config, places: Places, field: str, count: int, manifest: dict | None) -> None:
    """A split must hold the records its manifest counts: a shard gone would go unnoticed."""
    if not manifest:
        return
    fold = validating_fold(cfg)
    if getattr(cfg, field) != split_patterns(manifest, fold)[field]:
        return  # the user's own pattern: the manifest counts none of it
    folds, per_fold, held_out = manifest["folds"], manifest["train"]["per_fold"], str(fold)
    training = [held["records"] for key, held in per_fold.items() if folds == 1 or key != held_out]
    counted = {
        "train_files": sum(training), "valid_files": per_fold.get(held_out, {}).get("records", 0),
        "test_files": manifest["test"]["records"],
    }  # fmt: skip
    if counted[field] != count:
        raise UserError(
            f"{places.file(field)} ({named(field)}) holds {count} records where the records' "
            f"manifest {places.in_data(MANIFEST)} counts {counted[field]}: a shard is missing or "
            "cut short; write the records again with `records`, or put back the shards it wrote"
        )
