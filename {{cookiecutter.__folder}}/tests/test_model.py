"""Every backbone builds into a classifier; weights and schedule behave as documented."""

import dataclasses

import numpy as np
import pytest

from {{ cookiecutter.package }} import model
from {{ cookiecutter.package }}.config import BACKBONES, Config, UserError


def test_the_backbone_table_covers_every_config_choice():
    assert sorted(model.BACKBONES) == sorted(BACKBONES)


@pytest.mark.parametrize("backbone", BACKBONES)
def test_every_backbone_builds_a_classifier_of_uint8_images(backbone):
    net = model.build(Config(backbone=backbone, weights="none", image_size=32, num_classes=7))
    assert net.input.dtype == "uint8"
    probabilities = net.predict_on_batch(np.full((2, 32, 32, 3), 128, np.uint8))
    assert probabilities.shape == (2, 7)
    assert np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)


def test_weights_that_cannot_work_are_refused_with_the_fix():
    with pytest.raises(
        UserError, match="has no ImageNet weights; set Config.weights / --weights none"
    ):
        model.backbone_weights(Config(backbone="small-cnn", weights="imagenet"))
    with pytest.raises(UserError, match="'/no/such.h5' is neither imagenet, none, nor an existing"):
        model.backbone_weights(Config(backbone="resnet50v2", weights="/no/such.h5"))


def test_a_local_weights_file_is_loaded_into_the_backbone(tmp_path):
    """Offline competitions: weights come from an attached file, not a download."""
    cfg = Config(backbone="small-cnn", weights="none", image_size=32, num_classes=3)
    saved = model.build(cfg).get_layer("small_cnn")
    saved.save_weights(tmp_path / "small_cnn.weights.h5")
    loaded = model.build(dataclasses.replace(cfg, weights=str(tmp_path / "small_cnn.weights.h5")))
    fresh = model.build(cfg)
    kernel = [net.get_layer("small_cnn").weights[0].numpy() for net in (loaded, fresh)]
    assert np.array_equal(kernel[0], saved.weights[0].numpy())
    assert not np.array_equal(kernel[1], saved.weights[0].numpy())


def test_learning_rate_warms_up_to_a_peak_scaled_by_replicas_then_decays():
    cfg = Config(learning_rate=1e-3, epochs=10, warmup_epochs=2)
    schedule = model.learning_rate_schedule(cfg, replicas=8, steps_per_epoch=100)
    rate = [float(schedule(step)) for step in (0, 100, 200, 600, 1000)]
    assert rate[0] == pytest.approx(8e-4)
    assert rate[0] < rate[1] < rate[2] == pytest.approx(8e-3)
    assert rate[2] > rate[3] > rate[4] == pytest.approx(8e-5)
    flat = model.learning_rate_schedule(dataclasses.replace(cfg, warmup_epochs=0), 1, 100)
    assert float(flat(0)) == pytest.approx(1e-3)
