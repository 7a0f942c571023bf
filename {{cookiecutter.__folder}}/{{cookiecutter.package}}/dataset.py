"""tf.data pipelines from TFRecords to batches the model can eat.

Images leave the pipeline as uint8 (a quarter of float32's bytes; the model casts them),
or as bfloat16 in 0..255 for TPUs under TensorFlow, which take no uint8. Every batch has a
fully static shape, as XLA and TPUs require: inference pads its last batch with weight-0 rows.
The same pipeline feeds Keras on TensorFlow and on JAX.
"""

from __future__ import annotations

import tensorflow as tf

from . import records, tfds_sets
from .config import Config, UserError, named

AUTO = tf.data.AUTOTUNE


def parse(cfg: Config, labeled: bool, with_ids: bool = False):
    spec = {cfg.image_key: tf.io.FixedLenFeature([], tf.string)}
    spec[cfg.label_key if labeled else cfg.id_key] = tf.io.FixedLenFeature(
        [], tf.int64 if labeled else tf.string
    )
    if with_ids:
        spec[cfg.id_key] = tf.io.FixedLenFeature([], tf.string)
    return lambda record: tf.io.parse_single_example(record, spec)


def to_size(image: tf.Tensor, size: int) -> tf.Tensor:
    """Resize to size x size uint8 only when needed; the result has a static shape."""
    image = tf.cond(
        tf.reduce_all(tf.shape(image)[:2] == size),
        lambda: image,
        lambda: tf.saturate_cast(tf.round(tf.image.resize(image, [size, size])), tf.uint8),
    )
    return tf.ensure_shape(image, [size, size, 3])


def decoded(encoded: tf.Tensor) -> tf.Tensor:
    """RGB pixels of JPEG bytes, or of PNG and other formats that datasets sometimes mix in."""
    image = tf.io.decode_image(encoded, channels=3, expand_animations=False)
    return tf.ensure_shape(image, [None, None, 3])


def crop_window(shape: tf.Tensor, cfg: Config):
    """A random window of crop_area to all of the image, at 3:4 to 4:3."""
    begin, size, _ = tf.image.sample_distorted_bounding_box(
        shape,
        bounding_boxes=tf.zeros([1, 0, 4]),
        area_range=(cfg.crop_area, 1.0),
        aspect_ratio_range=(3 / 4, 4 / 3),
        min_object_covered=0.0,
        use_image_if_no_bounding_boxes=True,
    )
    return begin, size


def augmented(encoded: tf.Tensor, cfg: Config) -> tf.Tensor:
    """A random crop (of a JPEG, decoding only the crop: faster), resize, and maybe a flip."""
    if cfg.crop_area < 1.0:

        def crop_jpeg():
            begin, size = crop_window(tf.io.extract_jpeg_shape(encoded), cfg)
            window = tf.stack([begin[0], begin[1], size[0], size[1]])
            return tf.io.decode_and_crop_jpeg(encoded, window, channels=3)

        def crop_other():
            image = decoded(encoded)
            begin, size = crop_window(tf.shape(image), cfg)
            return tf.slice(image, begin, size)

        image = tf.cond(tf.io.is_jpeg(encoded), crop_jpeg, crop_other)
    else:
        image = decoded(encoded)
    image = to_size(image, cfg.image_size)
    if cfg.flip:
        image = tf.image.random_flip_left_right(image)
    return image


def for_training(
    files: list[str],
    cfg: Config,
    global_batch: int,
    image_dtype: str = "uint8",
    skipped: frozenset[str] = frozenset(),
) -> tf.data.Dataset:
    """Endless shuffled (image, label) batches; order does not matter, so none is kept.

    `skipped` names records to leave out as "<file>#<record number>" (scan.skipped).
    """
    options = tf.data.Options()
    options.deterministic = False
    if tfds_sets.name_of(cfg):  # `files` holds the TFDS split
        examples = tfds_sets.examples(cfg, files[0], shuffled=True).repeat()
        examples = examples.with_options(options).shuffle(cfg.shuffle_buffer, seed=cfg.seed)
        return augmented_batches(examples, cfg, global_batch, image_dtype)
    files = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files), seed=cfg.seed).repeat()
    if skipped:  # number each file's records, and drop the ones named
        leave_out = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(sorted(skipped), [True] * len(skipped)), False
        )

        def numbered(path):
            return (
                tf.data.TFRecordDataset(path)
                .enumerate()
                .map(lambda index, record: (path + "#" + tf.strings.as_string(index), record))
            )

        serialized = files.interleave(numbered, num_parallel_calls=AUTO, deterministic=False)
        serialized = serialized.filter(lambda key, record: tf.logical_not(leave_out.lookup(key)))
        serialized = serialized.map(lambda key, record: record)
    else:
        serialized = files.interleave(
            tf.data.TFRecordDataset, num_parallel_calls=AUTO, deterministic=False
        )
    examples = serialized.with_options(options).shuffle(cfg.shuffle_buffer, seed=cfg.seed)
    examples = examples.map(parse(cfg, labeled=True), num_parallel_calls=AUTO)
    return augmented_batches(examples, cfg, global_batch, image_dtype)


