"""Random crops and flips inside the model (augment.py): the windows are drawn as the
host's tf.image.sample_distorted_bounding_box draws them, each is resized as tf.image.resize
resizes it, and only training sees them."""

import dataclasses

import keras
import numpy as np
import pytest
import tensorflow as tf

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.learning.augment import CropAndFlip, crop_windows, resize_matrix
from {{ cookiecutter.package }}.runtime.learning.backbones import load
from {{ cookiecutter.package }}.runtime.learning.model import build_model, model_augmentations
from {{ cookiecutter.package }}.runtime.learning.predictions import predict_probabilities
from {{ cookiecutter.package }}.runtime.stages.fitting import recipe_line

pytestmark = pytest.mark.quick  # one unit alone: make test-quick runs it


WINDOWS = 4000


def host_windows(crop_area, size=512):
    """(area, aspect ratio) of windows as a host pipeline with tf.image would crop."""
    found = []
    for seed in range(WINDOWS):
        _, box_size, _ = tf.image.stateless_sample_distorted_bounding_box(
            [size, size, 3], tf.zeros([1, 0, 4]), seed=[1, seed],
            area_range=(crop_area, 1.0), aspect_ratio_range=(3 / 4, 4 / 3),
            min_object_covered=0.0, use_image_if_no_bounding_boxes=True,
        )  # fmt: skip
        height, width = (int(value) / size for value in box_size[:2])
        found.append((height * width, width / height))
    return np.array(found)


def test_crop_windows_have_the_host_pipelines_area_and_aspect_statistics():
    host = host_windows(0.75)
    windows = crop_windows(WINDOWS, 0.75, keras.random.SeedGenerator(7))
    top, left, height, width = (np.asarray(value) for value in windows)
    ours = np.stack([height * width, width / height], axis=1)
    assert (top >= 0).all() and (left >= 0).all()
    assert (top + height <= 1 + 1e-6).all() and (left + width <= 1 + 1e-6).all()
    for column, name in enumerate(("area", "aspect ratio")):
        assert ours[:, column].mean() == pytest.approx(host[:, column].mean(), abs=0.01), name
        assert ours[:, column].std() == pytest.approx(host[:, column].std(), abs=0.01), name
    kept_whole = np.mean(ours[:, 0] > 0.999), np.mean(host[:, 0] > 0.999)
    assert kept_whole[0] == pytest.approx(kept_whole[1], abs=0.02)


def test_a_window_is_resized_as_tf_image_resize_resizes_its_crop():
    image = np.random.default_rng(0).uniform(0, 255, (1, 32, 32, 3)).astype("float32")
    top, left, height, width = 8, 4, 20, 24  # in pixels
    rows = resize_matrix(np.array([top / 32]), np.array([height / 32]), 32)
    columns = resize_matrix(np.array([left / 32]), np.array([width / 32]), 32)
    ours = np.einsum("boh,bhwc->bowc", rows, image)
    ours = np.einsum("bpw,bowc->bopc", columns, ours)
    crop = image[:, top : top + height, left : left + width]
    expected = tf.image.resize(crop, [32, 32], method="bilinear").numpy()
    np.testing.assert_allclose(ours, expected, atol=1e-3)


def test_only_training_crops_and_flips_validation_and_prediction_see_the_image():
    images = np.random.default_rng(1).integers(0, 256, (4, 32, 32, 3)).astype("uint8")
    layer = CropAndFlip(0.5, True, seed=3)
    np.testing.assert_array_equal(np.asarray(layer(images, training=False)), images)
    assert not np.allclose(np.asarray(layer(images, training=True)), images)
    whole_and_flipped = CropAndFlip(1.0, True, seed=3)(images, training=True)
    for seen, image in zip(np.asarray(whole_and_flipped), images, strict=True):
        assert np.allclose(seen, image) or np.allclose(seen, image[:, ::-1])  # exact flips

    cfg = Config(backbone="small-cnn", weights="none", image_size=32, crop_area=0.5)
    net = build_model(cfg, load(cfg))
    first, again = net(images, training=False), net(images, training=False)
    np.testing.assert_array_equal(np.asarray(first), np.asarray(again))  # no randomness


