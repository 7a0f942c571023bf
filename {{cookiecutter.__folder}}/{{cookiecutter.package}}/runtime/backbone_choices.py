"""The backbones one can choose, and what the code knows of each: one entry a backbone. Plain
data only: `--help` imports it through config.py and loads no TensorFlow."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config import Config


@dataclasses.dataclass(frozen=True)
class Attention:
    """A transformer's attention, as learning/attention.py picks its kernel; `probe`: one learned
    query pools the tokens (SigLIP's head)."""

    head_dim: int
    extra_tokens: int = 0
    probe: bool = False
    window: int = 0  # computed with keras-hub's own matrix products: no kernel to pick


@dataclasses.dataclass(frozen=True)
class Choice:
    # The keras-hub preset on Kaggle Models, pinned, so a Kaggle notebook attaches it and loads
    # its ImageNet weights with the internet off; empty: no preset (small-cnn).
    handle: str
    title: str  # as people write it (the notebook's title)
    parameters: float | None  # millions, in the backbone alone (docs/kaggle.md's table)
    # The image size must be a multiple of a vision transformer's patches (Swin's: merged at its
    # last stage); it is rebuilt for the image size, unless its position embeddings fix one.
    patch_size: int = 1
    sized_preset: bool = False  # its preset fixes the size it was converted at: rebuilt too
    smallest_size: int = 0  # 0: any multiple
    fixed_size: int = 0  # the one size it takes (learned position embeddings); 0: any
    part: str = ""  # the part the classifier uses (SigLIP's vision_encoder); empty: all
    stochastic_depth: str = ""  # its keras-hub argument for Config.stochastic_depth; empty: none
    held: tuple[tuple[str, object], ...] = ()  # keras-hub arguments held, whatever the preset says
    # The oldest keras-hub that builds it (empty: none needed), read from the newest patch of
    # each release 0.18 to 0.32, and the oldest Keras that release installs with.
    keras_hub: str = "0.18.1"
    keras: str = "3.5"
    attention: Attention | None = None  # None: no attention layers (a convolutional network)


# The newest keras-hub for each Keras its releases need (their Requires-Dist): what to install
# beside an image's Keras, which an install of keras-hub must never upgrade.
KERAS_HUB_FOR_KERAS = {"3.5": "0.21.1", "3.8": "0.25.1", "3.13": "0.29.1", "3.15": "0.32.0"}


# DINOv2's and DINOv3's drop path held off: keras-hub 0.32 makes its noise for the batch size
# the model was built with (None), so the first training step fails, and scales rows by noise
# rather than dropping them.
NO_DROP_PATH = (("drop_path_rate", 0.0),)


# An EfficientNet's stochastic depth is keras-hub's "dropout": its blocks' drop-connect rate.
BACKBONES = {
    "efficientnet-b0": Choice(
        "keras/efficientnet/keras/efficientnet_b0_ra_imagenet/2", "EfficientNet-B0", 4.0,
        stochastic_depth="dropout", keras_hub="0.19.3"),
    "efficientnet-b3": Choice(
        "keras/efficientnet/keras/efficientnet_b3_ra2_imagenet/2", "EfficientNet-B3", 10.8,
        stochastic_depth="dropout", keras_hub="0.19.3"),
    "efficientnetv2-s": Choice(
        "keras/efficientnet/keras/efficientnet2_rw_s_ra2_imagenet/2", "EfficientNetV2-S", 22.3,
        stochastic_depth="dropout", keras_hub="0.19.3"),
    "resnet-vd-50": Choice("keras/resnet_vd/keras/resnet_vd_50_imagenet/2", "ResNet50-vd", 23.6),
    "dinov2-small": Choice(
        "keras/dinov2/keras/dinov2_small/1", "DINOv2 ViT-S/14", 22.2, patch_size=14,
        held=NO_DROP_PATH, attention=Attention(64, extra_tokens=1),  # a class token, no registers
        keras_hub="0.22.2", keras="3.8"),
    # DINOv3: rotary positions, so any multiple of its 16-pixel patch.
    "dinov3-small": Choice(
        "keras/dinov3/keras/dinov3_vit_small_lvd1689m/1", "DINOv3 ViT-S/16", 21.6, patch_size=16,
        held=NO_DROP_PATH, attention=Attention(64, extra_tokens=5),  # a class token, 4 registers
        keras_hub="0.24.0", keras="3.8"),
    "dinov3-base": Choice(
        "keras/dinov3/keras/dinov3_vit_base_lvd1689m/1", "DINOv3 ViT-B/16", 86.0, patch_size=16,
        held=NO_DROP_PATH, attention=Attention(64, extra_tokens=5),
        keras_hub="0.24.0", keras="3.8"),
    # Swin: its windows of 7 tokens need 7 at the last stage, so 224 px and up, in steps of 32.
    "swin-tiny": Choice(
        "keras/swin-transformer/keras/swin_tiny_patch4_window7_224/1", "Swin-T", 27.5,
        patch_size=32, smallest_size=224, stochastic_depth="drop_path",
        attention=Attention(32, window=7 * 7), keras_hub="0.29.1",
        # keras-hub 0.29.1 installs beside Keras 3.13, but its Swin's drop path calls
        # keras.ops.random, which Keras 3.13.2 lacks.
        keras="3.15"),
    # SigLIP: its vision tower alone; its learned positions are for 224 px only.
    "siglip-base": Choice(
        "keras/siglip/keras/siglip_base_patch16_224/1", "SigLIP ViT-B/16", 92.9, patch_size=16,
        fixed_size=224, part="vision_encoder", attention=Attention(64, probe=True),
        keras_hub="0.20.0"),
    "hgnetv2-b4": Choice(
        "keras/hgnetv2/keras/hgnetv2_b4_ssld_stage2_ft_in1k/1", "HGNetV2-B4", 13.6,
        sized_preset=True, keras_hub="0.22.2", keras="3.8"),
    "small-cnn": Choice("", "small CNN", None, keras_hub=""),
}  # fmt: skip


def handle(cfg: Config) -> str:
    return BACKBONES[cfg.backbone].handle


def uses_preset(cfg: Config) -> bool:
    return bool(handle(cfg))


def from_kaggle_models(cfg: Config) -> bool:
    """Whether the preset comes from Kaggle Models (else from the folder in Config.weights)."""
    return uses_preset(cfg) and weights(cfg) in ("imagenet", "none")


def weights(cfg: Config) -> str:
    """Config.weights, with "auto" decided: imagenet for a preset, else none (small-cnn)."""
    if cfg.weights != "auto":
        return cfg.weights
    return "imagenet" if uses_preset(cfg) else "none"


def size_rule(backbone: str, size: int) -> tuple[str, str, str]:
    """Where `size` does not fit `backbone`: what an image size must be for it, why, and the
    nearest sizes that fit, in words; ("", "", "") where it fits."""
    choice = BACKBONES.get(backbone)
    if choice is None or size == choice.fixed_size:
        return "", "", ""
    if choice.fixed_size:
        fixed = str(choice.fixed_size)
        return fixed, "its position embeddings were learned for it", fixed
    if size % choice.patch_size == 0 and size >= choice.smallest_size:
        return "", "", ""
    multiple = choice.patch_size
    below = max(size, choice.smallest_size) // multiple * multiple
    nearest = " or ".join(str(n) for n in (below, below + multiple) if 32 <= n <= 1024)
    if choice.smallest_size:
        rule = f"a multiple of {multiple} from {choice.smallest_size}"
        return rule, "its windows of 7 tokens at its last stage", nearest
    return f"a multiple of {multiple}", "its patch size", nearest
