"""A plain Keras training of the project's small CNN, as a textbook would write it: the
images as arrays, Adam at a constant learning rate, no augmentation, `fit` for the same
epochs; then the held-out test set scored with the same metric. The recipe's baseline.

    python benchmarks/plain_keras.py DATA_DIR --folds-csv OUTPUT/folds.csv --epochs 20 --seed 0

Trains on the same images as the project's run whose folds.csv is given (fold 0 validates).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import keras
import numpy as np
import pandas as pd
from keras import layers
from PIL import Image
from sklearn.metrics import accuracy_score


def read(folder: Path, ids, size: int) -> np.ndarray:
    return np.stack(
        [
            np.asarray(
                Image.open(folder / f"{key}.png")
                .convert("RGB")
                .resize((size, size), Image.BILINEAR)
            )
            for key in ids
        ]
    )


def small_cnn(size: int, classes: int) -> keras.Model:
    """backbones.small_cnn and model.build_model's head, without the augmentation."""
    inputs = keras.Input((size, size, 3))
    x = layers.Rescaling(1 / 255)(inputs)
    for filters in (32, 64, 128):
        x = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
        x = layers.BatchNormalization(momentum=0.9)(x)
        x = layers.Activation("relu")(x)
        x = layers.MaxPooling2D()(x)
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dropout(0.2)(x)
    return keras.Model(inputs, layers.Dense(classes, activation="softmax")(x))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--folds-csv", type=Path, required=True)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    keras.utils.set_random_seed(args.seed)
    folds = pd.read_csv(args.folds_csv, dtype={"id": str})
    labels = pd.read_csv(args.data / "train.csv", dtype={"id": str})
    train = folds[folds["fold"] != 0].merge(labels, on="id")
    x = read(args.data / "train_images", train["id"], args.size)
    y = train["label"].to_numpy()
    solution = pd.read_csv(args.data / "solution.csv", dtype={"id": str})
    test = read(args.data / "test_images", solution["id"], args.size)
    model = small_cnn(args.size, int(y.max()) + 1)
    model.compile(
        keras.optimizers.Adam(args.learning_rate),
        "sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    model.fit(x, y, batch_size=args.batch_size, epochs=args.epochs, verbose=0)
    predicted = model.predict(test, verbose=0).argmax(1)
    print(f"plain keras test accuracy: {accuracy_score(solution['label'], predicted):.4f}")


if __name__ == "__main__":
    main()