def augmented_batches(examples: tf.data.Dataset, cfg: Config, global_batch: int, image_dtype):
    """(image, label) batches of examples (feature name to value), augmented."""
    batches = examples.map(
        lambda ex: (
            tf.cast(augmented(ex[cfg.image_key], cfg), image_dtype),
            tf.cast(ex[cfg.label_key], tf.int32),
        ),
        num_parallel_calls=AUTO,
    )
    return batches.batch(global_batch, drop_remainder=True).prefetch(AUTO)


def for_inference(
    files: list[str],
    cfg: Config,
    global_batch: int,
    labeled: bool,
    image_dtype: str = "uint8",
    with_ids: bool = False,
) -> tf.data.Dataset:
    """Every record once, as (image, label or id, weight) batches in one fixed order; with
    `with_ids`, labeled batches carry the ids too: (image, label, weight, id).

    Ids travel with their images, so a prediction can never land on another image's row;
    they stay on the host (predict feeds only images to the device). The last batch is
    filled up with blank rows of weight 0, so every batch has the same static shape and
    splits evenly over the replicas; Keras weighs them out of validation, and predictions
    drop them. The known record count fails loudly if a shard is short.
    """
    key = cfg.label_key if labeled else cfg.id_key
    ids = labeled and with_ids
    if tfds_sets.name_of(cfg):  # `files` holds the TFDS split, whose size the set knows
        examples = tfds_sets.examples(cfg, files[0])
        count = tfds_sets.size(examples)
    else:
        count = records.count(files)
        serialized = tf.data.TFRecordDataset(files, num_parallel_reads=min(len(files), 16))
        serialized = serialized.apply(tf.data.experimental.assert_cardinality(count))
        examples = serialized.map(parse(cfg, labeled, ids), num_parallel_calls=AUTO)
    rows = examples.map(
        lambda ex: (
            (
                tf.cast(
                    to_size(decoded(ex[cfg.image_key]), cfg.image_size),
                    image_dtype,
                ),
                tf.cast(ex[key], tf.int32) if labeled else ex[key],
                tf.constant(1.0),
            )
            + ((ex[cfg.id_key],) if ids else ())
        ),
        num_parallel_calls=AUTO,
    )
    blank = (
        tf.zeros([cfg.image_size, cfg.image_size, 3], image_dtype),
        tf.constant(0 if labeled else b"", tf.int32 if labeled else tf.string),
        tf.constant(0.0),
    ) + ((tf.constant(b""),) if ids else ())
    padding = tf.data.Dataset.from_tensors(blank).repeat(-count % global_batch)
    return rows.concatenate(padding).batch(global_batch, drop_remainder=True).prefetch(AUTO)


def describe_spec(spec) -> str:
    names = ("image", "label", "weight")
    return ", ".join(
        f"{name} {part.dtype.name} {tuple(part.shape)}"
        for name, part in zip(names, tf.nest.flatten(spec), strict=False)
    )


def check_static(batches: tf.data.Dataset, field: str) -> None:
    """XLA compiles one program per shape, and TPUs need them known: refuse unknown dimensions."""
    spec = batches.element_spec
    if not all(part.shape.is_fully_defined() for part in tf.nest.flatten(spec)):
        raise UserError(
            f"batches from {named(field)} have an unknown dimension ({describe_spec(spec)}); "
            f"XLA and TPUs need static shapes: resize every image to {named('image_size')} "
            "and drop the remainder"
        )
