"""keras-hub's EfficientNet, with "same" padding where its stride is 1.

keras-hub (checked against 0.32.0, `_apply_efficientnet_block`) pads every depthwise
convolution beforehand and convolves with padding="valid", at stride 1 as well as 2. At stride 1
that is "same" padding, but XLA then computes the gradient on the padded tensor, outside its
fast depthwise kernels: a training step under JAX costs about 1.5x (docs/efficientnet-padding.md).
The layers, their names and weights stay, so checkpoints are the same files with or without it.
Once keras-hub pads only when the stride is above 1, this finds nothing to change and can go.
"""

from __future__ import annotations

import keras
from keras import layers


def same_at_stride_one(model: keras.Model) -> None:
    """Make each stride-1 depthwise convolution that keras-hub pads beforehand pad "same"."""
    for pad, conv in padded_at_stride_one(model):
        pad.padding = ((0, 0), (0, 0))
        conv.padding = "same"


def padded_at_stride_one(model: keras.Model) -> list[tuple[layers.ZeroPadding2D, layers.Layer]]:
    """(padding, convolution) pairs where a stride-1 depthwise convolution takes a tensor
    padded by exactly what "same" would add."""
    by_name = {layer.name: layer for layer in model._flatten_layers()}
    found = []
    for conv in by_name.values():
        pad = by_name.get(f"{conv.name}_pad")  # keras-hub names it after its convolution
        if (
            isinstance(conv, layers.DepthwiseConv2D)
            and isinstance(pad, layers.ZeroPadding2D)
            and conv.strides == (1, 1)
            and conv.dilation_rate == (1, 1)
            and conv.padding == "valid"
            and all(size % 2 for size in conv.kernel_size)
            and pad.padding == tuple((size // 2, size // 2) for size in conv.kernel_size)
        ):
            found.append((pad, conv))
    return found
