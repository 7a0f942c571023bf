"""The convolutions and pads of a training step's gradient under JAX, for a small EfficientNet
of tests/presets.py as keras-hub builds it and as backbones.load gives it.

Usage: python -m tests.jax_padding PRESET_FOLDER (prints JSON). test_efficientnet_padding.py
runs it in a fresh process: Keras' backend is fixed when Keras is first imported.
"""

import json
import sys

import jax
import keras_hub
import numpy as np

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.learning import backbones


def equations(jaxpr):
    """Every equation of a jaxpr, those of the jaxprs inside it (jit, custom rules) too."""
    for equation in jaxpr.eqns:
        yield equation
        for param in equation.params.values():
            for inner in param if isinstance(param, tuple | list) else [param]:
                inner = getattr(inner, "jaxpr", inner)  # a ClosedJaxpr holds its Jaxpr
                if hasattr(inner, "eqns"):
                    yield from equations(inner)


def counted(model, images) -> dict:
    """What XLA gets for the gradient of a loss of the backbone's features, training."""
    trainable = [variable.value for variable in model.trainable_variables]
    others = [variable.value for variable in model.non_trainable_variables]

    def loss(trainable):
        features, _ = model.stateless_call(trainable, others, images, training=True)
        return (features**2).mean()

    found = list(equations(jax.make_jaxpr(jax.grad(loss))(trainable).jaxpr))
    convolutions = [e.params for e in found if e.primitive.name == "conv_general_dilated"]
    pads = [e.params["padding_config"] for e in found if e.primitive.name == "pad"]
    return {
        "depthwise_unpadded_at_stride_one": sum(
            params["feature_group_count"] > 1
            and set(params["window_strides"]) == {1}
            and all(side == (0, 0) for side in params["padding"])
            for params in convolutions
        ),
        "pads": sum(any(low or high for low, high, _ in config) for config in pads),
    }


def main(folder: str) -> None:
    images = np.random.default_rng(0).normal(size=(2, 64, 64, 3)).astype("float32")
    stock = keras_hub.models.Backbone.from_preset(folder)
    cfg = Config(backbone="efficientnet-b0", weights=folder, image_size=64)
    fixed = backbones.load(cfg).model
    print(json.dumps({"stock": counted(stock, images), "fixed": counted(fixed, images)}))


if __name__ == "__main__":
    main(sys.argv[1])
