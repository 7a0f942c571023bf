"""The recipe the model trains with: the learning-rate schedule, the loss, the class weights,
the metric and the optimizer, and `compile_model`, which puts them together. Only training
reads it: an inference notebook carries none of it.

The training notebook shows it as its recipe cell, and train, preview and ablate read it, in a
notebook as the cell last defined it.
"""

import keras
from keras import ops

from {{ cookiecutter.package }}.runtime.config import targets


def learning_rate_schedule(cfg, replicas, steps_per_epoch):
    """Linear warm-up to the peak (scaled by replicas, as the batch is), then cosine decay."""
    peak = cfg.learning_rate * replicas
    total = cfg.epochs * steps_per_epoch
    warmup = min(int(cfg.warmup_epochs * steps_per_epoch), total)  # a short run may be all warm-up
    return keras.optimizers.schedules.CosineDecay(
        initial_learning_rate=peak / 10 if warmup else peak,
        decay_steps=max(1, total - warmup),
        alpha=0.01,
        warmup_target=peak if warmup else None,
        warmup_steps=warmup,
    )


def loss(cfg, class_shares=None, mixing=None, standardized=None):
    """Cross-entropy with label smoothing. Labels come as class numbers or rows (several
    labels, shares, RandAugment on the host), made rows here; with `mixing` (the model's
    mixing layer), the training step's rows mixed as its images were. With
    Config.class_balance, each image's loss weighed by its label's class weight
    (`class_weights`). A metric of values: the squared error of the values standardized by
    each target's spread (`standardized`), so that each target weighs alike."""
    mixed = mixing.mixed_labels if mixing else (lambda rows: rows)
    if targets(cfg) == "values":
        spread = ops.convert_to_tensor(standardized["spread"], "float32")

        def standardized_squared_error(values, predicted):
            error = (mixed(ops.cast(values, "float32")) - predicted) / spread
            return ops.mean(ops.square(error), axis=-1)

        return standardized_squared_error
    if cfg.multi_label:  # each class its own yes or no

        def smoothed_binary_cross_entropy(labels, probabilities):
            rows = mixed(ops.cast(labels, "float32"))
            return keras.losses.binary_crossentropy(
                rows, probabilities, label_smoothing=cfg.label_smoothing
            )

        return smoothed_binary_cross_entropy
    weights = class_weights(cfg, class_shares)

    def smoothed_cross_entropy(labels, probabilities):
        rows = mixed(as_rows(labels, cfg.num_classes))
        loss = keras.losses.categorical_crossentropy(
            rows, probabilities, label_smoothing=cfg.label_smoothing
        )
        if weights is not None:  # a mixed row weighs as its mix of classes
            loss = loss * ops.sum(rows * ops.convert_to_tensor(weights), axis=-1)
        return loss

    return smoothed_cross_entropy


def class_weights(cfg, class_shares):
    """Each class's loss weight, (1 / its share of the training images) to the power
    Config.class_balance, scaled so that the average training image weighs 1 (the learning
    rate means what it meant); None when off or the shares are not known."""
    if not cfg.class_balance or class_shares is None:
        return None
    shares = [max(share, 1e-6) for share in class_shares]
    raw = [share**-cfg.class_balance for share in shares]
    average = sum(share * weight for share, weight in zip(shares, raw, strict=True))
    return [weight / average for weight in raw]


def accuracy(cfg, mixing=None):
    """Of each class's yes or no (multi-label), or of the one class (a mixed row: its larger)."""
    if cfg.multi_label:
        return keras.metrics.BinaryAccuracy(name="accuracy")
    mixed = mixing.mixed_labels if mixing else (lambda rows: rows)

    def of_the_class(labels, probabilities):
        rows = mixed(as_rows(labels, cfg.num_classes))
        return keras.metrics.categorical_accuracy(rows, probabilities)

    return keras.metrics.MeanMetricWrapper(of_the_class, name="accuracy")


