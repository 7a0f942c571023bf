"""Writing TFRecord shards, the one way every writer here does it: a shard is written under a
.partial name and renamed when whole, to a Kaggle-style name ending in its record count
("fold0-00-1204.tfrec"), which records.count reads without opening the file. A killed run leaves no
shard that looks whole."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

import tensorflow as tf

from ..runtime.errors import UserError, first_line
from ..runtime.platform.files import is_url, place, upload


def feature(value) -> tf.train.Feature:
    """bytes and str as bytes_list, an int as int64_list, a list of ints (a multi-hot row)
    as one int64_list, a list of floats (values, shares) as one float_list."""
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))
    numbers = value if isinstance(value, list) else [value]
    if any(isinstance(number, float) for number in numbers):
        return tf.train.Feature(float_list=tf.train.FloatList(value=numbers))
    return tf.train.Feature(int64_list=tf.train.Int64List(value=[int(v) for v in numbers]))


def serialized(values: dict) -> bytes:
    """One record: feature name to bytes, str, int or list of ints."""
    features = {name: feature(value) for name, value in values.items()}
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def write_shard(folder: Path | str, stem: str, records: Iterable[bytes]) -> tuple[Path | None, int]:
    """Every record into <folder>/<stem>-<count>.tfrec; returns its path and count (None and 0,
    and nothing left behind, when there were none). A bucket's shard is written here first."""
    if is_url(folder):
        with tempfile.TemporaryDirectory(prefix="shard-") as scratch:
            path, count = write_shard(scratch, stem, records)
            if path:
                upload(path, str(place(folder) / path.name))
        return (place(folder) / path.name if path else None), count
    partial = Path(folder) / f"{stem}.partial"
    count = 0
    try:
        with tf.io.TFRecordWriter(str(partial)) as writer:
            for record in records:
                writer.write(record)
                count += 1
    except (tf.errors.OpError, OSError) as error:  # a full disk, above all
        partial.unlink(missing_ok=True)
        free = shutil.disk_usage(folder).free
        raise UserError(
            f"cannot write {partial} ({first_line(error)}; {free:,} bytes free there): free "
            "some space, or write elsewhere; the shards already whole are kept"
        ) from error
    except BaseException:  # Ctrl-C: the shard is written again by the next run
        partial.unlink(missing_ok=True)
        raise
    if not count:
        partial.unlink()
        return None, 0
    path = partial.with_name(f"{stem}-{count}.tfrec")
    os.replace(partial, path)
    return path, count


def write_shards(folder: str, examples: list[dict], shards: int, size: int) -> list[str]:
    """Examples held in memory (feature name to value), dealt round-robin into `shards`
    shards named as Kaggle's competitions name them: 00-<size>x<size>-<count>.tfrec."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    written = [
        write_shard(folder, f"{index:02d}-{size}x{size}", map(serialized, examples[index::shards]))
        for index in range(shards)
    ]
    return [str(path) for path, count in written if count]
