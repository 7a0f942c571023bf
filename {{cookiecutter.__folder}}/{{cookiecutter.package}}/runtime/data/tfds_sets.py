"""TensorFlow Datasets sets as training data: `--data-dir tfds:NAME` (`tfds:tf_flowers`).

`tfds.load` serves each image still encoded (SkipDecoding), so it goes through the same decode,
augment and batch steps as a TFRecord's; each example's `tfds_id` is its id. With `--folds K`, fold
k of the set's train split validates and the other folds train, as with records in folds; with
`--folds 1` the whole train split trains and the set's validation split, where it has one,
validates. Its test split, where it has one, is what `predict` reads. For such a set, train_files,
valid_files and test_files hold TFDS split strings ("train[20%:40%]") instead of file patterns.
"""

from __future__ import annotations

import os
import socket

import tensorflow as tf

from ..config import Config, Sources, filled, validating_fold
from ..errors import UserError, first_line, named
from ..platform.paths import Places
from .kinds import Reader, Split

PREFIX = "tfds:"
CATALOG = "https://www.tensorflow.org/datasets/catalog/overview"
DOWNLOADS = "storage.googleapis.com"  # where TFDS finds prepared sets and most sources


def name_of(places: Places) -> str:
    """The TFDS set the run reads ("tf_flowers"), or "" when it reads files."""
    return places.data[len(PREFIX) :] if places.data.startswith(PREFIX) else ""


def data_dir() -> str | None:
    """Where TFDS keeps prepared sets: $TFDS_DATA_DIR as it is now (TFDS reads it once, at
    import), else TFDS's default, ~/tensorflow_datasets."""
    return os.environ.get("TFDS_DATA_DIR") or None


def prepared(name: str):
    """The set's builder, its files downloaded and prepared first (once; later calls find
    them in $TFDS_DATA_DIR, ~/tensorflow_datasets by default)."""
    import tensorflow_datasets as tfds

    try:
        builder = tfds.builder(name, data_dir=data_dir(), try_gcs=True)
    except tfds.core.registered.DatasetNotFoundError:
        raise UserError(
            f"{named('data_dir')} {PREFIX}{name}: TensorFlow Datasets has no set {name!r}; "
            f"pick one of its image classification sets ({CATALOG}), such as tfds:tf_flowers"
        ) from None

    def fails(why: str) -> UserError:
        return UserError(
            f"could not download and prepare the TFDS set {name} into {builder.data_dir} ({why}); "
            "a Kaggle notebook needs the internet on for this, or prepare the set where there "
            "is internet and point $TFDS_DATA_DIR at it"
        )

    offline = "" if builder.is_prepared() else unreachable()
    if offline:  # TFDS would retry for minutes before it gave up
        raise fails(f"{DOWNLOADS} cannot be reached: {offline}")
    try:
        builder.download_and_prepare()
    except ModuleNotFoundError as error:  # not the internet's fault: say what to install
        raise UserError(
            f"TensorFlow Datasets needs {error.name} to prepare {name}, and it is not installed "
            f"here; install it with: pip install {error.name}"
        ) from error
    except Exception as error:  # network errors come in many types; each says what it is
        raise fails(first_line(error)) from error
    return builder


def unreachable() -> str:
    """Why TFDS's downloads cannot be reached from here, or "" when they can: one quick look."""
    try:
        socket.create_connection((DOWNLOADS, 443), timeout=10).close()
    except OSError as error:
        return first_line(error)
    return ""


def image_and_label(builder) -> tuple[str, str]:
    import tensorflow_datasets as tfds

    features = builder.info.features
    keys = builder.info.supervised_keys
    if keys and len(keys) == 2 and all(isinstance(key, str) for key in keys):
        image, label = keys
    else:
        kinds = {name: type(feature) for name, feature in features.items()}
        image = next((n for n, kind in kinds.items() if kind is tfds.features.Image), "")
        label = next((n for n, kind in kinds.items() if kind is tfds.features.ClassLabel), "")
    names = list(features.keys())
    is_image = image in names and isinstance(features[image], tfds.features.Image)
    if not (is_image and label in names and isinstance(features[label], tfds.features.ClassLabel)):
        raise UserError(
            f"{named('data_dir')} {PREFIX}{builder.name}: not an image classification set "
            f"(its features: {', '.join(names)}); this project needs one image and "
            "one class label per example"
        )
    return image, label


