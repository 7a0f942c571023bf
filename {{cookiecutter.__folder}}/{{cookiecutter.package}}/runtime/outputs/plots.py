"""The pictures a competitor checks before trusting a run, saved as PNG (matplotlib only).

Each function draws one picture from numbers it is given, saves it and returns its path;
`show` puts a saved picture into the notebook, or prints its path in a terminal. Figures are
made without pyplot, so nothing here needs a display or changes the notebook's backend.
Every PNG carries its visible text in a "Description" chunk, so tests and searches can read
what a picture says without OCR."""

from __future__ import annotations

import io
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator
from PIL import Image
from PIL.PngImagePlugin import PngInfo
from sklearn.metrics import confusion_matrix

from ..platform.files import written_whole

Names = Sequence[str] | None  # the class names, in class order (None: numbers)


def save(figure: Figure, path: Path) -> Path:
    """Write `figure` as a PNG whose "Description" holds the text it shows. Its text is read
    once savefig has drawn it (drawing it again only to read it took a quarter of the time)
    and added to the PNG savefig made, its own chunks kept."""
    png = io.BytesIO()
    figure.savefig(png, format="png", dpi=100, bbox_inches="tight")
    with Image.open(png) as image, written_whole(path) as temporary:
        info = PngInfo()
        for key, value in image.text.items():  # matplotlib's "Software"
            info.add_text(key, value)
        info.add_text("Description", visible_text(figure))
        image.save(temporary, format="PNG", pnginfo=info)
    return path


def visible_text(figure: Figure) -> str:
    """The figure's titles, its shown axes' labels and tick labels and legend entries, each
    once, in reading order, joined by " | ". Numbers written inside a plot (a confusion
    matrix's counts) are left out: hundreds of them would bury the words a reader looks for.
    Read from a drawn figure: its tick labels are chosen when it is drawn."""
    texts = [figure.get_suptitle()]
    for axes in figure.axes:
        texts += [axes.get_title(where) for where in ("left", "center", "right")]
        for axis in (axes.xaxis, axes.yaxis) if axes.axison else ():
            if axis.get_visible():
                texts += [axis.label.get_text(), *tick_labels(axis), axis.offsetText.get_text()]
        if axes.get_legend() is not None:
            texts += [text.get_text() for text in axes.get_legend().get_texts()]
    # One line each, and matplotlib's minus sign as "-": plain text to search, and PNG's tEXt
    # chunk takes Latin-1 only (PIL writes an iTXt chunk for names beyond it).
    unique = dict.fromkeys(" ".join(text.replace("\u2212", "-").split()) for text in texts)
    return " | ".join(text for text in unique if text)


def tick_labels(axis: Axis) -> list[str]:
    """The tick labels drawn on `axis`: a locator may place ticks beyond the view, unshown."""
    low, high = sorted(axis.get_view_interval())
    margin = (high - low) * 1e-9  # a tick on the very edge is drawn
    located = zip(axis.get_majorticklocs(), axis.get_majorticklabels(), strict=False)
    return [
        label.get_text()
        for location, label in located
        if label.get_visible() and low - margin <= location <= high + margin
    ]


def show(path: Path | list[Path] | None) -> None:
    """Each picture into the notebook, or its path printed in a terminal; None: a picture that
    does not apply (a confusion matrix, multi-label)."""
    for one in [] if path is None else path if isinstance(path, list) else [path]:
        if "ipykernel" in sys.modules:
            from IPython.display import Image, display

            display(Image(filename=str(one)))
        else:
            print(f"picture: {one}")


def class_name(number: int, names: Names) -> str:
    """A class as a reader knows it: its name, else "class N" (also for a number past names)."""
    return names[number] if names is not None and 0 <= number < len(names) else f"class {number}"


def label_title(label: np.ndarray, names: Names, shares: bool = False) -> str:
    """One image's title: its class, or every class set in a multi-hot row, joined by ", ";
    with `shares`, a row of one image's classes (mixed by MixUp or CutMix) gives each class
    its share, largest first ("cat 0.70, dog 0.30")."""
    label = np.asarray(label)
    if shares and label.ndim:
        order = [n for n in np.argsort(-label, kind="stable") if label[n] >= 0.005]
        if len(order) == 1:
            return class_name(int(order[0]), names)
        return ", ".join(f"{class_name(int(n), names)} {label[n]:.2f}" for n in order)
    # A multi-hot row may hold floats; above one half reads as set, whatever the dtype.
    numbers = np.flatnonzero(label > 0.5) if label.ndim else [label]
    if len(numbers) == 0:
        return "no class"
    return ", ".join(class_name(int(number), names) for number in numbers)


