"""Each backbone's keras-hub architecture as its preset was built, so that `bench train
--weights none` builds it with no download, and keras.applications' network of the same
architecture (bench train's APPS variant): by the backbone's name in the runtime's registry
(runtime/backbone_choices.py), which the template repository's tests/test_backbone_choices.py
(not this project's tests) holds them to."""

from __future__ import annotations

# Each preset's architecture as keras-hub converted its weights (from timm:
# keras_hub/src/utils/timm/convert_efficientnet.py; from PaddleClas:
# tools/checkpoint_conversion/convert_resnet_vd_checkpoints.py; keras-hub 0.32).
EFFICIENTNET_V1 = {
    "stackwise_kernel_sizes": [3, 3, 5, 3, 5, 5, 3], "stackwise_num_repeats": [1, 2, 2, 3, 3, 4, 1],
    "stackwise_input_filters": [32, 16, 24, 40, 80, 112, 192],
    "stackwise_output_filters": [16, 24, 40, 80, 112, 192, 320],
    "stackwise_expansion_ratios": [1, 6, 6, 6, 6, 6, 6], "stackwise_strides": [1, 2, 2, 2, 1, 2, 1],
    "stackwise_squeeze_and_excite_ratios": [0.25] * 7, "stackwise_block_types": ["v1"] * 7,
}  # fmt: skip
EFFICIENTNET = {
    "min_depth": None, "use_depth_divisor_as_min_depth": True, "cap_round_filter_decrease": True,
    "batch_norm_momentum": 0.9, "batch_norm_epsilon": 1e-5, "dropout": 0,
}  # fmt: skip
EFFICIENTNET_V2_S = {
    **EFFICIENTNET,
    "stackwise_kernel_sizes": [3, 3, 3, 3, 3, 3], "stackwise_num_repeats": [2, 4, 4, 6, 9, 15],
    "stackwise_input_filters": [24, 24, 48, 64, 128, 160],
    "stackwise_output_filters": [24, 48, 64, 128, 160, 272],
    "stackwise_expansion_ratios": [1, 4, 4, 4, 6, 6], "stackwise_strides": [1, 2, 2, 2, 1, 2],
    "stackwise_squeeze_and_excite_ratios": [0, 0, 0, 0.25, 0.25, 0.25],
    "stackwise_block_types": ["fused"] * 3 + ["unfused"] * 3,
    "stackwise_force_input_filters": [0] * 6, "stackwise_nores_option": [False] * 6,
    "width_coefficient": 1.0, "depth_coefficient": 1.0, "activation": "silu", "num_features": 1792,
}  # fmt: skip
RESNET_VD_50 = {
    "input_conv_filters": [32, 32, 64], "input_conv_kernel_sizes": [3, 3, 3],
    "stackwise_num_filters": [64, 128, 256, 512], "stackwise_num_blocks": [3, 4, 6, 3],
    "stackwise_num_strides": [1, 2, 2, 2], "block_type": "bottleneck_block_vd",
}  # fmt: skip
# From Hugging Face's configs, as keras-hub's converters map them (keras_hub/src/utils/
# transformers/convert_dinov3.py, convert_swin_transformer.py; tools/checkpoint_conversion/
# convert_siglip_checkpoints.py, and convert_hgnetv2_checkpoints.py's table of B0 to B6).
# Built so, they hold the presets' parameters: Swin-T 27,519,354, HGNetV2-B4 13,599,072 and
# SigLIP's whole backbone 203,156,230 exactly; DINOv3 21,596,544 and 85,660,416 (Hugging
# Face's counts); SigLIP's vision tower 92,884,420.
DINOV3_SMALL = {
    "patch_size": 16, "num_layers": 12, "hidden_dim": 384, "num_heads": 6,
    "intermediate_dim": 1536, "layer_scale_init_value": 1.0, "num_register_tokens": 4,
    "use_mask_token": True, "hidden_activation": "gelu", "use_gated_mlp": False,
    "use_query_bias": True, "use_key_bias": False, "use_value_bias": True, "use_proj_bias": True,
    "use_mlp_bias": True, "attention_dropout": 0.0, "drop_path_rate": 0.0, "layer_norm_eps": 1e-5,
    "image_shape": [224, 224, 3], "rope_theta": 100.0, "apply_layernorm": False,
}  # fmt: skip
DINOV3_BASE = {**DINOV3_SMALL, "hidden_dim": 768, "num_heads": 12, "intermediate_dim": 3072}
SWIN_TINY = {
    "image_shape": [224, 224, 3], "patch_size": 4, "embed_dim": 96, "depths": [2, 2, 6, 2],
    "num_heads": [3, 6, 12, 24], "window_size": 7, "mlp_ratio": 4.0, "qkv_bias": True,
    "dropout_rate": 0.0, "attention_dropout": 0.0, "drop_path": 0.1, "patch_norm": True,
}  # fmt: skip
SIGLIP_BASE_VISION = {  # the vision tower alone: the part the classifier uses
    "patch_size": 16, "hidden_dim": 768, "num_layers": 12, "num_heads": 12,
    "intermediate_dim": 3072, "intermediate_activation": "gelu_approximate",
    "layer_norm_epsilon": 1e-6, "image_shape": [224, 224, 3],
}  # fmt: skip
HGNETV2_B4 = {
    "depths": [1, 1, 3, 1], "embedding_size": 48, "hidden_sizes": [128, 512, 1024, 2048],
    "stem_channels": [3, 32, 48], "hidden_act": "relu", "use_learnable_affine_block": False,
    # in, middle and out channels, blocks, layers a block, kernel size: each stage
    "stackwise_stage_filters": [
        [48, 48, 128, 1, 6, 3], [128, 96, 512, 1, 6, 3], [512, 192, 1024, 3, 6, 5],
        [1024, 384, 2048, 1, 6, 5],
    ],
    "apply_downsample": [False, True, True, True], "image_shape": [224, 224, 3],
    "use_lightweight_conv_block": [False, False, True, True],
}  # fmt: skip


def efficientnet_v1(width: float, depth: float) -> dict:
    """An EfficientNet B0 to B7's arguments: one architecture, scaled in width and depth."""
    return dict(EFFICIENTNET, **EFFICIENTNET_V1, width_coefficient=width, depth_coefficient=depth)


# A backbone's keras-hub class and arguments (for SigLIP, its vision tower's), and the network
# of keras.applications of the same architecture ("": none).
ARCHITECTURES = {
    "efficientnet-b0": ("EfficientNetBackbone", efficientnet_v1(1.0, 1.0), "EfficientNetB0"),
    "efficientnet-b3": ("EfficientNetBackbone", efficientnet_v1(1.2, 1.4), "EfficientNetB3"),
    "efficientnetv2-s": ("EfficientNetBackbone", EFFICIENTNET_V2_S, ""),
    "resnet-vd-50": ("ResNetBackbone", RESNET_VD_50, ""),
    "dinov3-small": ("DINOV3Backbone", DINOV3_SMALL, ""),
    "dinov3-base": ("DINOV3Backbone", DINOV3_BASE, ""),
    "swin-tiny": ("SwinTransformerBackbone", SWIN_TINY, ""),
    "siglip-base": ("SigLIPVisionEncoder", SIGLIP_BASE_VISION, ""),
    "hgnetv2-b4": ("HGNetV2Backbone", HGNETV2_B4, ""),
}
