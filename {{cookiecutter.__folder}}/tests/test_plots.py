"""The pictures say which classes they show, and carry that text where a test can read it."""

import numpy as np
import pytest
from PIL import Image

from {{ cookiecutter.package }}.runtime.outputs.plots import (
    augmented_batch,
    confusion,
    learning_rate,
    predictions,
)

pytestmark = pytest.mark.quick  # one unit alone: make test-quick runs it

NAMES = ["zero", "one", "two", "three", "four", "five", "six", "seven"]


def description(path):
    """The text a saved picture shows, as its PNG "Description" chunk holds it."""
    with Image.open(path) as image:
        return image.text["Description"]


def pixels(count):
    return np.random.default_rng(0).integers(0, 256, (count, 8, 8, 3), dtype=np.uint8)


def test_grid_titles_are_the_class_names_when_given(tmp_path):
    path = augmented_batch(pixels(3), np.array([7, 2, 7]), tmp_path / "batch.png", NAMES)
    shown = description(path).split(" | ")
    assert "seven" in shown and "two" in shown
    assert not any(text.startswith("class") for text in shown)


def test_grid_titles_number_the_classes_without_names(tmp_path):
    path = augmented_batch(pixels(2), np.array([7, 2]), tmp_path / "batch.png")
    shown = description(path).split(" | ")
    assert "class 7" in shown and "class 2" in shown


def test_a_multi_hot_title_lists_every_class_set(tmp_path):
    """Several labels per image: each title names them all, in class order."""
    labels = np.array([[0, 1, 0, 1, 0, 0, 0, 1], [0, 0, 1, 0, 0, 0, 0, 0]])
    named = description(augmented_batch(pixels(2), labels, tmp_path / "named.png", NAMES))
    assert "one, three, seven" in named.split(" | ")
    assert "two" in named.split(" | ")
    numbered = description(augmented_batch(pixels(2), labels, tmp_path / "numbered.png"))
    assert "class 1, class 3, class 7" in numbered.split(" | ")


def test_confusion_ticks_are_the_class_names(tmp_path):
    truth, predicted = np.array([0, 1, 2, 3, 3]), np.array([0, 1, 3, 3, 2])
    path = confusion(truth, predicted, 4, tmp_path / "confusion.png", NAMES[:4])
    shown = description(path).split(" | ")
    assert {"zero", "one", "two", "three", "predicted class", "true class"} <= set(shown)
    assert "0" not in shown  # names replace the numbers


def test_confusion_ticks_are_numbers_without_names(tmp_path):
    truth = predicted = np.array([0, 1, 2, 3])
    shown = description(confusion(truth, predicted, 4, tmp_path / "confusion.png")).split(" | ")
    assert {"0", "1", "2", "3"} <= set(shown)


def test_predictions_name_what_the_model_said_and_the_truth_where_it_erred(tmp_path):
    truth, predicted = np.array([0, 1, 2, 3]), np.array([0, 1, 3, 3])
    shown = description(predictions(pixels(4), truth, predicted, tmp_path / "p.png", NAMES))
    titles = shown.split(" | ")
    assert {"zero", "one", "three (true: two)", "three"} <= set(titles)
    assert "Validation images, predicted (1 of 4 wrong, in red)" in titles


def test_confusion_of_many_classes_names_no_ticks(tmp_path):
    """Beyond 30 classes the names could not be read, so none are written."""
    names = [f"flower {number}" for number in range(40)]
    truth = predicted = np.arange(40)
    path = confusion(truth, predicted, 40, tmp_path / "confusion.png", names)
    assert "flower" not in description(path)


def test_the_description_holds_title_axis_labels_and_ticks_once_each(tmp_path):
    """The scale's "1e-3" is written with a plain minus, so a search for it finds it."""
    epochs = np.linspace(0, 4, 50)
    path = learning_rate(epochs, np.linspace(1e-3, 1e-5, 50), tmp_path / "rate.png")
    shown = description(path).split(" | ")
    assert shown[0] == "Learning rate over the run"
    assert {"epoch", "learning rate", "0.0", "4.0", "1e-3"} <= set(shown)
    assert len(shown) == len(set(shown))


def test_the_description_is_the_same_each_time(tmp_path):
    labels, images = np.array([3, 1]), pixels(2)
    first = augmented_batch(images, labels, tmp_path / "first.png", NAMES)
    second = augmented_batch(images, labels, tmp_path / "second.png", NAMES)
    assert description(first) == description(second)
