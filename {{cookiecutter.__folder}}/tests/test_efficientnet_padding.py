"""keras-hub's EfficientNet, as backbones.load gives it, computes what the preset computes,
without a padded tensor before any stride-1 depthwise convolution (efficientnet_padding.py)."""

import json

import keras_hub
import numpy as np
import pytest
import tensorflow as tf

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.learning import backbones, efficientnet_padding

pytestmark = pytest.mark.quick  # one unit alone: make test-quick runs it


def traced_step(model, images):
    """Features and weight gradients of one training step, and the ops TensorFlow ran."""

    @tf.function
    def step(images):
        with tf.GradientTape() as tape:
            features = model(images, training=True)
            loss = tf.reduce_mean(features**2)
        return features, tape.gradient(loss, model.trainable_variables)

    features, gradients = step(images)
    return features, gradients, step.get_concrete_function(images).graph.get_operations()


def valid_at_stride_one(operations) -> int:
    """Stride-1 depthwise convolutions that convolve unpadded ("valid") tensors."""
    return sum(
        op.type == "DepthwiseConv2dNative"
        and op.get_attr("strides") == [1, 1, 1, 1]
        and op.get_attr("padding") == b"VALID"
        for op in operations
    )


def pads(operations) -> int:
    """Pad ops that add anything."""
    return sum(
        op.type in ("Pad", "PadV2") and bool(np.any(tf.get_static_value(op.inputs[1])))
        for op in operations
    )


def test_the_backbone_computes_what_the_preset_does_with_same_padding_at_stride_one(preset):
    """Same layers and weights, same features and gradients; the small preset's stride-1
    block convolves "same", its stride-2 block keeps keras-hub's padding."""
    folder = preset("efficientnet-b0")
    stock = keras_hub.models.Backbone.from_preset(folder)
    cfg = Config(backbone="efficientnet-b0", weights=folder, image_size=64)
    fixed = backbones.load(cfg).model
    assert [w.path for w in fixed.weights] == [w.path for w in stock.weights]
    images = tf.constant(np.random.default_rng(0).normal(size=(2, 64, 64, 3)), tf.float32)
    ours, theirs = traced_step(fixed, images), traced_step(stock, images)
    close = {"rtol": 1e-5, "atol": 1e-5}  # "same" and "valid" sum in other orders
    np.testing.assert_allclose(ours[0], theirs[0], **close)
    for gradient, presets_gradient in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(gradient, presets_gradient, **close)
    np.testing.assert_allclose(fixed(images), stock(images), **close)  # inference
    assert valid_at_stride_one(theirs[2]) == 1 and valid_at_stride_one(ours[2]) == 0
    assert pads(ours[2]) == pads(theirs[2]) - 1  # the stem's and the stride-2 block's stay
    architecture = backbones.load(cfg, with_weights=False).model
    assert efficientnet_padding.padded_at_stride_one(architecture) == []


@pytest.mark.slow  # a fresh process, importing JAX
def test_under_jax_the_gradient_has_no_padded_stride_one_depthwise_convolution(preset, run_python):
    done = run_python("-m", "tests.jax_padding", preset("efficientnet-b0"), backend="jax")
    assert done.returncode == 0, done.stderr[-3000:]
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts["stock"]["depthwise_unpadded_at_stride_one"] == 1
    assert counts["fixed"]["depthwise_unpadded_at_stride_one"] == 0
    assert counts["fixed"]["pads"] < counts["stock"]["pads"]
