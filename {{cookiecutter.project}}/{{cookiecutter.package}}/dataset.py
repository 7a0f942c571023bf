"""tf.data pipelines from TFRecords to batches the model can eat.

Images leave the pipeline as uint8 (a quarter of float32's bytes; the model casts them)
with fully static shapes, as XLA and TPUs require.
"""

from __future__ import annotations

import tensorflow as tf

from . import records
from .config import Config

AUTO = tf.data.AUTOTUNE


def parse(cfg: Config, labeled: bool):
    spec = {cfg.image_key: tf.io.FixedLenFeature([], tf.string)}
    spec[cfg.label_key if labeled else cfg.id_key] = tf.io.FixedLenFeature(
        [], tf.int64 if labeled else tf.string
    )
    return lambda record: tf.io.parse_single_example(record, spec)


def to_size(image: tf.Tensor, size: int) -> tf.Tensor:
    """Resize to size x size uint8 only when needed; the result has a static shape."""
    image = tf.cond(
        tf.reduce_all(tf.shape(image)[:2] == size),
        lambda: image,
        lambda: tf.saturate_cast(tf.round(tf.image.resize(image, [size, size])), tf.uint8),
    )
    return tf.ensure_shape(image, [size, size, 3])


def augmented(jpeg: tf.Tensor, cfg: Config) -> tf.Tensor:
    """A random crop (decoding only the crop: faster), resize, and maybe a flip."""
    if cfg.crop_area < 1.0:
        begin, crop, _ = tf.image.sample_distorted_bounding_box(
            tf.io.extract_jpeg_shape(jpeg),
            bounding_boxes=tf.zeros([1, 0, 4]),
            area_range=(cfg.crop_area, 1.0),
            aspect_ratio_range=(3 / 4, 4 / 3),
            min_object_covered=0.0,
            use_image_if_no_bounding_boxes=True,
        )
        window = tf.stack([begin[0], begin[1], crop[0], crop[1]])
        image = tf.io.decode_and_crop_jpeg(jpeg, window, channels=3)
    else:
        image = tf.io.decode_jpeg(jpeg, channels=3)
    image = to_size(image, cfg.image_size)
    if cfg.flip:
        image = tf.image.random_flip_left_right(image)
    return image


def for_training(files: list[str], cfg: Config, global_batch: int) -> tf.data.Dataset:
    """Endless shuffled (image, label) batches; order does not matter, so none is kept."""
    options = tf.data.Options()
    options.deterministic = False
    files = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files), seed=cfg.seed).repeat()
    serialized = files.interleave(
        tf.data.TFRecordDataset, num_parallel_calls=AUTO, deterministic=False
    )
    examples = serialized.with_options(options).shuffle(cfg.shuffle_buffer, seed=cfg.seed)
    examples = examples.map(parse(cfg, labeled=True), num_parallel_calls=AUTO)
    batches = examples.map(
        lambda ex: (augmented(ex[cfg.image_key], cfg), tf.cast(ex[cfg.label_key], tf.int32)),
        num_parallel_calls=AUTO,
    )
    return batches.batch(global_batch, drop_remainder=True).prefetch(AUTO)


def for_inference(files: list[str], cfg: Config, batch: int, labeled: bool) -> tf.data.Dataset:
    """Every record once, as (image, label) or (image, id) batches in one fixed order.

    Ids travel with their images, so a prediction can never land on another image's row.
    The known record count lets Keras size its loops, and fails loudly if a shard is short.
    """
    key = cfg.label_key if labeled else cfg.id_key
    serialized = tf.data.TFRecordDataset(files, num_parallel_reads=min(len(files), 16))
    serialized = serialized.apply(tf.data.experimental.assert_cardinality(records.count(files)))
    examples = serialized.map(parse(cfg, labeled), num_parallel_calls=AUTO)
    pairs = examples.map(
        lambda ex: (
            to_size(tf.io.decode_jpeg(ex[cfg.image_key], channels=3), cfg.image_size),
            ex[key],
        ),
        num_parallel_calls=AUTO,
    )
    return pairs.batch(batch).prefetch(AUTO)
