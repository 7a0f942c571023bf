"""The backbone: a keras-hub preset from Kaggle Models (or small_cnn.py's CNN for CPU demos).
Its input scaling becomes a layer of our model, so the pipeline hands every backbone uint8."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import shutil
from pathlib import Path

import keras
from keras import layers

from ..backbone_choices import BACKBONES, from_kaggle_models, handle, uses_preset, weights
from ..config import Config
from ..errors import UserError, briefly, first_line, named
from ..platform import kaggle_inputs, versions
from ..platform.files import written_whole
from . import attention, efficientnet_padding, small_cnn

# N TensorFlow replicas then train as one (JAX's DataParallel works on the global batch).
SYNC_BATCH_STATISTICS = keras.backend.backend() == "tensorflow"


@dataclasses.dataclass
class Backbone:
    """A backbone with its weights loaded, and what maps 0..255 pixels to its input range."""

    model: keras.Model
    scale: float | list[float]
    offset: float | list[float]
    source: str  # where it came from, as doctor says it


def load(cfg: Config, precision: str = "float32", with_weights: bool = True) -> Backbone:
    """The backbone in `precision`, built in the accelerator's scope (no `with_weights`: bare)."""
    if BACKBONES[cfg.backbone].attention:  # a transformer: Keras told its kernel first
        attention.prepare(cfg.backbone, cfg.image_size, precision)  # read as layers are made
    if not BACKBONES[cfg.backbone].handle:  # no preset: the demos' small CNN, in its own module
        model, source = small_cnn.load(cfg, with_weights)
        synchronize_batch_statistics(model)
        return Backbone(model, small_cnn.SCALE, 0.0, source)
    if refused := versions.refusal(cfg.backbone):  # not from_preset's, which blames the folder
        raise UserError(refused)
    folder, source = preset_folder(cfg)
    import keras_hub

    load_weights = with_weights and weights(cfg) != "none"
    choice = BACKBONES[cfg.backbone]
    try:
        model = keras_hub.models.Backbone.from_preset(
            folder, load_weights=load_weights, dtype=precision, **changed_arguments(cfg)
        )
        if choice.part:  # SigLIP's vision tower, without its text tower
            model = getattr(model, choice.part)
        scale, offset = scaling(folder)
    except Exception as error:  # a folder of another model, or a file cut short
        raise UserError(
            f"could not load the keras-hub preset {folder} for {named('backbone')} "
            f"{cfg.backbone}: {first_line(error)}; give {named('weights')} a preset folder of "
            f"this backbone ({handle(cfg)} on Kaggle Models), or imagenet"
        ) from error
    said = "ImageNet weights" if load_weights else "architecture only"
    return Backbone(prepared(model), scale, offset, f"{said} of {source}")


def changed_arguments(cfg: Config) -> dict:
    """The keras-hub arguments in place of the preset's: patch grid, stochastic depth, held."""
    choice = BACKBONES[cfg.backbone]
    resized = (choice.patch_size > 1 or choice.sized_preset) and not choice.fixed_size
    shape = {"image_shape": (cfg.image_size, cfg.image_size, 3)} if resized else {}
    depth = {choice.stochastic_depth: cfg.stochastic_depth} if choice.stochastic_depth else {}
    return {**shape, **depth, **dict(choice.held)}


def prepared(model: keras.Model) -> keras.Model:
    """The backbone with "same" padding at stride 1, synchronized batch statistics, and DINOv3's
    mask token frozen: no classifier's image reaches it, and Keras would warn of no gradient."""
    efficientnet_padding.same_at_stride_one(model)
    synchronize_batch_statistics(model)
    for variable in model.weights:
        if variable.path.endswith("mask_token"):
            variable.trainable = False
    return model


def synchronize_batch_statistics(model: keras.Model) -> None:
    for layer in model._flatten_layers():
        if isinstance(layer, layers.BatchNormalization):
            layer.synchronized = SYNC_BATCH_STATISTICS


def scaling(folder: str) -> tuple:
    """The preset's image converter's (scale, offset), from its JSON: keras-hub before 0.30
    builds none without tensorflow-text, which Kaggle's TPU image may lack."""
    config = json.loads(Path(folder, "image_converter.json").read_text())["config"]
    scale, offset = config.get("scale"), config.get("offset")
    if "mean" in config and "variance" in config:  # the older spelling, as keras-hub reads it
        std = [math.sqrt(variance) for variance in config["variance"]]
        scale = [(scale or 1.0) / s for s in std]
        offset = [-mean / s for mean, s in zip(config["mean"], std, strict=True)]
    return (1.0 if scale is None else scale), (0.0 if offset is None else offset)


def preset_folder(cfg: Config) -> tuple[str, str]:
    """The preset's local folder and its source: Config.weights, or Kaggle Models' handle."""
    if not from_kaggle_models(cfg):
        if not os.path.isfile(os.path.join(cfg.weights, "config.json")):
            raise UserError(
                f"{named('weights')} {cfg.weights!r} is neither imagenet, none, nor a keras-hub "
                "preset folder (one with config.json and model.weights.h5); attach the preset "
                "(for example as a Kaggle dataset) and give its folder"
            )
        return cfg.weights, cfg.weights
    try:
        folder = downloaded(handle(cfg))
    except Exception as error:  # offline and not in the cache, or the model not attached
        raise UserError(
            f"could not get the keras-hub preset {handle(cfg)} for {named('backbone')} "
            f"{cfg.backbone} from Kaggle Models ({briefly(error)}): on Kaggle, attach the model "
            "(`kernel` lists it in model_sources); elsewhere, run once online (kagglehub keeps "
            f"it) or give {named('weights')} a preset folder"
        ) from error
    return folder, f"kaggle://{handle(cfg)} at {folder}"


# A preset's files that make its architecture and input scaling: trained weights replace its own.
ARCHITECTURE_FILES = ("config.json", "metadata.json", "image_converter.json")


def save_architecture(cfg: Config, folder: Path) -> None:
    """The preset's architecture files into `folder` (nothing for small-cnn)."""
    if not uses_preset(cfg):
        return
    preset = Path(preset_folder(cfg)[0])
    for name in ARCHITECTURE_FILES:
        if (preset / name).is_file():
            with written_whole(folder / name) as temporary:
                shutil.copyfile(preset / name, temporary)


@functools.cache  # asked once a session: a notebook's doctor, train and predict each load it
def downloaded(handle: str) -> str:
    """The preset's folder: where Kaggle mounted the attached model, else kagglehub's cache."""
    import kagglehub

    if kaggle_inputs.in_notebook():
        try:
            return kaggle_inputs.find(f"{kaggle_inputs.PREFIX}models/{handle}").folder
        except UserError:
            if kaggle_inputs.in_scoring_rerun():  # offline, and no proxy call: say what is there
                raise
            # not attached: kagglehub downloads it where the notebook has the internet
    return kagglehub.model_download(handle)
