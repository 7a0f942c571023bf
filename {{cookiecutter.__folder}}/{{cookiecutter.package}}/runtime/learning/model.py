"""The model: a pretrained backbone (backbones.py) and a head, and how it learns.

The model takes images in 0..255 (uint8, or bfloat16 on TPUs under TensorFlow); while
training, its first layer crops and flips them at random (augment.py); the next scales them
as the backbone's preset says, so the input pipeline stays the same for every backbone. Only
Keras 3 APIs: the same code builds under TensorFlow and JAX.

This is the module a competitor edits (the notebook shows it as its model cell): train,
evaluate and predict build the model with `build_model` and train compiles it with
`compile_model`, whichever copy of them they are given.
"""

import keras
from keras import layers

# Spelled out, not `.augment`: the notebook runs this file as its model cell, outside the package.
from {{ cookiecutter.package }}.runtime.learning.augment import CropAndFlip


def build_model(cfg, backbone, image_dtype="uint8"):
    """The classifier on `backbone` (backbones.Backbone: its Keras model and its scaling).
    Called inside the accelerator's scope, under the run's precision policy."""
    inputs = keras.Input((cfg.image_size, cfg.image_size, 3), dtype=image_dtype, name="image")
    # While training only: random crops and flips, on the accelerator (augment.py).
    x = CropAndFlip(cfg.crop_area, cfg.flip, cfg.seed, name="crop_and_flip")(inputs)
    # The preset's own scaling (its image converter's scale and offset: mean and std folded in).
    x = layers.Rescaling(backbone.scale, backbone.offset, name="to_backbone_range")(x)
    # Some keras-hub backbones name their input ({"images": ...}): give it by name.
    names = backbone.model.input if isinstance(backbone.model.input, dict) else None
    x = backbone.model({next(iter(names)): x} if names else x)
    # A feature map (convolutional backbones) or a sequence of patch tokens (transformers).
    pooling = layers.GlobalAveragePooling2D if len(x.shape) == 4 else layers.GlobalAveragePooling1D
    x = pooling(name="pool")(x)
    x = layers.Dropout(cfg.dropout)(x)
    # float32 probabilities even under mixed precision: softmax in bfloat16 loses the tail.
    # Several labels per image: each class its own sigmoid, not one softmax over them all.
    activation = "sigmoid" if cfg.multi_label else "softmax"
    outputs = layers.Dense(cfg.num_classes, activation, dtype="float32", name="classes")(x)
    return keras.Model(inputs, outputs, name=f"{cfg.backbone.replace('-', '_')}_classifier")


def compile_model(model, cfg, learning_rate, **run):
    """The loss, the optimizer and the metric; `learning_rate` is the run's schedule, and
    `run` what the accelerator decides (steps_per_execution, jit_compile)."""
    accuracy = (  # of each class's yes or no (multi-label), or of the one class
        keras.metrics.BinaryAccuracy(name="accuracy")
        if cfg.multi_label
        else keras.metrics.SparseCategoricalAccuracy(name="accuracy")
    )
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss="binary_crossentropy" if cfg.multi_label else "sparse_categorical_crossentropy",
        # Weighted, so the blank rows that fill the last validation batch count for nothing.
        weighted_metrics=[accuracy],
        **run,
    )
