"""`records`: a competition's images and CSV become TFRecords the loader reads back whole."""

import collections
import csv
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from PIL import Image

from {{ cookiecutter.package }} import dataset, image_records, records
from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.config import Config, UserError
from {{ cookiecutter.package }}.predict import predict
from {{ cookiecutter.package }}.train import train

COLOURS = {"cat": (200, 30, 30), "dog": (30, 200, 30), "owl": (30, 30, 200)}


def competition(folder: Path, counts: dict[str, int], group_size: int = 0) -> Path:
    """Images of one colour per class (JPEG, PNG, grayscale and CMYK among them), train.csv
    with image_id, label (class names) and patient, and a test folder with a sample."""
    rng = np.random.default_rng(0)
    (folder / "train").mkdir(parents=True)
    (folder / "test").mkdir()
    rows = []
    labels = [name for name, count in counts.items() for _ in range(count)]
    for number, label in enumerate(labels):
        pixels = np.clip(np.add(COLOURS[label], rng.integers(-20, 20, (40, 48, 3))), 0, 255)
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
        [(f"t{n}", "cat") for n in range(6)],
    )
    return folder


def write_csv(path, header, rows):
    with open(path, "w", newline="") as file:
        csv.writer(file).writerows([header, *rows])


def read_csv(path):
    with open(path, newline="") as file:
        return list(csv.DictReader(file))


def write(folder: Path, *flags: str, cfg=None) -> dict:
    cfg = cfg or Config(id_column="image_id", folds=5)
    return image_records.write_records(
        cfg, str(folder / "train"), str(folder / "train.csv"), str(folder / "records"),
        *flags,
    )  # fmt: skip


def read_back(records_dir: Path, **fields) -> list[dict]:
    """Every training record as the loader parses it: id, class, fold."""
    spec = {
        "id": tf.io.FixedLenFeature([], tf.string),
        "class": tf.io.FixedLenFeature([], tf.int64),
        "fold": tf.io.FixedLenFeature([], tf.int64),
    }
    files = sorted(str(path) for path in (records_dir / "train").glob("*.tfrec"))
    parsed = tf.data.TFRecordDataset(files).map(lambda r: tf.io.parse_single_example(r, spec))
    return [
        {"id": row["id"].decode(), "class": int(row["class"]), "fold": int(row["fold"])}
        for row in parsed.as_numpy_iterator()
    ]


def test_images_and_a_csv_become_records_the_loader_reads_back_whole(tmp_path):
    folder = competition(tmp_path, {"cat": 12, "dog": 9, "owl": 6})
    manifest = write(folder)
    assert manifest["classes"] == ["cat", "dog", "owl"] and manifest["num_classes"] == 3
    cfg, found = records.with_manifest(
        dataclasses.replace(Config(), data_dir=str(folder / "records"), image_size=32)
    )
    assert found == manifest and cfg.num_classes == 3
    assert cfg.valid_files == "train/fold0-*.tfrec"  # fold 0 validates, the others train
    # Every id and label comes back through the loader, training and validation together.
    everything = dataclasses.replace(cfg, train_files="train/*.tfrec")
    files = records.find_checked(everything, "train_files", labeled=True)
    labels = [number for number in real_keys(dataset.for_inference(files, everything, 8, True))]
    ids = [key.decode() for key in real_keys(dataset.for_inference(files, everything, 8, False))]
    rows = read_csv(folder / "train.csv")
    assert sorted(ids) == sorted(row["image_id"] for row in rows)
    names = manifest["classes"]
    assert collections.Counter(names[n] for n in labels) == collections.Counter(
        row["label"] for row in rows
    )
    by_id = {row["id"]: names[row["class"]] for row in read_back(folder / "records")}
    assert by_id == {row["image_id"]: row["label"] for row in rows}  # each id with its label


def real_keys(batches):
    """The labels or ids of the real rows (weight 1) of inference batches."""
    for _, keys, weights in batches.as_numpy_iterator():
        yield from keys[weights > 0]


def test_folds_are_stratified_within_one_of_the_ideal(tmp_path):
    folder = competition(tmp_path, {"cat": 23, "dog": 14, "owl": 9})
    manifest = write(folder)
    back = read_back(folder / "records")
    for number, name in enumerate(["cat", "dog", "owl"]):
        ideal = sum(row["class"] == number for row in back) / 5
        for fold in range(5):
            held = sum(row["class"] == number and row["fold"] == fold for row in back)
            assert abs(held - ideal) < 1, (name, fold, held, ideal)
            assert manifest["train"]["per_fold"][str(fold)]["classes"].get(str(number), 0) == held
    for shard in manifest["train"]["shards"]:  # training picks folds by file
        assert Path(shard["file"]).name.startswith(f"fold{shard['fold']}-")
        assert {row["fold"] for row in read_back_file(folder / "records" / shard["file"])} == {
            shard["fold"]
        }


def read_back_file(path):
    spec = {"fold": tf.io.FixedLenFeature([], tf.int64)}
    return (
        tf.data.TFRecordDataset(str(path))
        .map(lambda r: tf.io.parse_single_example(r, spec))
        .as_numpy_iterator()
    )


def test_grouped_folds_never_split_a_group(tmp_path):
    folder = competition(tmp_path, {"cat": 20, "dog": 20, "owl": 20}, group_size=3)
    write(folder, "patient")
    group = {row["image_id"]: row["patient"] for row in read_csv(folder / "train.csv")}
    folds_of = collections.defaultdict(set)
    for row in read_back(folder / "records"):
        folds_of[group[row["id"]]].add(row["fold"])
    assert len(folds_of) == 20 and all(len(folds) == 1 for folds in folds_of.values())
    assert len({fold for folds in folds_of.values() for fold in folds}) == 5


