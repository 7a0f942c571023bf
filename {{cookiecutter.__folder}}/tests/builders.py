"""What the tests build their inputs from: competitions laid out as Kaggle ships them (a
folder of images, train.csv, a sample submission), their images and CSV files, and the ids a
written CSV holds. One place, so every test's competition is made the same way."""

import csv
from pathlib import Path

import numpy as np
from PIL import Image

# Cassava's classes, each a colour an image is striped in; its labels are numbers too.
COLOURS = {"healthy": (40, 190, 40), "rust": (190, 90, 20), "scab": (90, 70, 60)}
NAMES = list(COLOURS)
COLOURS |= dict(zip("012", COLOURS.values(), strict=True))
# A competition of pets, one colour a class, as `mixed_competition` paints them.
PETS = {"cat": (200, 30, 30), "dog": (30, 200, 30), "owl": (30, 30, 200)}


def write_csv(path, header, rows):
    with open(path, "w", newline="") as file:
        csv.writer(file).writerows([header, *rows])


def ids(path, column: str = "id") -> list[str]:
    """A CSV file's ids, in its rows' order (`column`: the id column's name)."""
    with open(path, newline="") as file:
        return [row[column] for row in csv.DictReader(file)]


def image(path: Path, classes: list[str], rng) -> None:
    """A photo-sized JPEG striped in the colours of its classes."""
    pixels = np.zeros((40, 48, 3))
    for index, name in enumerate(classes):
        pixels[index :: len(classes)] = COLOURS[name]
    pixels = np.clip(pixels + rng.integers(-20, 20, pixels.shape), 0, 255)
    Image.fromarray(pixels.astype(np.uint8)).save(path, quality=95)


def competition(folder: Path, labels: list[str], header: list[str], sample: list[str]) -> Path:
    """train_images/ and train.csv (`header`: id and label columns; ids with .jpg as Cassava
    spells them), test_images/ and sample_submission.csv with `sample`'s columns."""
    rng = np.random.default_rng(0)
    for folder_name in ("train_images", "test_images"):
        (folder / folder_name).mkdir(parents=True)
    rows = []
    for number, label in enumerate(labels):
        name = f"{1000 + number * 7}.jpg"
        image(folder / "train_images" / name, label.split(), rng)
        rows.append((name, label))
    write_csv(folder / "train.csv", header, rows)
    tests = [f"{5000 + n * 3}.jpg" for n in range(9)]
    for number, name in enumerate(tests):
        image(folder / "test_images" / name, [NAMES[number % 3]], rng)  # by name
    order = sorted(tests, key=lambda name: -int(name[:4]))  # not sorted by id: order bugs show
    placeholder = {"labels": ["healthy"], "probabilities": ["0.25"] * (len(sample) - 1)}
    values = placeholder["probabilities" if len(sample) > 2 else "labels"]
    write_csv(folder / "sample_submission.csv", sample, [(name, *values) for name in order])
    return folder


def mixed_competition(folder: Path, counts: dict[str, int], group_size: int = 0) -> Path:
    """Images of one colour per class (JPEG, PNG, grayscale and CMYK among them), train.csv
    with image_id, label (class names) and patient, and a test folder with a sample."""
    rng = np.random.default_rng(0)
    (folder / "train").mkdir(parents=True)
    (folder / "test").mkdir()
    rows = []
    labels = [name for name, count in counts.items() for _ in range(count)]
    for number, label in enumerate(labels):
        pixels = np.clip(np.add(PETS[label], rng.integers(-20, 20, (40, 48, 3))), 0, 255)
        image = Image.fromarray(pixels.astype(np.uint8))
        name = f"img{number:03d}"
        kind = number % 4
        if kind == 1:
            image.save(folder / "train" / f"{name}.png")
        elif kind == 2:
            image.convert("CMYK").save(folder / "train" / f"{name}.jpg", quality=95)
        else:
            image.save(folder / "train" / f"{name}.jpg", quality=95)
        group = f"patient{number // group_size}" if group_size else ""
        rows.append((name, label, group))
    write_csv(folder / "train.csv", ["image_id", "label", "patient"], rows)
    for number in range(6):
        Image.fromarray(np.full((40, 48, 3), 128, np.uint8)).save(
            folder / "test" / f"t{number}.jpg"
        )
    write_csv(
        folder / "sample_submission.csv",
        ["image_id", "label"],
        [(f"t{n}.jpg", "cat") for n in range(6)],
    )
    return folder
