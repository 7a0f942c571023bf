"""The datasets: examples (TFRecords, a competition's image files or a TFDS set: source.py)
to the batches the model takes, as tf.data builds them. The notebook shows this module as its
datasets cell, and every command reads it: what you change here is what trains and predicts.

- Training: one pass after another, shuffled; each image decoded (steps.py), batched with a
  static shape, then the host's augmentations on each batch; prefetched.
- Validation and test: every example once, in one fixed order, its id beside it; the last
  batch filled with blank rows of weight 0.

Images leave as uint8 (a quarter of float32's bytes; the model casts them), or as bfloat16 in
0..255 for TPUs under TensorFlow, which take no uint8. XLA and TPUs need static shapes: every
batch has one. MixUp and CutMix (mixing.py), random crops and flips (augment.py) run in the
model, on the accelerator: the host decodes and does the least it can. The same pipeline feeds
Keras on TensorFlow and on JAX.
"""

from __future__ import annotations

import tensorflow as tf
from keras import layers

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.data import steps
from {{ cookiecutter.package }}.runtime.data.kinds import Data
from {{ cookiecutter.package }}.runtime.errors import UserError, named

AUTO = tf.data.AUTOTUNE


def host_augmentations(cfg):
    """Run in order on each training batch on the host, {"images": 0..255, "labels": one row
    per image}; Keras' own layers, which tf.data runs under any backend."""
    augmentations = []
    if cfg.rand_augment:  # two random ops per image (rotate, shear, colour...)
        augmentations.append(
            layers.RandAugment(value_range=(0, 255), factor=cfg.rand_augment, seed=cfg.seed)
        )
    return augmentations


def for_training(
    data: Data, files: list[str], cfg: Config, global_batch: int, image_dtype: str = "uint8",
    skipped: frozenset[str] = frozenset(), augmentations: list = (), metadata=None,
    corrections=None, pseudo=None,
) -> tf.data.Dataset:  # fmt: skip
    """Endless shuffled (image, label) batches of `files`, read by the data's training reader,
    each pass serving every example once. `augmentations` (host_augmentations) run on
    each batch, in order; with any, the labels are rows (one-hot, or mixed). With `metadata`
    (metadata.Features), each image comes as {"image", "metadata"}: its table row joined by id.

    Each process (Config.num_processes) reads only its share and batches its part of the
    global batch. `skipped` names records to leave out (scan.skipped); `corrections`
    (corrections.Corrections), ids left out and labels changed; `pseudo`
    (pseudo_labels.PseudoLabels), test images added with soft labels, each batch then
    (image, label rows, weight).
    """
    options = tf.data.Options()
    options.deterministic = False
    # Shuffle, then repeat: fused, TensorFlow fills the shuffle buffer from the next pass, so
    # an example could come twice in one pass and another not at all.
    options.experimental_optimization.shuffle_and_repeat_fusion = False
    reading = data.train
    with_ids = metadata is not None or bool(corrections)
    examples = reading.training(files, skipped, with_ids).with_options(options)
    if corrections:  # --drop-ids, --relabel
        examples = corrections.applied(examples, cfg)
    examples = examples.shuffle(cfg.shuffle_buffer, seed=cfg.seed).repeat()
    encoded, weighed = reading.encoded, ""
    if pseudo:  # each read as it is: the training set and the test set may be of two kinds
        examples = pseudo.mixed_in(examples, cfg, reading, data.test)
        encoded, weighed = (lambda image: image), pseudo.weight_feature
    batch = global_batch // cfg.num_processes
    batches = decoded_batches(examples, cfg, batch, image_dtype, encoded, metadata, weighed)
    if not augmentations:
        return batches
    check_static(batches, "train_files")  # Keras' image layers need the image's size
    return augmented(batches, cfg, augmentations, image_dtype)


def decoded_batches(
    examples: tf.data.Dataset, cfg: Config, batch: int, image_dtype,
    encoded=lambda image: image, metadata=None, weighed: str = "",
):  # fmt: skip
    """(image, label) batches of examples (feature name to value), decoded at full size.
    `encoded` makes an example's image feature encoded bytes (an image file's path: the file
    read). With `metadata`, the image is {"image", "metadata"} (`inputs`); with `weighed`,
    the feature holding each example's weight in the loss, batches are (image, label, weight)."""
    join = inputs(cfg, metadata)

    def pair(ex):
        image = join(ex, tf.cast(steps.image(encoded(ex[cfg.image_key]), cfg), image_dtype))
        if weighed:
            return image, ex[cfg.label_key], ex[weighed]  # rows of shares, weighed
        return image, steps.as_label(cfg, ex[cfg.label_key])

    batches = examples.map(pair, num_parallel_calls=AUTO)
    return batches.batch(batch, drop_remainder=True).prefetch(AUTO)