def with_splits(cfg: Config, sources: Sources, places: Places) -> tuple[Config, Sources, dict]:
    """The config with the set's splits and classes for the fields the user did not give,
    where its values came from, and what `doctor` shows of the set, in the shape of a records
    manifest."""
    builder = prepared(name_of(places))
    _, label = image_and_label(builder)
    classes = list(builder.info.features[label].names)
    splits = set(builder.info.splits)
    folds, held_out = cfg.folds, validating_fold(cfg)
    # Fold k of the train split validates; neighbouring folds share their boundary, so the
    # folds never overlap and miss nothing.
    low, high = held_out * 100 // folds, (held_out + 1) * 100 // folds
    parts = [f"train[:{low}%]" if low else "", f"train[{high}%:]" if high < 100 else ""]
    training, validation = "+".join(filter(None, parts)), f"train[{low}%:{high}%]"
    if folds == 1:  # the whole train split trains, and the set's validation split validates
        training, validation = "train", "validation" if "validation" in splits else ""
    values = {
        "train_files": training, "valid_files": validation,
        "test_files": "test" if "test" in splits else "",
        "num_classes": len(classes), "class_names": ",".join(classes),
    }  # fmt: skip
    manifest = {
        "tfds": f"{builder.name} {builder.info.version}", "folds": folds, "classes": classes,
        "num_classes": len(classes),
        "splits": {split: info.num_examples for split, info in builder.info.splits.items()},
    }  # fmt: skip
    return *filled(cfg, sources, values, f"the TFDS set {builder.name}"), manifest


def examples(
    cfg: Config, name: str, split: str, shuffled: bool = False, share: tuple[int, int] = (0, 1)
) -> tf.data.Dataset:
    """The split's examples of the set `name` as the records' features: {image_key: encoded
    bytes, label_key: class, id_key: tfds_id}; in the set's fixed order unless `shuffled`.
    With `share` (process, processes), this process's share of the set's files only."""
    import tensorflow_datasets as tfds

    image, label = image_and_label(prepared(name))
    context = tf.distribute.InputContext(share[1], share[0])
    loaded = tfds.load(
        name, split=split, shuffle_files=shuffled, data_dir=data_dir(), try_gcs=True,
        decoders={image: tfds.decode.SkipDecoding()},  # decoded by the pipeline, as records are
        read_config=tfds.ReadConfig(add_tfds_id=True, shuffle_seed=cfg.seed, input_context=context),
    )  # fmt: skip
    names = {cfg.image_key: image, cfg.label_key: label, cfg.id_key: "tfds_id"}
    return loaded.map(
        lambda example: {key: example[name] for key, name in names.items()},
        num_parallel_calls=tf.data.AUTOTUNE,
    )


def size(served: tf.data.Dataset) -> int:
    """The examples in a split: TFDS knows, and says so as the dataset's cardinality."""
    known = int(served.cardinality())
    return known if known >= 0 else int(served.reduce(0, lambda total, _: total + 1))


class TfdsSet(Reader):
    """A TensorFlow Datasets set as source.py's readers serve one, prepared (downloaded once)
    where TFDS keeps its sets."""

    kind = "tfds"

    def __init__(self, cfg: Config, places: Places, manifest: dict):
        self.cfg, self.name, self.manifest = cfg, name_of(places), manifest

    def describe(self) -> str:
        manifest = self.manifest
        splits = ", ".join(
            f"{split} {count}" for split, count in sorted(manifest["splits"].items())
        )
        folds = self.folds_and_classes(" of its train split")
        return f"TFDS set: {manifest['tfds']}: {folds}" + (f" (splits: {splits})" if splits else "")

    def split(self, field: str, labeled: bool) -> Split:
        """The split's examples counted, and an unlabeled split's ids read, after checking that
        the set has the split and that its classes fit Config.num_classes."""
        cfg, split = self.cfg, getattr(self.cfg, field)
        builder = prepared(self.name)
        known = builder.info.splits
        for part in split.split("+"):
            base = part.split("[")[0]
            if known and base not in known:
                raise UserError(
                    f"{named(field)} {split!r}: the TFDS set {builder.name} has no split "
                    f"{base!r}; it has {', '.join(sorted(known))}"
                )
        _, label = image_and_label(builder)
        classes = builder.info.features[label].num_classes
        if cfg.num_classes < classes:
            raise UserError(
                f"{named('num_classes')} {cfg.num_classes}: the TFDS set {builder.name} has "
                f"{classes} classes; set num_classes to {classes}"
            )
        served, ids = examples(cfg, self.name, split), []
        if labeled:  # the set's own count: a large set is not read here
            count = known[split].num_examples if known else size(served)
        else:
            keys = served.map(lambda example: example[cfg.id_key]).as_numpy_iterator()
            ids = [key.decode() for key in keys]
            count = len(ids)
        return Split([split], count, ids, f"{count} examples (TFDS split {split})")

    def training(self, files: list[str], skipped: frozenset[str] = frozenset(), with_ids=False):
        share = (self.cfg.process_id, self.cfg.num_processes)
        return examples(self.cfg, self.name, files[0], shuffled=True, share=share)

    def in_order(self, files: list[str], labeled: bool, with_ids: bool = False):
        served = examples(self.cfg, self.name, files[0])
        return served, size(served)
