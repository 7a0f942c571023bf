"""Training augmentation in the model, on the accelerator (the host only decodes): per image a
random crop resized back to full size and a flip (with Config.turns, any of eight orientations).
Each is one batched bilinear resize: two small matrix products (rows, then columns; a flip
reverses the column matrix), which XLA compiles well and TPUs run on their matrix units."""

from __future__ import annotations

import keras
from keras import ops

ASPECT_RATIOS = (3 / 4, 4 / 3)  # width / height of a crop window
ATTEMPTS = 16  # windows drawn per image; the first that fits is kept, else the whole image


def crop_windows(batch: int, crop_area: float, seed) -> tuple:
    """Per image (top, left, height, width) as fractions of the side, drawn as
    tf.image.sample_distorted_bounding_box draws them; the whole image where no ratio fits."""
    shape = (batch, ATTEMPTS)
    ratio = keras.random.uniform(shape, *ASPECT_RATIOS, seed=seed)
    lowest = ops.sqrt(crop_area / ratio)
    highest = ops.minimum(ops.minimum(ops.sqrt(1.0 / ratio), 1.0 / ratio), 1.0)
    height = lowest + keras.random.uniform(shape, seed=seed) * (highest - lowest)
    fits = lowest <= highest
    first = ops.argmax(ops.cast(fits, "int32"), axis=1)[:, None]  # the first that fits
    found = ops.any(fits, axis=1)
    height = ops.where(found, ops.take_along_axis(height, first, axis=1)[:, 0], 1.0)
    ratio = ops.where(found, ops.take_along_axis(ratio, first, axis=1)[:, 0], 1.0)
    width = ops.minimum(height * ratio, 1.0)
    top = keras.random.uniform((batch,), seed=seed) * (1.0 - height)
    left = keras.random.uniform((batch,), seed=seed) * (1.0 - width)
    return top, left, height, width


def resize_matrix(start, length, size: int):
    """(batch, size, size) bilinear weights that resample the window [start, start + length)
    (fractions of the side) to `size` pixels, with tf.image.resize's half-pixel centres."""
    start, length = ops.cast(start, "float32"), ops.cast(length, "float32")
    pixels = ops.arange(size, dtype="float32")
    source = start[:, None] * size + (pixels[None, :] + 0.5) * length[:, None] - 0.5
    first, last = start[:, None] * size, (start + length)[:, None] * size - 1.0
    source = ops.minimum(ops.maximum(source, first), last)  # as resizing the cropped image
    return ops.relu(1.0 - ops.abs(source[:, :, None] - pixels[None, None, :]))


class CropAndFlip(keras.layers.Layer):
    """Random crops of crop_area to all of the image, resized back, and flips, in training."""

    def __init__(
        self, crop_area: float, flip: bool, seed: int | None = None, turns: bool = False, **kwargs
    ):
        super().__init__(**kwargs)
        self.crop_area, self.flip, self.seed, self.turns = crop_area, flip, seed, turns
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, images, training=None):
        images = ops.cast(images, self.compute_dtype)
        if not training or (self.crop_area >= 1.0 and not self.flip and not self.turns):
            return images
        batch, size = ops.shape(images)[0], images.shape[1]
        if self.crop_area < 1.0:
            top, left, height, width = crop_windows(batch, self.crop_area, self.seed_generator)
        else:
            top = left = ops.zeros((batch,))
            height = width = ops.ones((batch,))
        rows, columns = resize_matrix(top, height, size), resize_matrix(left, width, size)
        if self.flip or self.turns:  # a flipped image reads its columns right to left
            flipped = keras.random.uniform((batch,), seed=self.seed_generator) < 0.5
            columns = ops.where(flipped[:, None, None], ops.flip(columns, axis=1), columns)
        if self.turns:  # upside down: its rows read bottom to top
            upside_down = keras.random.uniform((batch,), seed=self.seed_generator) < 0.5
            rows = ops.where(upside_down[:, None, None], ops.flip(rows, axis=1), rows)
        rows, columns = ops.cast(rows, images.dtype), ops.cast(columns, images.dtype)
        images = ops.einsum("boh,bhwc->bowc", rows, images)
        images = ops.einsum("bpw,bowc->bopc", columns, images)
        if not self.turns:
            return images
        # With the flips, a transpose makes all eight orientations (images are square).
        transposed = keras.random.uniform((batch,), seed=self.seed_generator) < 0.5
        turned = ops.transpose(images, (0, 2, 1, 3))
        return ops.where(transposed[:, None, None, None], turned, images)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        names = ("crop_area", "flip", "seed", "turns")
        return {**super().get_config(), **{name: getattr(self, name) for name in names}}
