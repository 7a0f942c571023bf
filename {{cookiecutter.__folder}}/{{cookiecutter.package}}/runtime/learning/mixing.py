"""MixUp and CutMix in the model, on the accelerator, while training: a share of the batches
mixed, each image with a partner in its batch, and the labels mixed alike by the loss (model.py
asks `mixed_labels`). Imported by the model cell only where a run mixes (Config.mixup,
Config.cutmix): a notebook of a run that does not carries none of it."""

from __future__ import annotations

import threading

import keras
from keras import ops

PROPOSALS = 16  # Gamma draws proposed an image (log_gamma); the first accepted is kept


class MixUpOrCutMix(keras.layers.Layer):
    """While training, a share of the batches (`probability`) mixed by MixUp or CutMix (one of those
    switched on, picked at random), each image with its partner in the batch (`partners`);
    `mixed_labels` mixes the same step's label rows alike (model.py's loss and metric call it).
    MixUp blends the whole of two images by a weight drawn per image from Beta(mixup, mixup), as
    Keras' MixUp draws it; CutMix pastes a box of the partner, its area drawn as Keras' CutMix draws
    it, and the label keeps the share of pixels the image kept (Keras, 3.15, weighs by the box's
    fractional area while it pastes whole pixels: at 32 pixels a side, off by up to a row of them).
    Both mixes' shares of each pixel are computed and one is picked with `where`: every shape is
    static, so XLA compiles the step once, and mixing is one blend of the batch, element-wise.
    Images in 0..255 come out as floats in 0..255."""

    def __init__(self, mixup: float, cutmix: float, probability: float, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.mixup, self.cutmix, self.probability, self.seed = mixup, cutmix, probability, seed
        self.seed_generator = keras.random.SeedGenerator(seed)
        # What this step drew, for its loss, which Keras traces right after the forward pass,
        # in the same trace and thread (a tf.distribute strategy may run each replica in a
        # thread of its own). Keras hands the forward pass's losses to the loss the same way.
        self.drawn = threading.local()

    def call(self, images, training=None):
        images = ops.cast(images, self.compute_dtype)
        self.drawn.kept = None
        if not training:
            return images
        batch, height, width = ops.shape(images)[0], images.shape[1], images.shape[2]
        takes = ([self.mixed_up] if self.mixup else []) + ([self.cut_mixed] if self.cutmix else [])
        # One draw a batch: below `probability` it is mixed, by the mix its value falls on.
        draw = keras.random.uniform((), seed=self.seed_generator)
        picked = ops.cast(draw / max(self.probability, 1e-9) * len(takes), "int32")
        picked = ops.minimum(picked, len(takes) - 1)
        # Each pixel's share taken from the partner image: small (no channels), so picking the
        # mix costs little; then one blend of the whole batch, whichever mix it is.
        taken = ops.zeros((batch, height, width, 1))
        for index, take in enumerate(takes):
            chosen = ops.logical_and(draw < self.probability, picked == index)
            taken = ops.where(chosen, take(batch, height, width), taken)
        groups = replica_groups()
        self.drawn.kept, self.drawn.groups = 1.0 - ops.mean(taken, axis=(1, 2, 3)), groups
        taken = ops.cast(taken, images.dtype)
        return images + (partners(images, groups) - images) * taken

    def mixed_up(self, batch, height, width):
        """MixUp: each image keeps a share drawn from Beta(mixup, mixup) of every pixel."""
        kept = beta(batch, self.mixup, self.mixup, self.seed_generator)
        return (1.0 - kept)[:, None, None, None]

    def cut_mixed(self, batch, height, width):
        """CutMix: a box of the partner pasted, its sides sqrt(1 - share) of the image's, placed
        uniformly."""
        alpha = keras.random.uniform((), 0.0, self.cutmix, seed=self.seed_generator) + 1e-6
        share = beta(batch, alpha, alpha, self.seed_generator)
        side = ops.sqrt(1.0 - share)

        def spans(length):  # each box's first and past-the-end pixel along a side
            start = keras.random.uniform((batch,), seed=self.seed_generator) * (1.0 - side) * length
            return start[:, None, None], (start + side * length)[:, None, None]

        (top, bottom), (left, right) = spans(height), spans(width)
        rows = ops.arange(height, dtype="float32")[None, :, None]
        columns = ops.arange(width, dtype="float32")[None, None, :]
        pasted = (rows >= top) & (rows < bottom) & (columns >= left) & (columns < right)
        return ops.cast(pasted, "float32")[..., None]

    def mixed_labels(self, rows):
        """This step's label rows (one per image) mixed as its images were; outside training,
        as they are."""
        kept = getattr(self.drawn, "kept", None)
        if kept is None:
            return rows
        kept = ops.cast(kept, rows.dtype)[:, None]
        return kept * rows + (1.0 - kept) * partners(rows, self.drawn.groups)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        names = ("mixup", "cutmix", "probability", "seed")
        return {**super().get_config(), **{name: getattr(self, name) for name in names}}


def partners(batch, groups: int = 1):
    """Each image's (or label row's) partner: the one as far from the end of its group as it is from
    the start, as timm pairs a batch (batches come shuffled, so partners are random). Under JAX a
    group is a device's share of the global batch: each device mixes its own images and none crosses
    to another. A TensorFlow strategy calls the model on each replica's share: one group."""
    if groups == 1:
        return ops.flip(batch, axis=0)
    grouped = ops.reshape(batch, (groups, -1, *batch.shape[1:]))
    return ops.reshape(ops.flip(grouped, axis=1), ops.shape(batch))


def replica_groups() -> int:
    """How many devices Keras' distribution (JAX's DataParallel) splits the batch over; 1
    without one."""
    distribution = keras.distribution.distribution()
    if distribution is None:
        return 1
    mesh = distribution.device_mesh
    return mesh.shape[mesh.axis_names.index(distribution.batch_dim_name)]


def beta(size, a, b, seed):
    """`size` draws from Beta(a, b): Ga / (Ga + Gb) of two Gamma draws (`log_gamma`), as
    keras.random.beta draws it, in operations XLA compiles under every backend: TensorFlow's
    gamma sampler, which keras.random.beta calls there, has no XLA kernel, so a TensorFlow
    step on a GPU or TPU would not compile."""
    return ops.sigmoid(log_gamma(size, a, seed) - log_gamma(size, b, seed))


def log_gamma(size, shape, seed):
    """The logarithms of `size` draws from Gamma(shape, 1), shape > 0, by Marsaglia and
    Tsang's method ("A simple method for generating gamma variables", 2000): PROPOSALS
    proposals an image from a normal draw, the first accepted kept (each is, with probability
    0.95 or more); a shape below 1 as Gamma(shape + 1) * U^(1 / shape). In logarithms, so
    that a tiny shape (CutMix's can be) neither underflows nor divides 0 by 0."""
    shape = ops.convert_to_tensor(shape, "float32")
    d = ops.where(shape < 1.0, shape + 1.0, shape) - 1.0 / 3.0
    c = 1.0 / ops.sqrt(9.0 * d)
    x = keras.random.normal((PROPOSALS, size), seed=seed)
    v = (1.0 + c * x) ** 3
    u = keras.random.uniform((PROPOSALS, size), minval=1e-12, maxval=1.0, seed=seed)
    v = ops.maximum(v, 1e-12)  # a proposal with v <= 0 is rejected below
    accepted = (1.0 + c * x > 0.0) & (ops.log(u) < 0.5 * x**2 + d - d * v + d * ops.log(v))
    first = ops.argmax(ops.cast(accepted, "int32"), axis=0)[None]  # the first accepted
    log_value = ops.log(d) + ops.log(ops.take_along_axis(v, first, axis=0)[0])
    log_value = ops.where(ops.any(accepted, axis=0), log_value, ops.log(d))  # none: its mode
    boost = keras.random.uniform((size,), minval=1e-12, maxval=1.0, seed=seed)
    return log_value + ops.where(shape < 1.0, ops.log(boost) / shape, 0.0)
