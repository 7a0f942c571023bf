"""Every backbone builds into a classifier of uint8 images; its preset's scaling, its weights
and the schedule behave as documented."""

import dataclasses
import json
import re
import subprocess
import sys
import warnings

import keras
import keras_hub
import numpy as np
import pytest
from conftest import OFFLINE, PROJECT

from {{ cookiecutter.package }}.runtime.backbone_choices import BACKBONES
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.learning import backbones, model, recipe
from {{ cookiecutter.package }}.runtime.platform import versions
from {{ cookiecutter.package }}.runtime.stages import preflight, training_checks
from {{ cookiecutter.package }}.runtime.stages.run import start


def built(cfg):
    """The classifier on the backbone the config names, as train builds it."""
    return model.build_model(cfg, backbones.load(cfg))


PACKAGE = "{{ cookiecutter.package }}"
PRETRAINED = [name for name, choice in BACKBONES.items() if choice.handle]
# The backbones the installed keras-hub or Keras cannot build: none with the newest packages;
# on a platform's older set (`make test-platforms`) their tests skip and their refusal is tested.
UNBUILDABLE = [name for name in BACKBONES if versions.unbuildable(name)]


def smallest_size(backbone: str) -> int:
    """An image size the backbone takes, as small as it takes."""
    choice = BACKBONES[backbone]
    return (
        choice.fixed_size
        or choice.smallest_size
        or (3 * choice.patch_size if choice.patch_size > 1 else 32)
    )


def test_each_pretrained_backbone_is_a_pinned_kaggle_models_handle():
    """owner/model/framework/variation/version, as model_sources takes it: a version pinned."""
    for name in PRETRAINED:
        handle = BACKBONES[name].handle
        assert re.fullmatch(r"keras/[a-z0-9_-]+/keras/[a-z0-9_]+/[0-9]+", handle), name


@pytest.mark.parametrize("backbone", list(BACKBONES))
def test_every_backbone_builds_a_classifier_of_uint8_images_that_trains_a_step(backbone, preset):
    """From a preset folder of the backbone's own keras-hub class (small-cnn: no weights):
    one step moves the backbone's own weights, and the classifier predicts after it."""
    weights = preset(backbone) if backbone in PRETRAINED else "none"
    size = smallest_size(backbone)
    cfg = Config(backbone=backbone, weights=weights, image_size=size, num_classes=7)
    net = built(cfg)
    assert net.input.dtype == "uint8"
    images = np.random.default_rng(0).integers(0, 256, (4, size, size, 3)).astype(np.uint8)
    inner = next(layer for layer in net.layers if isinstance(layer, keras.Model))
    before = [np.array(weight) for weight in inner.trainable_weights]
    # Eager: one step needs no compiled graph (a batch of None fails eagerly as in one).
    net.compile(optimizer=keras.optimizers.SGD(0.1), loss=recipe.loss(cfg), run_eagerly=True)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        assert np.isfinite(net.train_on_batch(images, np.array([0, 1, 2, 3])))
    # Every weight it trains is reached by an image (DINOv3's mask token is not: kept still).
    assert not [w for w in warned if "Gradients do not exist" in str(w.message)], backbone
    assert any(
        not np.array_equal(a, np.array(b))
        for a, b in zip(before, inner.trainable_weights, strict=True)
    )
    probabilities = net.predict_on_batch(images[:2])
    assert probabilities.shape == (2, 7)
    assert np.allclose(probabilities.sum(axis=1), 1.0, atol=1e-5)


if UNBUILDABLE:  # defined only where there is one: the newest packages skip no test

    @pytest.mark.parametrize("backbone", UNBUILDABLE)
    def test_a_backbone_the_installed_keras_hub_cannot_build_is_refused_in_one_line(
        backbone, demo_dir, tmp_path
    ):
        """train stops before any model, in one line naming the version installed and the
        one the backbone needs, where the preset folder's load would blame the folder."""
        clause = r"needs (\S+) (\S+) or later; \1 (\S+)"
        package, needed, installed = re.search(clause, versions.unbuildable(backbone)).groups()
        command = ["-m", PACKAGE, "train", "--preset", "demo", "--data-dir", str(demo_dir)]
        command += ["--output-dir", str(tmp_path / "output"), "--backbone", backbone]
        command += ["--weights", "none", "--image-size", str(smallest_size(backbone))]
        done = subprocess.run(  # offline: a download of the preset is no refusal
            [*OFFLINE, sys.executable, *command], cwd=PROJECT, capture_output=True, text=True,
            timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode != 0, done.stdout[-2000:]
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        said = done.stderr.strip().splitlines()[-1]
        assert said.startswith("error: ") and backbone in said, done.stderr[-3000:]
        assert f"{package} {installed}" in said and needed in said, said


@pytest.mark.parametrize("backbone", ["efficientnet-b0", "dinov2-small"])
def test_our_scaling_gives_the_tensor_the_presets_own_image_converter_gives(backbone, preset):
    cfg = Config(backbone=backbone, weights=preset(backbone), image_size=42, num_classes=3)
    image = np.random.default_rng(0).integers(0, 256, (1, 42, 42, 3)).astype("uint8")
    ours = built(cfg).get_layer("to_backbone_range")(image.astype("float32"))
    try:
        converter = keras_hub.layers.ImageConverter.from_preset(preset(backbone))
        theirs = converter(image.astype("float32"))
    except TypeError as error:
        # keras-hub before 0.30 makes no converter without tensorflow-text, which Colab's TPU
        # lacks (its notebook installs keras-hub alone): the scaling the converter saved, then.
        if "tensorflow-text" not in str(error):
            raise
        with open(f"{preset(backbone)}/image_converter.json") as file:
            saved = json.load(file)["config"]
        theirs = image * np.array(saved["scale"]) + np.array(saved["offset"])
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6, atol=1e-6)
    assert float(np.min(ours)) < -1.5 and float(np.max(ours)) > 2.0  # ImageNet's mean and std


