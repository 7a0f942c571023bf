"""The model: a pretrained backbone (backbones.py) and a head, and the augmentations it runs
while training; its recipe (the loss, the optimizer, the schedule) is recipe.py.

The model takes images in 0..255 (uint8, or bfloat16 on TPUs under TensorFlow). Each part of
the recipe is a Config field (its section "The recipe"), and `ablate` measures what each buys
on your data. Augmentation runs where it costs least (docs/recipe.md gives the costs):
- in the model, on the accelerator, while training only: MixUp and CutMix (mixing.py; the
  loss mixes the labels alike) and the random crop and flip (augment.py: element-wise
  operations and matrix products, which accelerators run fastest);
- on the host, in tf.data, on each training batch: RandAugment (its ops are per image and
  branchy), off unless asked for: the datasets' host_augmentations (pipeline.py).
Only Keras 3 APIs: the same code builds under TensorFlow and JAX.

This is the module a competitor edits: the notebook shows it as its model cell, and train,
evaluate, predict, preview, doctor and ablate all build with it, in a notebook as the cell
last defined it.
"""

import keras
from keras import layers

from {{ cookiecutter.package }}.runtime.config import crop_area, flips, targets
from {{ cookiecutter.package }}.runtime.learning import mixing
from {{ cookiecutter.package }}.runtime.learning.augment import CropAndFlip


def model_augmentations(cfg):
    """Run in the model on the accelerator, while training only; images in 0..255. A share
    of the batches mixed, whole images blended (MixUp) or a box pasted (CutMix), by one of
    those switched on at random; then the crop, whose area is Config.crop_area's, or for 0
    (auto) what the image size calls for, and the flip."""
    steps = []
    if (cfg.mixup or cfg.cutmix) and cfg.mix_probability:
        steps.append(
            mixing.MixUpOrCutMix(cfg.mixup, cfg.cutmix, cfg.mix_probability, cfg.seed, name="mix")
        )
    steps.append(CropAndFlip(crop_area(cfg), flips(cfg), cfg.seed, cfg.turns, name="crop_and_flip"))
    return steps


def build_model(cfg, backbone, image_dtype="uint8", metadata=0, standardized=None):
    """The classifier (or regressor) on `backbone` (backbones.Backbone: its Keras model and
    its scaling). Called inside the accelerator's scope, under the run's precision policy.
    With `metadata` inputs (the table beside each image, encoded: data/metadata.py), the model
    takes {"image", "metadata"} and joins them to the image's features in its head. A metric
    of values: `standardized`, each target's mean and spread on the training images."""
    inputs = keras.Input((cfg.image_size, cfg.image_size, 3), dtype=image_dtype, name="image")
    x = inputs
    for augmentation in model_augmentations(cfg):
        x = augmentation(x)
    # The preset's own scaling (its image converter's scale and offset: mean and std folded in).
    x = layers.Rescaling(backbone.scale, backbone.offset, name="to_backbone_range")(x)
    # Some keras-hub backbones name their input ({"images": ...}): give it by name.
    names = backbone.model.input if isinstance(backbone.model.input, dict) else None
    x = backbone.model({next(iter(names)): x} if names else x)
    if isinstance(x, dict):  # a feature pyramid (HGNetV2): its deepest map, its last stage's
        x = x[getattr(backbone.model, "out_features", list(x))[-1]]
    # A feature map (convolutional backbones) or a sequence of patch tokens (transformers);
    # SigLIP's vision tower pools its tokens itself.
    if len(x.shape) == 4:
        x = layers.GlobalAveragePooling2D(name="pool")(x)
    elif len(x.shape) == 3:
        x = layers.GlobalAveragePooling1D(name="pool")(x)
    if metadata:  # a small network of its own, so a few columns are not lost among the features
        table = keras.Input((metadata,), name="metadata")
        t = layers.Dense(64, "swish", name="metadata_1")(table)
        t = layers.Dense(64, "swish", name="metadata_2")(t)
        x = layers.Concatenate(name="image_and_metadata")([x, t])
        inputs = {"image": inputs, "metadata": table}
    x = layers.Dropout(cfg.dropout)(x)
    if targets(cfg) == "values":  # a linear output per target, standardized, then scaled back
        x = layers.Dense(cfg.num_classes, dtype="float32", name="standardized")(x)
        mean, spread = standardized["mean"], standardized["spread"]
        outputs = layers.Rescaling(spread, mean, dtype="float32", name="values")(x)
        return keras.Model(inputs, outputs, name=f"{cfg.backbone.replace('-', '_')}_regressor")
    # float32 probabilities even under mixed precision: softmax in bfloat16 loses the tail.
    # Several labels per image: each class its own sigmoid, not one softmax over them all.
    activation = "sigmoid" if cfg.multi_label else "softmax"
    outputs = layers.Dense(cfg.num_classes, activation, dtype="float32", name="classes")(x)
    return keras.Model(inputs, outputs, name=f"{cfg.backbone.replace('-', '_')}_classifier")
