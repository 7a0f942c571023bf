"""Training augmentation: in the model, a random crop resized back to full size and a random
horizontal flip, per image, on the accelerator; on the host, a share of the batches mixed by
one of Keras' mixing layers (model.py lists which run where).

The host only decodes (the slow part of the input pipeline), so a TPU is not left waiting
on the CPU. Crop, resize and flip are one batched operation: each image's bilinear resize of
its crop window is two small matrix products (rows, then columns; a flip reverses the column
matrix), which XLA compiles well on every backend and TPUs run on their matrix units, with no
per-image gathers. The windows are drawn as tf.image.sample_distorted_bounding_box draws them.
Only `fit` trains, so validation and prediction see the images as they are.
"""

from __future__ import annotations

import keras
from keras import ops

ASPECT_RATIOS = (3 / 4, 4 / 3)  # width / height of a crop window
ATTEMPTS = 16  # windows drawn per image; the first that fits is kept, else the whole image


def crop_windows(batch: int, crop_area: float, seed) -> tuple:
    """Per image (top, left, height, width) as fractions of the side, drawn as TensorFlow's
    sample_distorted_bounding_box draws them: an aspect ratio of 3:4 to 4:3, then a height
    between the one that keeps crop_area and the largest that fits, a uniformly placed
    window; the whole image when no drawn ratio fits."""
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
    out = ops.arange(size, dtype="float32")
    source = start[:, None] * size + (out[None, :] + 0.5) * length[:, None] - 0.5
    first, last = start[:, None] * size, (start + length)[:, None] * size - 1.0
    source = ops.minimum(ops.maximum(source, first), last)  # as resizing the cropped image
    pixels = ops.arange(size, dtype="float32")
    return ops.relu(1.0 - ops.abs(source[:, :, None] - pixels[None, None, :]))


class CropAndFlip(keras.layers.Layer):
    """Random crops of crop_area to all of the image, resized back, and random flips; only
    while training. Images in 0..255 come out as floats in 0..255."""

    def __init__(self, crop_area: float, flip: bool, seed: int | None = None, **kwargs):
        super().__init__(**kwargs)
        self.crop_area, self.flip, self.seed = crop_area, flip, seed
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, images, training=None):
        images = ops.cast(images, self.compute_dtype)
        if not training or (self.crop_area >= 1.0 and not self.flip):
            return images
        batch, size = ops.shape(images)[0], images.shape[1]
        if self.crop_area < 1.0:
            top, left, height, width = crop_windows(batch, self.crop_area, self.seed_generator)
        else:
            top = left = ops.zeros((batch,))
            height = width = ops.ones((batch,))
        rows = resize_matrix(top, height, size)
        columns = resize_matrix(left, width, size)
        if self.flip:  # a flipped image reads its columns right to left
            flipped = keras.random.uniform((batch,), seed=self.seed_generator) < 0.5
            columns = ops.where(flipped[:, None, None], ops.flip(columns, axis=1), columns)
        rows, columns = ops.cast(rows, images.dtype), ops.cast(columns, images.dtype)
        images = ops.einsum("boh,bhwc->bowc", rows, images)
        return ops.einsum("bpw,bowc->bopc", columns, images)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "crop_area": self.crop_area,
            "flip": self.flip,
            "seed": self.seed,
        }


class OneOf:
    """On the host, in tf.data: each batch, with `probability`, goes through one of `layers`
    (Keras' MixUp and CutMix, say) picked at random; the others pass as they are. Mixing
    every batch makes the training images harder than the test's; winning recipes mix a share.
    """

    def __init__(self, layers: list, probability: float, seed: int | None = None):
        self.layers, self.probability, self.seed = layers, probability, seed

    def __call__(self, batch: dict) -> dict:
        import tensorflow as tf  # tf.data calls this with TensorFlow's tensors, under any backend

        def mixed(layer):
            # Back as the batch came (uint8, say), so the batches left alone cost no casts.
            out, dtype = layer(batch), batch["images"].dtype
            images = out["images"]
            if dtype.is_integer:  # a mixed pixel rounds to a whole level
                images = tf.saturate_cast(tf.round(images), dtype)
            return {"images": tf.cast(images, dtype), "labels": out["labels"]}

        draw = tf.random.uniform([], seed=self.seed)
        picked = tf.cast(draw / self.probability * len(self.layers), tf.int32)
        index = tf.where(draw < self.probability, 1 + tf.minimum(picked, len(self.layers) - 1), 0)
        branches = [lambda: batch] + [lambda layer=layer: mixed(layer) for layer in self.layers]
        return tf.switch_case(index, branches)


class CutMix(keras.layers.CutMix):
    """Keras' CutMix, each label weighed by the pixels its box really covers. Keras (3.15)
    weighs by the box's fractional area while it pastes whole pixels: at 32 pixels a side
    that is off by up to a row of them (tests/test_recipe.py measures it)."""

    def get_random_transformation(self, data, training=True, seed=None):
        drawn = super().get_random_transformation(data, training, seed)
        if drawn is not None:  # the share of each image its own pixels keep
            pasted = self.backend.cast(drawn["batch_masks"], "float32")
            drawn["mix_weight"] = 1.0 - self.backend.numpy.mean(pasted, axis=(1, 2, 3))
        return drawn