def as_rows(labels, num_classes):
    """One row per image: class numbers (any shape Keras gives them) one-hot, rows as they are."""
    if labels.shape[-1] == num_classes and len(labels.shape) == 2:
        return ops.cast(labels, "float32")
    return ops.one_hot(ops.reshape(ops.cast(labels, "int32"), (-1,)), num_classes)


class AdamW(keras.optimizers.AdamW):
    """Keras' AdamW, the pretrained backbone's weights at `backbone_share` of the learning
    rate: they start near where they should end, the new head far from it. (Keras 3.15's
    MultiOptimizer does the same; Kaggle's and Colab's Keras 3.13 lack it.) Its weights'
    average (`use_ema`) warms up with the step count: Keras' starts at the first step's
    weights, and at 0.99 still holds 0.45 of the untrained network after 80 steps, so its
    momentum is min(ema, (1 + step) / (10 + step)), as timm's model EMA warms up (Keras 3.13
    to 3.15 read `ema_momentum` in `_update_model_variables_moving_average`; test_recipe.py
    checks the warm-up step by step, so a Keras that moves it fails there loudly)."""

    def __init__(self, *args, backbone=(), backbone_share=1.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.backbone_share = backbone_share
        self.backbone = {self._var_key(variable) for variable in backbone}

    def update_step(self, gradient, variable, learning_rate):
        if self.backbone_share != 1.0 and self._var_key(variable) in self.backbone:
            learning_rate = learning_rate * self.backbone_share
        super().update_step(gradient, variable, learning_rate)

    def _update_model_variables_moving_average(self, trainable_variables):
        target = self.ema_momentum
        step = ops.cast(self.iterations, "float32")
        self.ema_momentum = ops.minimum(target, (1.0 + step) / (10.0 + step))
        try:  # the momentum is a tensor only while the step is traced
            super()._update_model_variables_moving_average(trainable_variables)
        finally:
            self.ema_momentum = target


def mixing_layer(model):
    """The model's mixing layer (one with `mixed_labels`, as preview finds it too), whose
    labels the loss mixes alike, or None."""
    return next((layer for layer in model.layers if hasattr(layer, "mixed_labels")), None)


def compile_model(
    model, cfg, replicas, steps_per_epoch, class_shares=None, standardized=None, **run
):
    """The loss, the optimizer and the metric, for a run of `steps_per_epoch` steps an epoch
    on `replicas` replicas; `run` is what the accelerator decides (steps_per_execution,
    jit_compile); `class_shares`, each class's share of the training images (for
    Config.class_balance); `standardized`, as build_model's. Config.ema: the optimizer keeps
    the weights' moving average, which train validates each epoch and keeps (averaging.py)."""
    backbone = [layer for layer in model.layers if isinstance(layer, keras.Model)]
    optimizer = AdamW(
        learning_rate_schedule(cfg, replicas, steps_per_epoch),
        weight_decay=cfg.weight_decay,
        use_ema=bool(cfg.ema),
        ema_momentum=cfg.ema or 0.99,
        backbone=[v for layer in backbone for v in layer.trainable_variables],
        backbone_share=cfg.backbone_learning_rate,
    )
    # Decay pulls weights towards 0: right for kernels, wrong for norms' scales and biases.
    optimizer.exclude_from_weight_decay(
        var_list=[v for v in model.trainable_variables if len(v.shape) < 2]
    )
    mixer = mixing_layer(model)  # the loss and the metric mix the labels as it mixed the images
    model.compile(
        optimizer=optimizer,
        loss=loss(cfg, class_shares, mixer, standardized),
        # Weighted, so the blank rows that fill the last validation batch count for nothing.
        weighted_metrics=[accuracy(cfg, mixer)] if targets(cfg) != "values" else [],
        **run,
    )
    # Built now, not in the step's first trace, where Keras on TensorFlow builds it when no
    # tf.distribute strategy is set: variables made in a trace make TensorFlow trace the step
    # a second time.
    optimizer.build(model.trainable_variables)
