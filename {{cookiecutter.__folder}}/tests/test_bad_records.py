"""Bad records never cost a row: each is named with its shard before the model is built (or,
for an image that does not decode, the moment training meets it), and nothing is lost."""

import dataclasses
import io
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.stages.doctor import doctor
from {{ cookiecutter.package }}.runtime.stages.predict import predict
from {{ cookiecutter.package }}.runtime.stages.train import train
from {{ cookiecutter.package }}.tools.shards import feature

FIX = "write them again or leave them out of"


def examples(folder: Path) -> list[dict]:
    """The demo split's records as feature dicts (image bytes, class, id)."""
    found = []
    for path in sorted(folder.glob("*.tfrec")):
        for raw in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
            features = tf.train.Example.FromString(raw).features.feature
            found.append(
                {
                    name: value.bytes_list.value[0]
                    if value.bytes_list.value
                    else value.int64_list.value[0]
                    for name, value in features.items()
                }
            )
    return found


def serialized(example: dict) -> bytes:
    features = {name: feature(value) for name, value in example.items()}
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def write_split(
    folder: Path, parts: list[list[dict]], counts: list[int] | None = None
) -> list[Path]:
    """One shard per part, Kaggle-style named with its count (or the count given)."""
    folder.mkdir(parents=True)
    paths = []
    for index, part in enumerate(parts):
        count = counts[index] if counts else len(part)
        path = folder / f"{index:02d}-32x32-{count}.tfrec"
        with tf.io.TFRecordWriter(str(path)) as writer:
            for example in part:
                writer.write(serialized(example))
        paths.append(path)
    return paths


@pytest.fixture
def data(demo_dir, tmp_path):
    """Part of the demo data in four train shards of 64 records, one valid shard and two test
    shards, for a test to spoil; returns its folder."""
    folder = tmp_path / "data"
    train_rows = examples(demo_dir / "train")[:256]
    write_split(folder / "train", [train_rows[i::4] for i in range(4)])
    write_split(folder / "val", [examples(demo_dir / "val")[:64]])
    test_rows = examples(demo_dir / "test")
    write_split(folder / "test", [test_rows[0::2], test_rows[1::2]])
    (folder / "sample_submission.csv").write_bytes(
        (demo_dir / "sample_submission.csv").read_bytes()
    )
    return folder


@pytest.fixture
def cfg(demo_cfg, data):
    """One epoch of one pass over the training records in file order, so every record is met."""
    return dataclasses.replace(demo_cfg, data_dir=str(data), steps_per_epoch=8, shuffle_buffer=1)


def spoil(path: Path, change) -> None:
    """Rewrite a shard with `change` applied to its list of examples, keeping its name."""
    rows = change(examples_of(path))
    with tf.io.TFRecordWriter(str(path)) as writer:
        for example in rows:
            writer.write(serialized(example))


def examples_of(path: Path) -> list[dict]:
    folder = path.parent / "one"
    folder.mkdir(exist_ok=True)
    (folder / path.name).write_bytes(path.read_bytes())
    rows = examples(folder)
    (folder / path.name).unlink()
    folder.rmdir()
    return rows


def stops_train_before_the_model(cfg, *expected: str) -> str:
    """Train fails with every `expected` text (and the fix); call with the no_model fixture."""
    with pytest.raises(UserError) as caught:
        train(cfg)
    message = str(caught.value)
    for text in (*expected, FIX):
        assert text in message, message
    assert not Path(cfg.output_dir).exists()  # nothing written
    assert problems(cfg)  # and doctor, which said ready before, says so too
    return message


def problems(cfg, full_scan=False):
    return doctor(cfg, full_scan=full_scan)


def shard(data, split, index):
    return next((data / split).glob(f"{index:02d}-*.tfrec"))


def test_a_truncated_shard_is_named_before_training(cfg, data, no_model):
    third = shard(data, "train", 2)
    third.write_bytes(third.read_bytes()[: third.stat().st_size // 2])
    message = stops_train_before_the_model(cfg, f"{third}: is truncated or corrupt after record ")
    assert message.startswith(
        "1 of 4 shards of Config.train_files / --train-files have bad records:"
    )


def test_an_empty_shard_is_named(cfg, data, no_model):
    empty = data / "train" / "04-32x32-0.tfrec"
    empty.write_bytes(b"")
    stops_train_before_the_model(cfg, f"{empty}: holds no records")


def test_a_record_without_its_label_in_a_later_shard_is_named(cfg, data, no_model):
    last = shard(data, "train", 3)
    spoil(
        last, lambda rows: [*rows[:5], {"image": rows[5]["image"], "id": rows[5]["id"]}, *rows[6:]]
    )
    stops_train_before_the_model(
        cfg,
        f"{last}: 1 of 64 records have no 'class' feature (Config.label_key / --label-key) (first: record 5)",
    )


def test_a_label_out_of_range_in_any_shard_is_named(cfg, data, no_model):
    """Under JAX a label beyond the classes used to train silently."""
    last = shard(data, "train", 3)
    spoil(last, lambda rows: [*rows[:7], {**rows[7], "class": 10}, *rows[8:]])
    stops_train_before_the_model(
        cfg,
        f"{last}: 1 of 64 records have labels outside 0..9 (Config.num_classes / --num-classes) (first: record 7)",
    )


def test_a_shard_whose_name_promises_more_records_is_named(cfg, data, no_model):
    second = shard(data, "train", 1)
    second.rename(data / "train" / "01-32x32-300.tfrec")
    stops_train_before_the_model(
        cfg, "01-32x32-300.tfrec: has a name that promises 300 records, and holds 64"
    )


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            lambda row: {"image": row["image"]},
            "1 of 180 records have no 'id' feature (Config.id_key / --id-key) (first: record 3)",
        ),
        (
            lambda row: {**row, "id": b"\xff\xfe"},
            "1 of 180 records have ids that are not UTF-8 text (first: record 3)",
        ),
    ],
    ids=["no-id", "not-utf8"],
)
def test_a_test_record_without_a_usable_id_stops_predict_before_the_model(
    cfg, data, monkeypatch, change, expected
):
    """A submission must never lack an id silently."""
    from {{ cookiecutter.package }}.runtime.outputs import trained_run

    monkeypatch.setattr(trained_run, "load_trained", lambda *a: pytest.fail("the model was loaded"))
    second = shard(data, "test", 1)
    spoil(second, lambda rows: [*rows[:3], change(rows[3]), *rows[4:]])
    with pytest.raises(UserError) as caught:
        predict(cfg)
    assert f"{second}: {expected}" in str(caught.value)
    assert not (Path(cfg.output_dir) / "submission.csv").exists()


