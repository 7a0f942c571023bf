"""The pictures a competitor checks before trusting a run, saved as PNG (matplotlib only).

Each function draws one picture from numbers it is given, saves it and returns its path;
`show` puts a saved picture into the notebook, or prints its path in a terminal. Figures are
made without pyplot, so nothing here needs a display or changes the notebook's backend.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from sklearn.metrics import confusion_matrix

from .files import written_whole


def save(figure: Figure, path: Path) -> Path:
    with written_whole(path) as temporary:
        figure.savefig(temporary, dpi=100, bbox_inches="tight")
    return path


def show(path: Path) -> None:
    if "ipykernel" in sys.modules:  # a notebook: the picture itself
        from IPython.display import Image, display

        display(Image(filename=str(path)))
    else:
        print(f"picture: {path}")


def augmented_batch(images: np.ndarray, labels: np.ndarray, path: Path) -> Path:
    """A grid of training images as the model sees them (cropped, flipped), with their class."""
    columns = min(len(images), 8)
    rows = -(-len(images) // columns)
    figure = Figure(figsize=(2 * columns, 2.2 * rows))
    for index, (image, label) in enumerate(zip(images, labels, strict=True)):
        axes = figure.add_subplot(rows, columns, index + 1)
        axes.imshow(image)
        axes.set_title(f"class {label}", fontsize=10)
        axes.axis("off")
    figure.suptitle("An augmented training batch")
    return save(figure, path)


def learning_rate(epochs: np.ndarray, rates: np.ndarray, path: Path) -> Path:
    """The learning rate over the whole run, against epochs (fractions for steps within one)."""
    figure = Figure(figsize=(7, 3.5))
    axes = figure.add_subplot()
    axes.plot(epochs, rates)
    axes.set(xlabel="epoch", ylabel="learning rate", title="Learning rate over the run")
    axes.ticklabel_format(axis="y", style="sci", scilimits=(-2, 2))
    axes.grid(alpha=0.3)
    return save(figure, path)


def training_curves(history: dict, metric: str, path: Path) -> Path:
    """Loss and accuracy per epoch, training and validation side by side."""
    figure = Figure(figsize=(11, 3.8), layout="constrained")
    for index, name in enumerate(("loss", "accuracy")):
        axes = figure.add_subplot(1, 2, index + 1)
        for key, label in ((name, "training"), (f"val_{name}", "validation")):
            if history.get(key):
                epochs = np.arange(1, len(history[key]) + 1)
                axes.plot(epochs, history[key], marker="o", label=label)
        axes.set(xlabel="epoch", title=name)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.grid(alpha=0.3)
        axes.legend()
    final = history.get(f"final_valid_{metric}")
    figure.suptitle(
        f"Training curves (final validation {metric}: {final:.4f})" if final else "Training curves"
    )
    return save(figure, path)


def confusion(truth: np.ndarray, predicted: np.ndarray, num_classes: int, path: Path) -> Path:
    """Validation counts of true class against predicted class; the diagonal is right."""
    matrix = confusion_matrix(truth, predicted, labels=np.arange(num_classes))
    size = min(4 + num_classes * 0.4, 16)
    figure = Figure(figsize=(size, size))
    axes = figure.add_subplot()
    shown = axes.imshow(matrix, cmap="Blues")
    figure.colorbar(shown, ax=axes, shrink=0.8)
    if num_classes <= 30:  # beyond that, numbers in cells are unreadable
        axes.set_xticks(range(num_classes))
        axes.set_yticks(range(num_classes))
        for (row, column), count in np.ndenumerate(matrix):
            if count:
                color = "white" if count > matrix.max() / 2 else "black"
                axes.text(column, row, count, ha="center", va="center", color=color, fontsize=8)
    accuracy = np.trace(matrix) / max(matrix.sum(), 1)
    axes.set(
        xlabel="predicted class",
        ylabel="true class",
        title=f"Confusion matrix, validation ({matrix.sum()} images, accuracy {accuracy:.4f})",
    )
    return save(figure, path)