def test_crops_by_default_only_from_the_image_size_where_they_pay(capsys):
    """crop_area 0 (auto): none below 128 px, where crops cost accuracy on every set measured
    (docs/recipe.md), 0.75 from there; a number given is used as given."""
    small, large = (
        Config(backbone="small-cnn", weights="none", image_size=size) for size in (32, 128)
    )
    layers = [model_augmentations(cfg)[0] for cfg in (small, large)]
    assert [layer.crop_area for layer in layers] == [1.0, 0.75]
    given = Config(backbone="small-cnn", weights="none", image_size=32, crop_area=0.5)
    assert model_augmentations(given)[0].crop_area == 0.5
    assert recipe_line(small).startswith("crop_area auto: 1.0, no random crops at 32 px")
    assert recipe_line(large).splitlines()[0] == "crop_area auto: 0.75 (random crops at 128 px)"
    assert "crop_area" not in recipe_line(given)


def test_flips_by_default_only_from_the_image_size_of_photos():
    """flip "auto": from 128 px, photos, which every recipe the defaults follow flips; below,
    none, as measured (docs/recipe.md); True or False given is used as given, at any size.
    train prints what auto chose and why."""
    made = {
        (size, flip): model_augmentations(
            Config(backbone="small-cnn", weights="none", image_size=size, flip=flip)
        )[-1].flip
        for size in (32, 127, 128, 512)
        for flip in ("auto", True, False)
    }
    assert made == {
        **{(size, "auto"): size >= 128 for size in (32, 127, 128, 512)},
        **{(size, True): True for size in (32, 127, 128, 512)},
        **{(size, False): False for size in (32, 127, 128, 512)},
    }
    on, off = (Config(backbone="small-cnn", weights="none", image_size=s) for s in (512, 32))
    assert recipe_line(on).splitlines()[-1] == (
        "flip auto: on at 512 px (photos: the recipes it follows all flip them, "
        "docs/recipe.md; --no-flip turns it off)"
    )
    assert recipe_line(off).splitlines()[-1] == (
        "flip auto: off at 32 px (below 128 px, measured in docs/recipe.md; --flip flips)"
    )
    assert "flip" not in recipe_line(dataclasses.replace(on, flip=True, crop_area=0.75))
    with pytest.raises(UserError, match="Config.flip / --flip = 'yes': must be True, False or"):
        Config(flip="yes")


def orientations(image: np.ndarray) -> list[np.ndarray]:
    """The image's eight orientations: as it is and mirrored, each turned 0 to 3 quarter turns."""
    return [np.rot90(mirror, turn) for mirror in (image, image[:, ::-1]) for turn in range(4)]


def test_eight_view_tta_predicts_an_image_and_each_of_its_flips_and_turns_alike():
    """A model that tells the orientations apart (a dense layer on the pixels): with
    --tta eight it gives an image and its seven other orientations one prediction."""
    rng = np.random.default_rng(0)
    inputs = keras.Input((8, 8, 3))
    outputs = keras.layers.Dense(4, activation="softmax")(keras.layers.Flatten()(inputs))
    net = keras.Model(inputs, outputs)
    net.set_weights([rng.normal(size=(192, 4)).astype("float32"), np.zeros(4, "float32")])
    images = np.stack(orientations(rng.uniform(0, 1, (8, 8, 3)).astype("float32")))
    batches = tf.data.Dataset.from_tensor_slices(
        (images, np.arange(8).astype(str), np.ones(8, "float32"))
    ).batch(4)
    plain, _ = predict_probabilities(net, batches, "none")
    assert np.ptp(plain, axis=0).max() > 0.05  # the model alone is not invariant
    mirrored, _ = predict_probabilities(net, batches, "flip")
    np.testing.assert_allclose(mirrored[0], mirrored[4], atol=1e-6)  # an image and its mirror
    assert np.ptp(mirrored, axis=0).max() > 0.05  # but not its quarter turns
    eight, keys = predict_probabilities(net, batches, "eight")
    np.testing.assert_allclose(eight, np.repeat(eight[:1], 8, axis=0), atol=1e-6)
    assert keys[0].tolist() == [str(n).encode() for n in range(8)]


def test_training_with_turns_draws_each_of_the_eight_orientations():
    """Config.turns: each training image comes out in one of its eight orientations, and
    over a few batches all eight come out; without it, only the image and its mirror."""
    image = np.arange(4 * 4 * 1, dtype="float32").reshape(4, 4, 1)
    batch = np.repeat(image[None], 64, axis=0)
    every = [view.tobytes() for view in orientations(image)]
    for turns, expected in ((True, set(every)), (False, {every[0], every[4]})):
        layer = CropAndFlip(1.0, True, seed=3, turns=turns)
        drawn = np.asarray(layer(batch, training=True))
        assert {view.tobytes() for view in drawn} == expected