def test_test_records_missing_ids_of_the_sample_stop_predict_before_the_model(
    cfg, data, monkeypatch
):
    from {{ cookiecutter.package }}.runtime.outputs import trained_run

    monkeypatch.setattr(trained_run, "load_trained", lambda *a: pytest.fail("the model was loaded"))
    second = shard(data, "test", 1)
    dropped = examples_of(second)[:2]
    spoil(second, lambda rows: rows[2:])
    second.rename(data / "test" / "01-32x32-178.tfrec")
    with pytest.raises(UserError) as caught:
        predict(cfg)
    assert "2 sample ids have no test record (e.g. " in str(caught.value)
    assert all(row["id"].decode() in str(caught.value) for row in dropped)


def png(size: int, grey: bool = False) -> bytes:
    pixels = np.random.default_rng(0).integers(
        0, 255, (size, size) if grey else (size, size, 3), np.uint8
    )
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "PNG")
    return out.getvalue()


def test_png_grayscale_and_odd_sizes_in_jpeg_records_train_and_are_noted(cfg, data, capsys):
    """Prediction used to accept a PNG that training refused."""
    last = shard(data, "train", 3)
    spoil(
        last,
        lambda rows: [
            {**rows[0], "image": png(32)},
            {**rows[1], "image": png(48, grey=True)},
            *rows[2:],
        ],
    )
    assert problems(cfg, full_scan=True) == []
    out = capsys.readouterr().out
    assert f"note: {last}: 2 of 64 records are PNG or other non-JPEG images" in out
    assert f"note: {last}: 1 of 64 records are images of another size than 32x32 (resized)" in out
    history = train(cfg)  # every record, the PNGs among them
    assert np.isfinite(history["loss"][0])


def test_image_bytes_that_do_not_decode_stop_training_naming_the_shard(cfg, data):
    """The preflight reads labels, not images: doctor --scan finds it, and training stops at
    it with the shard named instead of a TensorFlow traceback."""
    last = shard(data, "train", 3)
    spoil(last, lambda rows: [*rows[:9], {**rows[9], "image": b"not an image"}, *rows[10:]])
    assert problems(cfg) == []  # the quick checks cannot see it
    listed = f"{last}: 1 of 64 records have image bytes that do not decode (first: record 9)"
    assert problems(cfg, full_scan=True) == [listed]
    with pytest.raises(UserError) as caught:
        train(cfg)
    assert str(caught.value).startswith(
        "training stopped at a bad record; the checkpoint of the last"
    )
    assert listed in str(caught.value)
    assert not (Path(cfg.output_dir) / "checkpoints" / "checkpoint.json").exists()


def test_bad_images_can_be_skipped_and_counted_at_each_epoch(cfg, data, capsys):
    last = shard(data, "train", 3)
    spoil(last, lambda rows: [*rows[:9], {**rows[9], "image": b"not an image"}, *rows[10:]])
    history = train(dataclasses.replace(cfg, bad_records="skip", epochs=2))
    out = capsys.readouterr().out
    assert (
        "bad records: 1 in 1 shards, left out of training\n"
        f"  {last}: 1 of 64 records have image bytes that do not decode (first: record 9)\n"
    ) in out
    assert out.count("bad records skipped: 1 in every pass (--bad-records skip)") == 2
    assert len(history["loss"]) == 2 and np.isfinite(history["loss"]).all()


def test_a_test_image_that_does_not_decode_stops_predict_naming_shard_and_id(cfg, data):
    """No submission with a row missing: predict names the shard and the id, and the
    submission written before stays as it was."""
    train(cfg)
    before = predict(cfg).read_bytes()
    second = shard(data, "test", 1)
    rows = examples_of(second)
    spoil(second, lambda rows: [*rows[:3], {**rows[3], "image": b"not an image"}, *rows[4:]])
    with pytest.raises(UserError) as caught:
        predict(cfg)
    message = str(caught.value)
    assert message.startswith("prediction stopped at a test record whose image does not decode")
    named = f"{second}: 1 of {len(rows)} records have image bytes that do not decode (first: "
    assert f"{named}record 3, id {rows[3]['id'].decode()})" in message
    assert (Path(cfg.output_dir) / "submission.csv").read_bytes() == before
