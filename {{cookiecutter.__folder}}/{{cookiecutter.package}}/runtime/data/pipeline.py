"""tf.data pipelines from TFRecords to batches the model can eat.

Images leave the pipeline as uint8 (a quarter of float32's bytes; the model casts them),
or as bfloat16 in 0..255 for TPUs under TensorFlow, which take no uint8. Every batch has a
fully static shape, as XLA and TPUs require: inference pads its last batch with weight-0 rows.
The same pipeline feeds Keras on TensorFlow and on JAX. The host only reads and decodes:
random crops and flips happen in the model, on the accelerator (augment.py).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from ..config import Config, UserError, named
from . import records, steps, tfds_sets

AUTO = tf.data.AUTOTUNE


def for_training(
    files: list[str],
    cfg: Config,
    global_batch: int,
    image_dtype: str = "uint8",
    skipped: frozenset[str] = frozenset(),
) -> tf.data.Dataset:
    """Endless shuffled (image, label) batches, each pass over the records serving every one
    once; order does not matter, so none is kept.

    With several processes (Config.num_processes), each reads only its share and batches
    its part of the global batch: its own files when they divide evenly among the processes,
    else every N-th record (counted over all the files), so the processes never read the
    same record and together see each one once a pass. `skipped` names records to leave out
    as "<file>#<record number>" (scan.skipped).
    """
    processes, process = cfg.num_processes, cfg.process_id
    batch = global_batch // processes
    options = tf.data.Options()
    options.deterministic = False
    # Shuffle, then repeat: fused, TensorFlow fills the shuffle buffer from the next pass, so
    # a record could come twice in one pass and another not at all.
    options.experimental_optimization.shuffle_and_repeat_fusion = False
    if tfds_sets.name_of(cfg):  # `files` holds the TFDS split
        examples = tfds_sets.examples(cfg, files[0], shuffled=True, share=(process, processes))
        examples = examples.with_options(options).shuffle(cfg.shuffle_buffer, seed=cfg.seed)
        return decoded_batches(examples.repeat(), cfg, batch, image_dtype)
    by_file = len(files) % processes == 0
    own = files[process::processes] if by_file else files
    names = tf.data.Dataset.from_tensor_slices(own).shuffle(len(own), seed=cfg.seed)
    if skipped or not by_file:  # number each file's records, and keep only the wanted ones
        keep = wanted_records(files, cfg, skipped, every_nth=not by_file)

        def numbered(path):
            read = tf.data.TFRecordDataset(path).enumerate()
            return read.filter(lambda n, record: keep(path, n)).map(lambda n, record: record)

        serialized = names.interleave(numbered, num_parallel_calls=AUTO, deterministic=False)
    else:
        serialized = names.interleave(
            tf.data.TFRecordDataset, num_parallel_calls=AUTO, deterministic=False
        )
    # Shuffled within a pass, then repeated: each pass serves every record once.
    examples = serialized.with_options(options).shuffle(cfg.shuffle_buffer, seed=cfg.seed)
    examples = examples.repeat().map(steps.parse(cfg, labeled=True), num_parallel_calls=AUTO)
    return decoded_batches(examples, cfg, batch, image_dtype)


def wanted_records(files: list[str], cfg: Config, skipped: frozenset[str], every_nth: bool):
    """Whether this process trains on record n of a file: not a skipped one, and with
    `every_nth`, only every num_processes-th record, numbered over all the files in order."""
    processes, process = cfg.num_processes, cfg.process_id
    if every_nth:  # each file's first record's number over all the files
        starts = np.cumsum([0] + [records.count([path]) for path in files[:-1]])
        first = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(files, starts), -1)
    leave_out = (
        tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(sorted(skipped), [True] * len(skipped)), False
        )
        if skipped
        else None
    )

    def keep(path, n):
        wanted = tf.constant(True)
        if every_nth:
            wanted = (first.lookup(path) + n) % processes == process
        if leave_out is not None:
            key = path + "#" + tf.strings.as_string(n)
            wanted = tf.logical_and(wanted, tf.logical_not(leave_out.lookup(key)))
        return wanted

    return keep


def decoded_batches(examples: tf.data.Dataset, cfg: Config, batch: int, image_dtype):
    """(image, label) batches of examples (feature name to value), decoded at full size; the
    model crops and flips them (augment.py), so the host does the least it can."""
    batches = examples.map(
        lambda ex: (
            tf.cast(steps.image(ex[cfg.image_key], cfg), image_dtype),
            steps.as_label(cfg, ex[cfg.label_key]),
        ),
        num_parallel_calls=AUTO,
    )
    return batches.batch(batch, drop_remainder=True).prefetch(AUTO)


def for_inference(
    files: list[str],
    cfg: Config,
    global_batch: int,
    labeled: bool,
    image_dtype: str = "uint8",
    with_ids: bool = False,
) -> tf.data.Dataset:
    """Every record once, as (image, label or id, weight) batches in one fixed order; with
    `with_ids`, labeled batches carry the ids too: (image, label, weight, id).

    Ids travel with their images, so a prediction can never land on another image's row;
    they stay on the host (predict feeds only images to the device). The last batch is
    filled up with blank rows of weight 0, so every batch has the same static shape and
    splits evenly over the replicas; Keras weighs them out of validation, and predictions
    drop them. The known record count fails loudly if a shard is short.
    """
    key = cfg.label_key if labeled else cfg.id_key
    ids = labeled and with_ids
    if tfds_sets.name_of(cfg):  # `files` holds the TFDS split, whose size the set knows
        examples = tfds_sets.examples(cfg, files[0])
        count = tfds_sets.size(examples)
    else:
        count = records.count(files)
        serialized = tf.data.TFRecordDataset(files, num_parallel_reads=min(len(files), 16))
        serialized = serialized.apply(tf.data.experimental.assert_cardinality(count))
        examples = serialized.map(steps.parse(cfg, labeled, ids), num_parallel_calls=AUTO)
    rows = examples.map(
        lambda ex: (
            (
                tf.cast(
                    steps.image(ex[cfg.image_key], cfg),
                    image_dtype,
                ),
                steps.as_label(cfg, ex[key]) if labeled else ex[key],
                tf.constant(1.0),
            )
            + ((ex[cfg.id_key],) if ids else ())
        ),
        num_parallel_calls=AUTO,
    )
    blank = (
        tf.zeros([cfg.image_size, cfg.image_size, 3], image_dtype),
        steps.as_label(cfg, tf.zeros(steps.label_shape(cfg), tf.int64))
        if labeled
        else tf.constant(b""),
        tf.constant(0.0),
    ) + ((tf.constant(b""),) if ids else ())
    padding = tf.data.Dataset.from_tensors(blank).repeat(-count % global_batch)
    return rows.concatenate(padding).batch(global_batch, drop_remainder=True).prefetch(AUTO)


def describe_spec(spec) -> str:
    names = ("image", "label", "weight")
    return ", ".join(
        f"{name} {part.dtype.name} {tuple(part.shape)}"
        for name, part in zip(names, tf.nest.flatten(spec), strict=False)
    )


def check_static(batches: tf.data.Dataset, field: str) -> None:
    """XLA compiles one program per shape, and TPUs need them known: refuse unknown dimensions."""
    spec = batches.element_spec
    if not all(part.shape.is_fully_defined() for part in tf.nest.flatten(spec)):
        raise UserError(
            f"batches from {named(field)} have an unknown dimension ({describe_spec(spec)}); "
            f"XLA and TPUs need static shapes: resize every image to {named('image_size')} "
            "and drop the remainder"
        )