def test_png_grayscale_cmyk_and_rotated_photos_come_out_rgb_and_upright(tmp_path):
    """The loader decodes JPEG as RGB and ignores EXIF: the writer must store them right."""
    from {{ cookiecutter.package }}.images import prepare

    left_red = np.zeros((40, 60, 3), np.uint8)
    left_red[:, :30] = (220, 20, 20)
    left_red[:, 30:] = (20, 20, 220)
    photo = Image.fromarray(left_red)
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 degrees clockwise to view": stored turned the other way
    photo.transpose(Image.Transpose.ROTATE_90).save(tmp_path / "rotated.jpg", exif=exif, quality=95)
    photo.save(tmp_path / "plain.png")
    photo.convert("CMYK").save(tmp_path / "cmyk.jpg", quality=95)
    photo.convert("L").save(tmp_path / "gray.jpg", quality=95)
    for name in ("rotated.jpg", "plain.png", "cmyk.jpg"):
        stored = prepare(str(tmp_path / name))
        pixels = tf.io.decode_jpeg(stored.jpeg, channels=3).numpy().astype(int)
        assert pixels.shape == (40, 60, 3), name
        assert np.abs(pixels[:, :25].mean((0, 1)) - (220, 20, 20)).max() < 25, name
        assert np.abs(pixels[:, 35:].mean((0, 1)) - (20, 20, 220)).max() < 25, name
    gray = prepare(str(tmp_path / "gray.jpg"))
    assert gray.jpeg == (tmp_path / "gray.jpg").read_bytes()  # JPEG passes through unchanged
    assert tf.io.decode_jpeg(gray.jpeg, channels=3).shape == (40, 60, 3)
    resized = prepare(str(tmp_path / "plain.png"), resize=32)
    assert tf.io.decode_jpeg(resized.jpeg).shape == (32, 32, 3)


def test_an_image_that_does_not_decode_is_listed_and_not_written(tmp_path, capsys):
    folder = competition(tmp_path, {"cat": 6, "dog": 6, "owl": 6})
    whole = (folder / "train" / "img000.jpg").read_bytes()
    (folder / "train" / "img000.jpg").write_bytes(whole[: len(whole) // 2])  # truncated
    (folder / "train" / "img004.jpg").write_text("not an image")
    (folder / "train" / "img008.jpg").unlink()  # in the CSV, not on disk
    flags = ["--images", str(folder / "train"), "--csv", str(folder / "train.csv")]
    flags += ["--output", str(folder / "records"), "--id-column", "image_id", "--folds", "3"]
    assert main(["records", *flags]) == 0
    assert "train 15 in 3 folds, test 0, skipped 3" in capsys.readouterr().out
    skipped = json.loads((folder / "records" / "manifest.json").read_text())["skipped"]
    reasons = {Path(entry["file"]).name: entry["reason"] for entry in skipped}
    assert reasons["img000.jpg"].startswith("does not decode (OSError: image file is truncated")
    assert reasons["img004.jpg"] == "not an image Pillow can read"
    assert reasons["img008"] == f"no image for this id in {folder / 'train.csv'}"
    assert {row["id"] for row in read_back(folder / "records")}.isdisjoint(
        {"img000", "img004", "img008"}
    )


def test_a_killed_writer_leaves_no_shard_that_looks_whole(tmp_path, monkeypatch):
    folder = competition(tmp_path, {"cat": 10, "dog": 10, "owl": 10})
    real, written = image_records.example, []

    def dies_in_the_third_fold(row, image):
        if len(written) == 14:
            raise KeyboardInterrupt
        written.append(row)
        return real(row, image)

    monkeypatch.setattr(image_records, "example", dies_in_the_third_fold)
    with pytest.raises(KeyboardInterrupt):
        write(folder)
    shards = sorted((folder / "records" / "train").glob("*.tfrec"))
    assert [shard.name for shard in shards] == ["fold0-00-6.tfrec", "fold1-00-6.tfrec"]
    for shard in shards:  # each whole: the count in its name is the count it holds
        assert sum(1 for _ in tf.data.TFRecordDataset(str(shard))) == 6
    assert not (folder / "records" / "manifest.json").exists()
    monkeypatch.setattr(image_records, "example", real)
    with pytest.raises(UserError, match="already holds records .*; give an empty folder"):
        write(folder)


def test_train_and_predict_on_the_records_need_no_file_flags_and_submit_class_names(tmp_path):
    folder = competition(tmp_path, {"cat": 16, "dog": 16, "owl": 16})
    cfg = Config(id_column="image_id", folds=3)
    image_records.write_records(
        cfg, str(folder / "train"), str(folder / "train.csv"), str(folder / "records"),
        test_images=str(folder / "test"),
    )  # fmt: skip
    run = Config(
        data_dir=str(folder / "records"), output_dir=str(tmp_path / "out"), image_size=32,
        backbone="small-cnn", weights="none", batch_size=8, epochs=1, steps_per_epoch=2,
        id_column="image_id", sample_submission=str(folder / "sample_submission.csv"),
    )  # fmt: skip
    train(run)
    submission = read_csv(predict(run))
    assert [row["image_id"] for row in submission] == [f"t{n}" for n in range(6)]
    assert {row["label"] for row in submission} <= {"cat", "dog", "owl"}
