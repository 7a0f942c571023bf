"""The backbones one can choose, and what the code knows of each: one entry a backbone.

Config's `backbone` field offers these names; backbones.py loads the one chosen, and the
notebook titles itself with its name (bench-train's offline architectures are
tools/architectures.py's, by these names). Plain data and the standard library only: `--help`
imports it through config.py and loads no TensorFlow. The template's cookiecutter.json offers
the same names; its tests check that they agree.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config import Config


@dataclasses.dataclass(frozen=True)
class Attention:
    """A transformer's attention as learning/attention.py picks its kernel: each head's width,
    the tokens beside the patches (class, registers), whether one learned query pools the
    patches (SigLIP's head), and for windowed attention (Swin) its window's tokens."""

    head_dim: int
    extra_tokens: int = 0
    probe: bool = False
    window: int = 0  # computed with keras-hub's own matrix products: no kernel to pick


@dataclasses.dataclass(frozen=True)
class Choice:
    # The keras-hub preset on Kaggle Models (owner/model/framework/variation/version, pinned),
    # so a Kaggle notebook attaches it and loads its ImageNet weights with the internet off;
    # empty: no preset (small-cnn).
    handle: str
    title: str  # as people write it (the notebook's title)
    parameters: float | None  # millions, in the backbone alone (docs/kaggle.md's table)
    # A vision transformer cuts the image into patches: its size must be a multiple of theirs
    # (Swin's: of its patches merged at its last stage). Such a backbone is rebuilt for the
    # image size (keras-hub's image_shape), unless its position embeddings fix one size.
    patch_size: int = 1
    # A network of any input size whose preset fixes the size it was converted at (HGNetV2's
    # 224): rebuilt for the image size as well.
    sized_preset: bool = False
    smallest_size: int = 0  # 0: any multiple
    fixed_size: int = 0  # the one size it takes (learned position embeddings); 0: any
    # The part of the keras-hub backbone the classifier uses (SigLIP's vision_encoder, not its
    # text tower); empty: all of it.
    part: str = ""
    # Its keras-hub argument for stochastic depth (Config.stochastic_depth); empty: none.
    stochastic_depth: str = ""
    # keras-hub arguments held at these values, whatever the preset saved.
    held: tuple[tuple[str, object], ...] = ()
    # The oldest keras-hub that builds it (empty: none needed), and the oldest Keras that
    # release installs with (its Requires-Dist). Read from the newest patch of each release
    # 0.18 to 0.32: its keras_hub.models has the class, whose __init__ takes the arguments of
    # its architecture (tools/architectures.py) and of the preset's config (EfficientNet's
    # stackwise_width_coefficients and num_features: 0.19). An earlier patch may build it too.
    keras_hub: str = "0.18.1"
    keras: str = "3.5"
    attention: Attention | None = None  # None: no attention layers (a convolutional network)


# The newest keras-hub for each Keras its releases need (their Requires-Dist): what to install
# beside an image's Keras, which an install of keras-hub must never upgrade.
KERAS_HUB_FOR_KERAS = {"3.5": "0.21.1", "3.8": "0.25.1", "3.13": "0.29.1", "3.15": "0.32.0"}


# DINOv2's and DINOv3's drop path held off: keras-hub 0.32 makes its noise for the batch size
# the model was built with (None), so the first training step fails ("Failed to convert
# elements of (None, 1, 1) to Tensor"), and scales rows by noise rather than dropping them (no
# floor). tests/test_model.py trains a step of every backbone.
NO_DROP_PATH = (("drop_path_rate", 0.0),)


# An EfficientNet's stochastic depth is keras-hub's "dropout": its blocks' drop-connect rate.
BACKBONES = {
    "efficientnet-b0": Choice(
        "keras/efficientnet/keras/efficientnet_b0_ra_imagenet/2", "EfficientNet-B0", 4.0,
        stochastic_depth="dropout", keras_hub="0.19.3",
    ),
    "efficientnet-b3": Choice(
        "keras/efficientnet/keras/efficientnet_b3_ra2_imagenet/2", "EfficientNet-B3", 10.8,
        stochastic_depth="dropout", keras_hub="0.19.3",
    ),
    "efficientnetv2-s": Choice(
        "keras/efficientnet/keras/efficientnet2_rw_s_ra2_imagenet/2", "EfficientNetV2-S", 22.3,
        stochastic_depth="dropout", keras_hub="0.19.3",
    ),
    "resnet-vd-50": Choice("keras/resnet_vd/keras/resnet_vd_50_imagenet/2", "ResNet50-vd", 23.6),
    "dinov2-small": Choice(
        "keras/dinov2/keras/dinov2_small/1", "DINOv2 ViT-S/14", 22.2, patch_size=14,
        held=NO_DROP_PATH, attention=Attention(64, extra_tokens=1),  # a class token, no registers
        keras_hub="0.22.2", keras="3.8",
    ),
    # DINOv3 (2025): self-supervised on 1.7 billion images, rotary positions, so any multiple
    # of its 16-pixel patch; the backbone behind several 2025-2026 winners and baselines.
    "dinov3-small": Choice(
        "keras/dinov3/keras/dinov3_vit_small_lvd1689m/1", "DINOv3 ViT-S/16", 21.6, patch_size=16,
        held=NO_DROP_PATH, attention=Attention(64, extra_tokens=5),  # a class token, 4 registers
        keras_hub="0.24.0", keras="3.8",
    ),
    "dinov3-base": Choice(
        "keras/dinov3/keras/dinov3_vit_base_lvd1689m/1", "DINOv3 ViT-B/16", 86.0, patch_size=16,
        held=NO_DROP_PATH, attention=Attention(64, extra_tokens=5), keras_hub="0.24.0", keras="3.8",
    ),
    # Swin (2021): windowed attention in four stages; its windows of 7 tokens need at least
    # 7 at the last stage, so 224 px and up, in steps of 32.
    "swin-tiny": Choice(
        "keras/swin-transformer/keras/swin_tiny_patch4_window7_224/1", "Swin-T", 27.5,
        patch_size=32, smallest_size=224, stochastic_depth="drop_path",
        attention=Attention(32, window=7 * 7), keras_hub="0.29.1",
        # keras-hub 0.29.1 installs beside Keras 3.13, but its Swin's drop path calls
        # keras.ops.random, which Keras 3.13.2 lacks: a training step there ends in an
        # AttributeError (seen on Colab's TPU set, make test-platforms).
        keras="3.15",
    ),
    # SigLIP (2023): a ViT-B/16 trained on image and text pairs (WebLi); its vision tower
    # alone, pooled by its own attention head. Its learned positions are for 224 px only.
    "siglip-base": Choice(
        "keras/siglip/keras/siglip_base_patch16_224/1", "SigLIP ViT-B/16", 92.9, patch_size=16,
        fixed_size=224, part="vision_encoder", attention=Attention(64, probe=True),
        keras_hub="0.20.0",
    ),
    # HGNetV2 (PaddleClas, distilled with SSLD): a fast convolutional network whose feature
    # pyramid's deepest map the head pools.
    "hgnetv2-b4": Choice(
        "keras/hgnetv2/keras/hgnetv2_b4_ssld_stage2_ft_in1k/1", "HGNetV2-B4", 13.6,
        sized_preset=True, keras_hub="0.22.2", keras="3.8",
    ),
    "small-cnn": Choice("", "small CNN", None, keras_hub=""),
}  # fmt: skip


def handle(cfg: Config) -> str:
    return BACKBONES[cfg.backbone].handle


def uses_preset(cfg: Config) -> bool:
    """Whether the backbone comes from a keras-hub preset (its architecture, at least)."""
    return bool(handle(cfg))


def from_kaggle_models(cfg: Config) -> bool:
    """Whether the preset comes from Kaggle Models (else from the folder in Config.weights)."""
    return uses_preset(cfg) and weights(cfg) in ("imagenet", "none")


def weights(cfg: Config) -> str:
    """Config.weights, with "auto" decided: ImageNet's where the backbone has them (a preset
    on Kaggle Models), else none (small-cnn)."""
    if cfg.weights != "auto":
        return cfg.weights
    return "imagenet" if uses_preset(cfg) else "none"


def size_rule(backbone: str) -> tuple[str, str]:
    """What an image size must be for `backbone`, and why, in words (("", "") where any
    size works)."""
    choice = BACKBONES.get(backbone)
    if choice is None:
        return "", ""
    if choice.fixed_size:
        return f"{choice.fixed_size}", "its position embeddings were learned for it"
    if choice.smallest_size:
        rule = f"a multiple of {choice.patch_size} from {choice.smallest_size}"
        return rule, "its windows of 7 tokens at its last stage"
    if choice.patch_size > 1:
        return f"a multiple of {choice.patch_size}", "its patch size"
    return "", ""


def size_fits(backbone: str, size: int) -> bool:
    choice = BACKBONES.get(backbone)
    if choice is None:
        return True
    if choice.fixed_size:
        return size == choice.fixed_size
    return size % choice.patch_size == 0 and size >= choice.smallest_size


def patch_size(backbone: str) -> int:
    """The size an image's must be a multiple of for `backbone` (1 for a name not offered,
    which is reported on its own)."""
    choice = BACKBONES.get(backbone)
    return choice.patch_size if choice else 1