def augmented(batches: tf.data.Dataset, cfg: Config, augmentations: list, image_dtype: str):
    """Each batch through `augmentations`, as Keras' image layers take it: pixels in 0..255
    and a label row per image (so that a notebook's own mixing layer can mix them); what they
    return as floats goes back to `image_dtype`."""

    def augment(inputs, labels, *weight):
        numbers = not cfg.multi_label and labels.shape.rank != 2  # a class number per image
        rows = tf.one_hot(labels, cfg.num_classes) if numbers else labels
        images = inputs["image"] if isinstance(inputs, dict) else inputs
        batch = {"images": images, "labels": tf.cast(rows, tf.float32)}
        for augmentation in augmentations:
            batch = augmentation(batch)
        mixed = as_pixels(batch["images"], image_dtype)
        # A layer that mixes images mixes labels; each image keeps its own row of metadata.
        image = {**inputs, "image": mixed} if isinstance(inputs, dict) else mixed
        return (image, batch["labels"], *weight)

    return batches.map(augment, num_parallel_calls=AUTO).prefetch(AUTO)


def as_pixels(images: tf.Tensor, dtype) -> tf.Tensor:
    """Images in 0..255 as `dtype`; floats round to whole levels for uint8 (a mixed pixel
    loses nothing that matters)."""
    if images.dtype == tf.as_dtype(dtype):
        return images
    if tf.as_dtype(dtype).is_integer:
        return tf.saturate_cast(tf.round(images), dtype)
    return tf.cast(images, dtype)


def inputs(cfg: Config, metadata=None):
    """What the model takes of an example and its decoded image: the image, or with
    `metadata` (metadata.Features) {"image", "metadata"}, the row its id names."""
    if metadata is None:
        return lambda example, image: image
    row = metadata.lookup()
    return lambda example, image: {"image": image, "metadata": row(example[cfg.id_key])}


def for_inference(
    data: Data, files: list[str], cfg: Config, global_batch: int, labeled: bool,
    image_dtype: str = "uint8", with_ids: bool = False, metadata=None,
) -> tf.data.Dataset:  # fmt: skip
    """Every record once, as (image, label or id, weight) batches in one fixed order; with
    `with_ids`, labeled batches carry the ids too: (image, label, weight, id). With
    `metadata` (metadata.Features), images come as {"image", "metadata"} (`inputs`).

    Ids travel with their images (and stay on the host), so a prediction can never land on
    another image's row. The last batch is filled up with blank rows of weight 0, so every
    batch has one static shape and splits evenly over the replicas; Keras weighs them out of
    validation, and predictions drop them. A short shard fails on the known record count.
    """
    key = cfg.label_key if labeled else cfg.id_key
    ids = labeled and with_ids
    reading = data.train if labeled else data.test
    examples, count = reading.in_order(files, labeled, ids or metadata is not None)
    join = inputs(cfg, metadata)

    def row(ex):
        image = tf.cast(steps.image(reading.encoded(ex[cfg.image_key]), cfg), image_dtype)
        answer = steps.as_label(cfg, ex[key]) if labeled else ex[key]
        return (join(ex, image), answer, tf.constant(1.0)) + ((ex[cfg.id_key],) if ids else ())

    rows = examples.map(row, num_parallel_calls=AUTO)
    image = tf.zeros([cfg.image_size, cfg.image_size, 3], image_dtype)
    if metadata is not None:
        image = {"image": image, "metadata": metadata.blank()}
    label = steps.as_label(cfg, tf.zeros(steps.label_shape(cfg), tf.int64))
    blank = (image, label if labeled else tf.constant(b""), tf.constant(0.0))
    blank += (tf.constant(b""),) if ids else ()
    padding = tf.data.Dataset.from_tensors(blank).repeat(-count % global_batch)
    return rows.concatenate(padding).batch(global_batch, drop_remainder=True).prefetch(AUTO)


def describe_spec(spec) -> str:
    parts = zip(("image", "label", "weight"), tf.nest.flatten(spec), strict=False)
    return ", ".join(f"{name} {part.dtype.name} {tuple(part.shape)}" for name, part in parts)


def check_static(batches: tf.data.Dataset, field: str) -> None:
    """XLA compiles one program per shape, and TPUs need them known: refuse unknown dimensions."""
    spec = batches.element_spec
    if not all(part.shape.is_fully_defined() for part in tf.nest.flatten(spec)):
        raise UserError(
            f"batches from {named(field)} have an unknown dimension ({describe_spec(spec)}); "
            f"XLA and TPUs need static shapes: resize every image to {named('image_size')} "
            "and drop the remainder"
        )
