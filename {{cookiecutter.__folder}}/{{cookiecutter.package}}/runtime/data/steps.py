"""The data steps, one record at a time: parse it, decode its image, make its label.

The pipeline (pipeline.py) calls these for training, validation and test records alike, and
the notebook shows them as its data cell: what a competitor edits there is what runs (a
grayscale decode, another crop, a feature of their own records).
"""

import tensorflow as tf

from {{ cookiecutter.package }}.runtime.config import targets


def parse(cfg, labeled: bool, with_ids: bool = False):
    spec = {cfg.image_key: tf.io.FixedLenFeature([], tf.string)}
    if labeled:  # a class number, a multi-hot row (Config.multi_label), or values or shares
        kind = tf.int64 if targets(cfg) == "classes" else tf.float32
        spec[cfg.label_key] = tf.io.FixedLenFeature(label_shape(cfg), kind)
    if with_ids or not labeled:
        spec[cfg.id_key] = tf.io.FixedLenFeature([], tf.string)
    return lambda record: tf.io.parse_single_example(record, spec)


def label_shape(cfg) -> list[int]:
    """A row per image (of classes, values or shares), or one class number."""
    return [cfg.num_classes] if cfg.multi_label or targets(cfg) != "classes" else []


def as_label(cfg, label: tf.Tensor) -> tf.Tensor:
    """What the loss takes: a class number, or a row of floats (multi-hot, values, shares)."""
    return tf.cast(label, tf.float32 if label_shape(cfg) else tf.int32)


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


def image(encoded: tf.Tensor, cfg) -> tf.Tensor:
    """The image as the model takes it: decoded, Config.image_size square, uint8."""
    return to_size(decoded(encoded), cfg.image_size)
