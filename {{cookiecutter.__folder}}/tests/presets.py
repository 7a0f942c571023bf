"""Small keras-hub presets of each offered backbone's own class, for tests that cannot reach
Kaggle Models: a few layers with random weights, saved by keras-hub's own save_to_preset with
the ImageNet scaling the real presets carry, so they load exactly as the real ones do.

Usage: python -m tests.presets BACKBONE FOLDER (a fresh process picks its Keras backend).
"""

import json
import os
import sys

import keras_hub

# ImageNet's mean and standard deviation, as the real presets' image converters hold them.
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
SCALING = {
    "scale": [1 / (255 * s) for s in STD],
    "offset": [-m / s for m, s in zip(MEAN, STD, strict=True)],
}
EFFICIENTNET = {
    "stackwise_kernel_sizes": [3, 3],
    "stackwise_num_repeats": [1, 1],
    "stackwise_input_filters": [8, 8],
    "stackwise_output_filters": [8, 16],
    "stackwise_expansion_ratios": [1, 2],
    "stackwise_squeeze_and_excite_ratios": [0.25, 0.25],
    "stackwise_strides": [1, 2],
    "stackwise_force_input_filters": [0, 0],
    "stackwise_nores_option": [False, False],
    "width_coefficient": 1.0,
    "depth_coefficient": 1.0,
    "dropout": 0.0,  # the replica tests compare exact steps: dropout masks follow the layout
}
# backbone: its keras-hub class, a small configuration of it, its image converter. By name,
# looked up when a preset is saved: a keras-hub without one of them (0.26 has no Swin) then
# fails only the backbone's own tests, which the conftest skips there (`preset`).
SMALL = {
    "efficientnet-b0": (
        "EfficientNetBackbone",
        {**EFFICIENTNET, "stackwise_block_types": ["v1", "v1"]},
        "EfficientNetImageConverter",
    ),
    "efficientnet-b3": (
        "EfficientNetBackbone",
        {**EFFICIENTNET, "stackwise_block_types": ["v1", "v1"]},
        "EfficientNetImageConverter",
    ),
    "efficientnetv2-s": (
        "EfficientNetBackbone",
        {**EFFICIENTNET, "stackwise_block_types": ["fused", "unfused"]},
        "EfficientNetImageConverter",
    ),
    "resnet-vd-50": (
        "ResNetBackbone",
        {
            "input_conv_filters": [8, 8, 16],
            "input_conv_kernel_sizes": [3, 3, 3],
            "stackwise_num_filters": [64, 64],  # keras-hub wants 64 first
            "stackwise_num_blocks": [1, 1],
            "stackwise_num_strides": [1, 2],
            "block_type": "bottleneck_block_vd",
            "use_pre_activation": False,
        },
        "ResNetImageConverter",
    ),
    "dinov2-small": (
        "DINOV2Backbone",
        {
            "patch_size": 14,
            "num_layers": 2,
            "hidden_dim": 16,
            "num_heads": 2,
            "intermediate_dim": 32,
            "layer_scale_init_value": 1.0,
            "image_shape": (28, 28, 3),
            "position_embedding_shape": (28, 28),
        },
        "DINOV2ImageConverter",
    ),
    **dict.fromkeys(
        ("dinov3-small", "dinov3-base"),
        (
            "DINOV3Backbone",
            {
                "patch_size": 16,
                "num_layers": 2,
                "hidden_dim": 16,
                "num_heads": 2,
                "intermediate_dim": 32,
                "image_shape": (32, 32, 3),
            },
            "DINOV3ImageConverter",
        ),
    ),
    "swin-tiny": (
        "SwinTransformerBackbone",
        {
            "image_shape": (224, 224, 3),
            "embed_dim": 8,
            "depths": (1, 1, 1, 1),
            "num_heads": (1, 1, 1, 1),
            "window_size": 7,
        },
        "SwinTransformerImageConverter",
    ),
    "siglip-base": (
        lambda **config: keras_hub.models.SigLIPBackbone(
            keras_hub.models.SigLIPVisionEncoder(**config["vision"]),
            keras_hub.models.SigLIPTextEncoder(**config["text"]),
        ),
        {
            "vision": {
                "patch_size": 16,
                "hidden_dim": 16,
                "num_layers": 2,
                "num_heads": 2,
                "intermediate_dim": 32,
                "image_shape": (224, 224, 3),
            },
            "text": {
                "vocabulary_size": 64,
                "embedding_dim": 16,
                "hidden_dim": 16,
                "num_layers": 1,
                "num_heads": 2,
                "intermediate_dim": 32,
            },
        },
        "SigLIPImageConverter",
    ),
    "hgnetv2-b4": (
        "HGNetV2Backbone",
        {
            "depths": [1, 1],
            "embedding_size": 16,
            "hidden_sizes": [32, 64],
            "stem_channels": [3, 8, 16],
            "hidden_act": "relu",
            "use_learnable_affine_block": True,
            # in, middle and out channels, blocks, layers a block, kernel size: each stage
            "stackwise_stage_filters": [(16, 8, 32, 1, 2, 3), (32, 16, 64, 1, 2, 3)],
            "apply_downsample": [False, True],
            "use_lightweight_conv_block": [False, True],
            "image_shape": (224, 224, 3),  # as keras-hub's converter fixed the real preset's
        },
        "HGNetV2ImageConverter",
    ),
}


def save(backbone: str, folder: str) -> str:
    """A small preset of `backbone`'s class in `folder`, as keras-hub writes one."""
    make, config, converter = SMALL[backbone]
    make = getattr(keras_hub.models, make) if isinstance(make, str) else make
    converter = getattr(keras_hub.layers, converter)
    make(**config).save_to_preset(folder)
    try:
        converter(**SCALING).save_to_preset(folder)
    except ImportError:  # keras-hub before 0.30 makes no converter without tensorflow-text
        write_converter(converter, folder)
    return folder


def write_converter(converter, folder: str) -> None:
    """image_converter.json as keras-hub's save_to_preset writes it (keras_hub_export names
    each converter class `keras_hub>ClassName`)."""
    name = converter.__name__
    saved = {
        "module": converter.__module__,
        "class_name": name,
        "config": {"name": "image_converter", "image_size": None, **SCALING},
        "registered_name": f"keras_hub>{name}",
    }
    with open(os.path.join(folder, "image_converter.json"), "w") as file:
        json.dump(saved, file, indent=4)


if __name__ == "__main__":
    save(*sys.argv[1:3])
