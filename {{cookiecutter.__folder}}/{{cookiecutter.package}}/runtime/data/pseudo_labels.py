"""Pseudo-labels: test images trained on with soft labels, the class probabilities trained
models gave them (`pseudo` writes them from a run's or a blend's predictions;
Config.pseudo_labels reads them), each weighed Config.pseudo_weight in the loss.

A fold's run takes the rows of its own fold (the file's fold column): the probabilities of the fold
model that never trained on that fold's images. Pseudo-labels made by every fold model together
would carry what the other models learned from the validating fold's labels into its training, and
the out-of-fold score would flatter the run. A file without a fold column is taken whole by every
fold, and the run says so. Test images never validate: the validation records stay as they are.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import tensorflow as tf

from ..config import Config, targets, validating_fold
from ..errors import UserError, first_line, named
from ..platform.paths import Places
from .tables import read_csv, spellings

WEIGHT = "pseudo_weight"  # the feature holding an example's weight in the loss


@dataclasses.dataclass(frozen=True)
class PseudoLabels:
    """The test images a run trains on: their ids, soft labels (a row of class probabilities
    each), the files of the test split that hold them, and the training images beside them."""

    ids: list[str]
    rows: np.ndarray
    weight: float
    files: list[str]
    alongside: int  # training images a pass
    weight_feature = WEIGHT  # what mixed_in's examples hold their weight in (not a field)

    def __bool__(self) -> bool:
        return bool(self.ids)

    def mixed_in(
        self, training: tf.data.Dataset, cfg: Config, reading, test_reading
    ) -> tf.data.Dataset:
        """Endless examples of the training set (`training`: endless, read by `reading`) and
        of these test images (read by `test_reading`), drawn in proportion to their counts;
        each as {image: encoded bytes, label: a row of class shares, WEIGHT}, and its id
        where the training examples carry theirs (for a table of metadata)."""
        keys, numbers = tf.constant(self.ids), tf.range(len(self.ids), dtype=tf.int64)
        index = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, numbers), -1)
        rows = tf.constant(self.rows, tf.float32)
        with_ids = cfg.id_key in training.element_spec

        def example(ex, read_by, label, weight: float) -> dict:
            # Ids go on where the training examples carry them: a table of metadata joins by id.
            kept = {cfg.id_key: ex[cfg.id_key]} if with_ids else {}
            image = read_by.encoded(ex[cfg.image_key])
            weighed = {WEIGHT: tf.constant(weight, tf.float32), **kept}
            return {cfg.image_key: image, cfg.label_key: label, **weighed}

        tests, _ = test_reading.in_order(self.files, False)
        tests = tests.shard(cfg.num_processes, cfg.process_id)
        tests = tests.filter(lambda ex: index.lookup(ex[cfg.id_key]) >= 0)

        def soft(ex):
            label = tf.gather(rows, index.lookup(ex[cfg.id_key]))
            return example(ex, test_reading, label, self.weight)

        tests = tests.map(soft, num_parallel_calls=tf.data.AUTOTUNE)
        tests = tests.shuffle(min(len(self.ids), cfg.shuffle_buffer), seed=cfg.seed).repeat()

        def as_row(ex):
            row = cfg.multi_label or targets(cfg) == "shares"  # a row already
            label = ex[cfg.label_key]
            label = tf.cast(label, tf.float32) if row else tf.one_hot(label, cfg.num_classes)
            return example(ex, reading, label, 1.0)

        training = training.map(as_row, num_parallel_calls=tf.data.AUTOTUNE)
        counts = (self.alongside, len(self.ids))
        return tf.data.Dataset.sample_from_datasets(
            [training, tests], weights=[count / sum(counts) for count in counts], seed=cfg.seed
        )


def read(
    cfg: Config, places: Places, test_ids: list[str], test_files: list[str], alongside: int
) -> tuple[PseudoLabels, str]:
    """This fold's rows of Config.pseudo_labels, checked against the test split's ids and
    the run's classes, to train on beside `alongside` training images a pass; and the line
    that says what the run trains on."""
    path = places.file("pseudo_labels")
    flag = f"{named('pseudo_labels')} {path}"
    try:
        table = read_csv(path, flag)
    except (OSError, ValueError) as error:
        raise UserError(
            f"{flag}: cannot be read as a CSV ({first_line(error)}); give the file `pseudo` "
            "wrote (pseudo_labels.csv)"
        ) from None
    by_fold = "fold" in table.columns
    columns = [name for name in table.columns[1:] if name != "fold"]
    if len(columns) != cfg.num_classes:
        raise UserError(
            f"{flag}: {len(columns)} columns of probabilities beside the ids, and the run has "
            f"{named('num_classes')} {cfg.num_classes}; give pseudo-labels of this competition"
        )
    try:
        values = table[columns].astype(float).to_numpy()
    except ValueError as error:
        raise UserError(f"{flag}: {first_line(error)}; the probabilities must be numbers") from None
    if not np.isfinite(values).all() or (values < 0).any() or (values > 1).any():
        raise UserError(f"{flag}: a probability outside 0 to 1; give the file `pseudo` wrote")
    # As the sample spells them (predict's test_probabilities.csv): with or without the
    # image's extension or folders; each becomes the test image's own id.
    spelled = {spelling: key for key in test_ids for spelling in spellings(key)}
    ids = table[table.columns[0]].map(lambda key: spelled.get(key, ""))
    unknown = sorted(table[table.columns[0]][ids == ""])
    if unknown:
        raise UserError(
            f"{flag}: {len(unknown)} ids are no test image's (e.g. {unknown[0]!r}); pseudo-label "
            "the test set this run reads (its test_files or test_images)"
        )
    fold = str(validating_fold(cfg))
    mine = (table["fold"] == fold).to_numpy() if by_fold else np.ones(len(table), bool)
    repeated = ids[mine][ids[mine].duplicated()].tolist()
    if repeated:
        raise UserError(f"{flag}: id {repeated[0]!r} is named twice for fold {fold}")
    rows = values[mine]
    if not cfg.multi_label:  # shares of one class each: a row sums to 1
        rows = rows / np.maximum(rows.sum(1, keepdims=True), 1e-12)
    made = PseudoLabels(
        ids[mine].tolist(), rows.astype(np.float32), cfg.pseudo_weight, test_files, alongside
    )
    whose = (
        f"fold {fold}'s model's"
        if by_fold
        else "every row, the same in every fold (no fold column: the out-of-fold score may "
        "flatter the run)"
    )
    line = (
        f"pseudo-labels: {len(made.ids)} test images added to training, each weighing "
        f"{cfg.pseudo_weight} ({path}: {whose})"
    )
    return made, line