def test_the_weights_train_starts_from_are_the_presets(preset):
    folder = preset("resnet-vd-50")
    cfg = Config(backbone="resnet-vd-50", weights=folder, image_size=32, num_classes=3)
    saved = keras_hub.models.Backbone.from_preset(folder).get_weights()
    weights = built(cfg).get_layer(index=3).get_weights()  # image, crop, scaling, backbone
    assert all(np.array_equal(a, b) for a, b in zip(weights, saved, strict=True))
    fresh = backbones.load(cfg, with_weights=False).model.get_weights()  # architecture only
    assert not all(np.array_equal(a, b) for a, b in zip(fresh, saved, strict=True))


def test_preflight_loads_the_backbone_once_and_train_builds_on_it(demo_cfg, preset, monkeypatch):
    folder = preset("efficientnet-b0")
    # No validation: what is counted is the backbone's loads, before any step.
    cfg = dataclasses.replace(demo_cfg, backbone="efficientnet-b0", weights=folder, valid_files="")
    loads = []
    original = keras_hub.models.Backbone.from_preset

    def counted(*args, **kwargs):
        loads.append(kwargs.get("load_weights", True))
        return original(*args, **kwargs)

    monkeypatch.setattr(keras_hub.models.Backbone, "from_preset", counted)
    from {{ cookiecutter.package }}.runtime.stages.train import train

    train(cfg)
    assert loads == [True]  # preflight's check; the model is built on what it loaded
    checked = preflight.check(start(cfg), "doctor", training=training_checks.CHECKS)
    assert f"weights: efficientnet-b0, ImageNet weights of {cfg.weights}" in checked.weights.line


def test_weights_that_cannot_work_are_refused_with_the_fix(tmp_path):
    with pytest.raises(
        UserError, match="has no ImageNet weights; set Config.weights / --weights none"
    ):
        backbones.load(Config(backbone="small-cnn", weights="imagenet"))
    # Left at auto, a backbone without ImageNet weights trains from scratch: no flag to add.
    scratch = backbones.load(Config(backbone="small-cnn", image_size=32))
    assert scratch.source == "trained from scratch"
    (tmp_path / "model.weights.h5").write_bytes(b"")  # a folder without config.json
    with pytest.raises(UserError, match="is neither imagenet, none, nor a keras-hub preset folder"):
        backbones.load(Config(backbone="resnet-vd-50", weights=str(tmp_path)))
    (tmp_path / "config.json").write_text(json.dumps({"class_name": "NoSuchBackbone"}))
    with pytest.raises(UserError, match="could not load the keras-hub preset .* for Config.back"):
        backbones.load(Config(backbone="resnet-vd-50", weights=str(tmp_path)))


def test_a_vision_transformer_refuses_an_image_size_its_patches_do_not_divide():
    wanted = "must be a multiple of 14 for Config.backbone / --backbone dinov2-small .its patch"
    with pytest.raises(UserError, match=wanted + " size., such as 504 or 518"):
        Config(backbone="dinov2-small", image_size=512)


def test_a_local_weights_file_is_loaded_into_the_small_cnn(tmp_path):
    """A file a small-cnn run saved, attached offline, is what the backbone starts from."""
    cfg = Config(backbone="small-cnn", weights="none", image_size=32, num_classes=3)
    saved = built(cfg).get_layer("small_cnn")
    saved.save_weights(tmp_path / "small_cnn.weights.h5")
    loaded = built(dataclasses.replace(cfg, weights=str(tmp_path / "small_cnn.weights.h5")))
    fresh = built(cfg)
    kernel = [net.get_layer("small_cnn").weights[0].numpy() for net in (loaded, fresh)]
    assert np.array_equal(kernel[0], saved.weights[0].numpy())
    assert not np.array_equal(kernel[1], saved.weights[0].numpy())


def test_learning_rate_warms_up_to_a_peak_scaled_by_replicas_then_decays():
    cfg = Config(learning_rate=1e-3, epochs=10, warmup_epochs=2)
    schedule = recipe.learning_rate_schedule(cfg, replicas=8, steps_per_epoch=100)
    rate = [float(schedule(step)) for step in (0, 100, 200, 600, 1000)]
    assert rate[0] == pytest.approx(8e-4)
    assert rate[0] < rate[1] < rate[2] == pytest.approx(8e-3)
    assert rate[2] > rate[3] > rate[4] == pytest.approx(8e-5)
    flat = recipe.learning_rate_schedule(dataclasses.replace(cfg, warmup_epochs=0), 1, 100)
    assert float(flat(0)) == pytest.approx(1e-3)


@pytest.mark.parametrize(
    ("backbone", "size", "said"),
    [
        (
            "swin-tiny",
            192,
            "a multiple of 32 from 224 for Config.backbone / --backbone swin-tiny .its windows of 7 tokens at its last stage., such as 224 or 256",
        ),
        (
            "siglip-base",
            256,
            "224 for Config.backbone / --backbone siglip-base .its position embeddings were learned for it., such as 224",
        ),
    ],
)
def test_swin_and_siglip_refuse_the_sizes_they_cannot_take(backbone, size, said):
    with pytest.raises(UserError, match=f"--image-size = {size}: must be " + said):
        Config(backbone=backbone, image_size=size)