def augmented_batch(
    images: np.ndarray, labels: np.ndarray, path: Path, names: Names = None, shares: bool = False,
    title: str = "An augmented training batch",
) -> Path:  # fmt: skip
    """A grid of training images as the model sees them (mixed, cropped, flipped), titled
    with their class names (`names[n]` for class n) or numbers. `labels` holds one class per
    image, or one multi-hot row per image: then the title lists every class set; with
    `shares`, rows of one image's classes, mixed: then each class with its share."""
    figure, cells = image_grid(images, 2.4)
    for axes, label in zip(cells, labels, strict=True):
        # Long names, or several of them, would run into the next image's title.
        axes.set_title(textwrap.fill(label_title(label, names, shares), 24), fontsize=10)
    figure.suptitle(title)
    return save(figure, path)


def predictions(
    images: np.ndarray, labels: np.ndarray, predicted: np.ndarray, path: Path, names: Names = None
) -> Path:
    """Validation images titled with the class predicted and, where it is wrong, the true
    one in red: where the model errs, at a glance."""
    figure, cells = image_grid(images, 2.4)
    for axes, label, guess in zip(cells, labels, predicted, strict=True):
        right = int(guess) == int(label)
        title = class_name(int(guess), names)
        title += "" if right else f" (true: {class_name(int(label), names)})"
        axes.set_title(textwrap.fill(title, 24), fontsize=10, color="black" if right else "red")
    wrong = int(np.sum(np.asarray(predicted) != np.asarray(labels)))
    figure.suptitle(f"Validation images, predicted ({wrong} of {len(images)} wrong, in red)")
    return save(figure, path)


def image_grid(images, row_height: float) -> tuple[Figure, list[Axes]]:
    """A figure of the images (as_pixels'), up to 8 a row, each in unframed axes of its own,
    row_height inches to a row."""
    images = as_pixels(images)
    columns = min(len(images), 8)
    rows = -(-len(images) // columns)
    # Constrained layout leaves room for titles that wrap onto a second line.
    figure = Figure(figsize=(2 * columns, row_height * rows), layout="constrained")
    cells = [figure.add_subplot(rows, columns, index + 1) for index in range(len(images))]
    for axes, image in zip(cells, images, strict=True):
        axes.imshow(image)
        axes.axis("off")
    return figure, cells


def as_pixels(images) -> np.ndarray:
    """Images in 0..255, of any dtype (a model's floats too), as the uint8 pixels shown."""
    return np.clip(np.round(np.asarray(images, np.float32)), 0, 255).astype(np.uint8)


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
    """Loss and accuracy (where it has one: not of values) per epoch, training and validation
    side by side."""
    figure = Figure(figsize=(11, 3.8), layout="constrained")
    shown = ["loss", "accuracy"] if "accuracy" in history else ["loss"]
    for index, name in enumerate(shown):
        axes = figure.add_subplot(1, len(shown), index + 1)
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


def confusion(
    truth: np.ndarray, predicted: np.ndarray, num_classes: int, path: Path, names: Names = None
) -> Path:
    """Validation counts of true class against predicted class; the diagonal is right. Up to
    30 classes, the ticks name each class (`names[n]` for class n) or number it."""
    matrix = confusion_matrix(truth, predicted, labels=np.arange(num_classes))
    size = min(4 + num_classes * 0.4, 16)
    figure = Figure(figsize=(size, size))
    axes = figure.add_subplot()
    shown = axes.imshow(matrix, cmap="Blues")
    figure.colorbar(shown, ax=axes, shrink=0.8)
    if num_classes <= 30:  # beyond that, numbers in cells are unreadable
        axes.set_xticks(range(num_classes))
        axes.set_yticks(range(num_classes))
        if names is not None:  # slanted along the bottom, so long names do not overlap
            labels = [class_name(number, names) for number in range(num_classes)]
            axes.set_xticklabels(labels, rotation=60, ha="right", rotation_mode="anchor")
            axes.set_yticklabels(labels)
        for (row, column), count in np.ndenumerate(matrix):
            if count:
                color = "white" if count > matrix.max() / 2 else "black"
                axes.text(column, row, count, ha="center", va="center", color=color, fontsize=8)
    accuracy = np.trace(matrix) / max(matrix.sum(), 1)
    title = f"Confusion matrix, validation ({matrix.sum()} images, accuracy {accuracy:.4f})"
    axes.set(xlabel="predicted class", ylabel="true class", title=title)
    return save(figure, path)
