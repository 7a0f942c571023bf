"""`records`: a competition's images and CSV become TFRecords the loader reads back whole."""

import collections
import csv
import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from builders import mixed_competition, write_csv
from conftest import start
from PIL import Image

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.data import competition_files, pipeline, records, scan
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.platform.run_lock import one_run_at_a_time
from {{ cookiecutter.package }}.runtime.stages.predict import predict
from {{ cookiecutter.package }}.runtime.stages.run import start as start_run
from {{ cookiecutter.package }}.runtime.stages.train import train
from {{ cookiecutter.package }}.tools import images_to_records, shards


def read_csv(path):
    with open(path, newline="") as file:
        return list(csv.DictReader(file))


def write(folder: Path, *flags: str, cfg=None) -> dict:
    cfg = cfg or Config(id_column="image_id", folds=5)
    return images_to_records.write_records(
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
    folder = mixed_competition(tmp_path, {"cat": 12, "dog": 9, "owl": 6})
    manifest = write(folder)
    assert manifest["classes"] == ["cat", "dog", "owl"] and manifest["num_classes"] == 3
    assert manifest["multi_label"] is False
    run = start_run(Config(data_dir=str(folder / "records"), image_size=32), on_accelerator=False)
    assert run.data.manifest == manifest and run.cfg.num_classes == 3
    assert run.sources["num_classes"] == "manifest"
    assert run.cfg.valid_files == "train/fold0-*.tfrec"  # fold 0 validates, the others train
    # Every id and label comes back through the loader, training and validation together.
    everything = start_run(
        dataclasses.replace(run.cfg, train_files="train/*.tfrec"),
        {**run.sources, "train_files": "notebook"}, on_accelerator=False,
    )  # fmt: skip
    cfg, data = everything.cfg, everything.data
    files = records.find_checked(cfg, everything.places, "train_files", labeled=True)
    labels = [number for number in real_keys(pipeline.for_inference(data, files, cfg, 8, True))]
    ids = [key.decode() for key in real_keys(pipeline.for_inference(data, files, cfg, 8, False))]
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
    folder = mixed_competition(tmp_path, {"cat": 23, "dog": 14, "owl": 9})
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
    folder = mixed_competition(tmp_path, {"cat": 20, "dog": 20, "owl": 20}, group_size=3)
    write(folder, "patient")
    group = {row["image_id"]: row["patient"] for row in read_csv(folder / "train.csv")}
    folds_of = collections.defaultdict(set)
    for row in read_back(folder / "records"):
        folds_of[group[row["id"]]].add(row["fold"])
    assert len(folds_of) == 20 and all(len(folds) == 1 for folds in folds_of.values())
    assert len({fold for folds in folds_of.values() for fold in folds}) == 5


def test_png_grayscale_cmyk_and_rotated_photos_come_out_rgb_and_upright(tmp_path):
    """The loader decodes JPEG as RGB and ignores EXIF: the writer must store them right."""
    from {{ cookiecutter.package }}.tools.images_to_records import Decoding, prepare

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
        pixels = tf.io.decode_jpeg(stored.encoded, channels=3).numpy().astype(int)
        assert pixels.shape == (40, 60, 3), name
        assert np.abs(pixels[:, :25].mean((0, 1)) - (220, 20, 20)).max() < 25, name
        assert np.abs(pixels[:, 35:].mean((0, 1)) - (20, 20, 220)).max() < 25, name
    gray = prepare(str(tmp_path / "gray.jpg"))
    assert gray.encoded == (tmp_path / "gray.jpg").read_bytes()  # JPEG passes through unchanged
    assert tf.io.decode_jpeg(gray.encoded, channels=3).shape == (40, 60, 3)
    resized = prepare(str(tmp_path / "plain.png"), Decoding(resize=32))
    assert tf.io.decode_jpeg(resized.encoded).shape == (32, 32, 3)


def test_an_image_that_does_not_decode_is_listed_and_not_written(tmp_path, capsys):
    folder = mixed_competition(tmp_path, {"cat": 6, "dog": 6, "owl": 6})
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


@pytest.fixture(scope="module")
def gigapixel(tmp_path_factory) -> Path:
    """A 14,000 x 14,000 PNG, dark on the left and bright on the right: a whole-slide image
    of the size UBC-OCEAN ships, past Pillow's decompression-bomb limit. Made once."""
    path = tmp_path_factory.mktemp("gigapixel") / "slide.png"
    image = Image.new("L", (14_000, 14_000), 40)
    image.paste(220, (7_000, 0, 14_000, 14_000))
    image.save(path)
    return path


def test_an_image_past_pillows_limit_is_stored_reduced_and_its_size_said(
    tmp_path, gigapixel, capsys
):
    """Read, not skipped: reduced to fit the limit, and said; --max-image-pixels refuses it."""
    from {{ cookiecutter.package }}.tools.images_to_records import Decoding, prepare

    folder = mixed_competition(tmp_path, {"cat": 4, "dog": 4})
    (folder / "train" / "img000.jpg").unlink()
    large = Path(shutil.copy(gigapixel, folder / "train" / "img000.png"))
    flags = ["--images", str(folder / "train"), "--csv", str(folder / "train.csv")]
    flags += ["--output", str(folder / "records"), "--id-column", "image_id", "--folds", "2"]
    assert main(["records", *flags]) == 0
    assert (
        f"  reduced {large}: 14,000 x 14,000 pixels, past Pillow's decompression-bomb limit; "
        "stored 7,000 x 7,000\n"
    ) in capsys.readouterr().out
    manifest = json.loads((folder / "records" / "manifest.json").read_text())
    assert manifest["reduced"] == [
        {"file": str(large), "size": [14_000, 14_000], "stored": [7_000, 7_000]}
    ]
    assert manifest["skipped"] == [] and manifest["train"]["records"] == 8
    spec = {name: tf.io.FixedLenFeature([], tf.string) for name in ("id", "image")}
    files = [str(path) for path in (folder / "records" / "train").glob("*.tfrec")]
    for row in tf.data.TFRecordDataset(files).map(lambda r: tf.io.parse_single_example(r, spec)):
        if row["id"].numpy() == b"img000":
            pixels = tf.io.decode_jpeg(row["image"], channels=1).numpy()[..., 0].astype(int)
    assert pixels.shape == (7_000, 7_000)
    assert abs(pixels[:, :3_400].mean() - 40) < 2 and abs(pixels[:, 3_600:].mean() - 220) < 2
    refused = prepare(str(large), Decoding(max_pixels=100_000_000)).problem
    assert refused == (
        "14,000 x 14,000 pixels, more than --max-image-pixels 100,000,000; raise it to read the image"
    )


def test_a_killed_writer_leaves_only_whole_shards_and_the_same_command_resumes(
    tmp_path, monkeypatch
):
    """Killed in the third fold: two whole shards, no .partial, no manifest. The same command
    keeps those two untouched, writes the rest, and ends with the manifest and records of a
    run never interrupted."""
    folder = mixed_competition(tmp_path, {"cat": 10, "dog": 10, "owl": 10})
    real, written = images_to_records.example, []

    def dies_in_the_third_fold(row, image):
        if len(written) == 14:
            raise KeyboardInterrupt
        written.append(row)
        return real(row, image)

    monkeypatch.setattr(images_to_records, "example", dies_in_the_third_fold)
    with pytest.raises(KeyboardInterrupt):
        write(folder)
    train = folder / "records" / "train"
    shards = sorted(path.name for path in train.iterdir())
    assert shards == ["fold0-00-6.tfrec", "fold1-00-6.tfrec"]  # nothing half-written beside them
    assert not (folder / "records" / "manifest.json").exists()
    kept = {path: path.stat().st_mtime_ns for path in train.iterdir()}
    monkeypatch.setattr(images_to_records, "example", real)
    resumed = write(folder)
    assert {path: path.stat().st_mtime_ns for path in kept} == kept  # kept, not written again
    whole = mixed_competition(tmp_path / "whole", {"cat": 10, "dog": 10, "owl": 10})
    never_interrupted = write(whole)
    assert json.dumps(resumed) == json.dumps(never_interrupted).replace(str(whole), str(folder))
    assert read_back(folder / "records") == read_back(whole / "records")


def test_finished_records_are_written_again_only_with_force(tmp_path, capsys):
    """--force removes the files the earlier run's manifest names, and says which."""
    folder = mixed_competition(tmp_path, {"cat": 4, "dog": 4, "owl": 4})
    first = write(folder, cfg=Config(id_column="image_id", folds=2))
    with pytest.raises(UserError, match="already holds finished records .*add --force"):
        write(folder, cfg=Config(id_column="image_id", folds=2))
    capsys.readouterr()
    manifest = images_to_records.write_records(
        Config(id_column="image_id", folds=3), str(folder / "train"),
        str(folder / "train.csv"), str(folder / "records"), force=True,
    )  # fmt: skip
    assert manifest["folds"] == 3
    removed = capsys.readouterr().out
    assert f"--force: removed what records wrote in {folder / 'records'} before: " in removed
    assert first["train"]["shards"][0]["file"] in removed and "manifest.json" in removed
    assert sorted({row["fold"] for row in read_back(folder / "records")}) == [0, 1, 2]


# A `records` run whose second fold takes hours: every image of fold 1 waits before it is
# written, so a signal sent once fold 1's shard is open always lands mid-shard.
SLOW_RECORDS = """
import runpy, sys, time
from {{ cookiecutter.package }}.tools import images_to_records as writer
made = writer.example
def slowly(row, image):
    if row.get("fold") == 1:
        time.sleep(600)
    return made(row, image)
writer.example = slowly
sys.argv = ["{{ cookiecutter.package }}", "records", *sys.argv[1:]]
runpy.run_module("{{ cookiecutter.package }}", run_name="__main__")
"""


@pytest.mark.slow
def test_records_interrupted_by_ctrl_c_resume_to_the_same_manifest_with_every_id_once(
    tmp_path, capsys
):
    """SIGINT to a real `records` process in the middle of its second shard: it exits 130
    with the first shard kept and no .partial, and the same command finishes the rest, every
    id once, with the manifest of a run never stopped."""
    folder = mixed_competition(tmp_path, {"cat": 100, "dog": 100, "owl": 100})
    flags = [
        "--images", str(folder / "train"), "--csv", str(folder / "train.csv"),
        "--id-column", "image_id", "--folds", "5", "--test-images", str(folder / "test"),
    ]  # fmt: skip
    first = start("-c", SLOW_RECORDS, *flags, "--output", str(folder / "records"))
    train = folder / "records" / "train"
    try:
        while not (train / "fold1-00.partial").exists() and first.poll() is None:
            time.sleep(0.01)
        first.send_signal(signal.SIGINT)
        out, err = first.communicate(timeout=120)
    finally:
        first.kill()  # never left sleeping if the signal went unanswered
    assert first.returncode == 130, out + err
    assert "interrupted: nothing was left half-written; run the same command again" in err
    assert [path.name for path in train.iterdir()] == ["fold0-00-60.tfrec"]
    assert not (folder / "records" / "manifest.json").exists()
    # The same command again, in this process: the interruption was the fresh process's.
    assert main(["records", *flags, "--output", str(folder / "records")]) == 0
    assert "resuming: 1 whole shard in " in capsys.readouterr().out
    resumed = json.loads((folder / "records" / "manifest.json").read_text())
    never_stopped = images_to_records.write_records(  # the same inputs, never stopped
        Config(id_column="image_id", folds=5), str(folder / "train"), str(folder / "train.csv"),
        str(tmp_path / "whole"), test_images=str(folder / "test"),
    )  # fmt: skip
    assert resumed == {**never_stopped, "command": resumed["command"]}
    ids = [row["id"] for row in read_back(folder / "records")]
    assert sorted(ids) == sorted(f"img{n:03d}" for n in range(300))  # every id once


def test_a_second_records_run_into_a_folder_being_written_is_refused(tmp_path):
    """Two writers would mix their shards: the second is refused, naming the first."""
    folder = mixed_competition(tmp_path, {"cat": 3, "dog": 3})
    output = folder / "records"
    refused = rf"records --output-dir {output} is in use by another run \(process {os.getpid()}: "
    first_run = one_run_at_a_time(output, "records --output-dir")  # a first run, still writing
    with first_run, pytest.raises(UserError, match=refused):
        images_to_records.write_records(
            Config(id_column="image_id", folds=1),
            str(folder / "train"),
            str(folder / "train.csv"),
            str(output),
        )
    assert not output.exists()  # nothing written by the second, and no lock left behind


# In a mount namespace of its own: `records` into a tmpfs too small for its shards, then the
# same command once the tmpfs has grown; the records are copied out.
RECORDS_DISK = """
out=/tmp/records-disk
mkdir -p $out && mount -t tmpfs -o size=256k tmpfs $out || exit 9
"$@" --output $out > "$RESULTS/first.log" 2>&1; echo $? > "$RESULTS/first.status"
ls -A $out/train > "$RESULTS/kept"
mount -o remount,size=16m $out
"$@" --output $out > "$RESULTS/again.log" 2>&1; echo $? > "$RESULTS/again.status"
cp -r $out "$RESULTS/records"
"""


@pytest.mark.slow
def test_a_full_disk_stops_records_in_one_line_and_the_same_command_finishes(tmp_path):
    """No framework error and no .partial: the shards already whole stay, and the same
    command, with room again, writes the rest."""
    folder = mixed_competition(tmp_path, {"cat": 100, "dog": 100, "owl": 100})
    command = [
        sys.executable, "-m", "{{ cookiecutter.package }}", "records", "--images",
        str(folder / "train"), "--csv", str(folder / "train.csv"), "--id-column", "image_id",
        "--folds", "5",
    ]  # fmt: skip
    env = {**os.environ, "RESULTS": str(tmp_path), "TF_CPP_MIN_LOG_LEVEL": "3"}
    subprocess.run(
        ["unshare", "-rm", "sh", "-c", RECORDS_DISK, "sh", *command],
        env=env, check=True, timeout=600,
    )  # fmt: skip
    first = (tmp_path / "first.log").read_text()
    assert (tmp_path / "first.status").read_text().strip() == "2", first
    last = first.strip().splitlines()[-1]
    assert re.fullmatch(
        r"error: cannot write /tmp/records-disk/train/fold\d-00\.partial \(.*; [\d,]+ bytes "
        r"free there\): free some space, or write elsewhere; the shards already whole are kept",
        last,
    ), last
    assert "Traceback" not in first
    kept = (tmp_path / "kept").read_text().split()
    assert kept and all(name.endswith(".tfrec") for name in kept)  # whole shards, no .partial
    again = (tmp_path / "again.log").read_text()
    assert (tmp_path / "again.status").read_text().strip() == "0", again
    assert f"resuming: {len(kept)} whole shard" in again
    ids = [row["id"] for row in read_back(tmp_path / "records")]
    assert sorted(ids) == sorted(f"img{n:03d}" for n in range(300))  # every id once


def test_every_input_is_checked_before_the_first_shard_is_written(tmp_path):
    """A typo in --test-images, a CSV naming no image, a header-only CSV, fewer groups than
    folds: each stops at once with its flag named, and nothing is written."""
    folder = mixed_competition(tmp_path, {"cat": 6, "dog": 6, "owl": 6}, group_size=9)
    images, csv, output = str(folder / "train"), str(folder / "train.csv"), folder / "records"
    cfg = Config(id_column="image_id", folds=3)
    with pytest.raises(UserError, match="records --test-images .*tset: not a folder of images"):
        images_to_records.write_records(
            cfg, images, csv, str(output), test_images=str(folder / "tset")
        )
    write_csv(
        tmp_path / "others.csv",
        ["image_id", "label"],
        [("elsewhere1", "cat"), ("elsewhere2", "dog")],
    )
    with pytest.raises(UserError, match="none of the 2 ids in .*others.csv .*names an image in"):
        images_to_records.write_records(
            Config(id_column="image_id", folds=1), images, str(tmp_path / "others.csv"), str(output)
        )
    write_csv(tmp_path / "header.csv", ["image_id", "label"], [])
    with pytest.raises(UserError, match="header.csv: no rows under its header"):
        images_to_records.write_records(cfg, images, str(tmp_path / "header.csv"), str(output))
    with pytest.raises(
        UserError, match="--group-column patient: .* 2 groups, fewer than .*--folds 3"
    ):
        images_to_records.write_records(cfg, images, csv, str(output), group_column="patient")
    assert not output.exists() or not any(output.rglob("*"))


def test_an_extension_in_another_case_still_finds_the_image_and_rare_classes_are_named(
    tmp_path, capsys
):
    """img000.jpg in the CSV, img000.JPG on disk: the same image. A class with fewer images
    than folds gets one line saying so, not scikit-learn's warning."""
    folder = mixed_competition(tmp_path, {"cat": 9, "dog": 9, "owl": 1})
    for path in (folder / "train").glob("*.jpg"):
        path.rename(path.with_suffix(".JPG"))
    rows = read_csv(folder / "train.csv")
    write_csv(
        folder / "train.csv",
        ["image_id", "label"],
        [
            (
                row["image_id"] + (".jpg" if int(row["image_id"][3:]) % 4 != 1 else ".png"),
                row["label"],
            )
            for row in rows
        ],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        manifest = write(folder, cfg=Config(id_column="image_id", folds=3))
    assert manifest["skipped"] == [] and manifest["train"]["records"] == 19
    assert (
        "note: 1 classes have fewer images than the 3 folds, so some folds validate without them: owl (1)"
        in capsys.readouterr().out
    )


@pytest.mark.parametrize("group_column", ["", "patient"])
def test_folds_are_drawn_where_every_class_has_fewer_images_than_folds(tmp_path, group_column):
    """4 images of each class in 5 folds: scikit-learn's stratified splits refuse them; the
    folds are drawn as the rows come (a patient's two images together), each holding some."""
    folder = mixed_competition(tmp_path, {"cat": 4, "dog": 4, "owl": 4}, group_size=2)
    manifest = write(folder, group_column)
    rows = read_back(folder / "records")
    assert manifest["folds"] == 5 and {row["fold"] for row in rows} == set(range(5))
    if group_column:
        patients = {row["image_id"]: row["patient"] for row in read_csv(folder / "train.csv")}
        held = collections.defaultdict(set)
        for row in rows:
            held[patients[row["id"]]].add(row["fold"])
        assert all(len(folds) == 1 for folds in held.values())


def test_records_names_each_skipped_file_and_why_on_screen(tmp_path, capsys):
    folder = mixed_competition(tmp_path, {"cat": 4, "dog": 4, "owl": 4})
    (folder / "train" / "img004.jpg").write_bytes(b"not an image")
    flags = ["--images", str(folder / "train"), "--csv", str(folder / "train.csv")]
    assert (
        main(
            [
                "records",
                *flags,
                "--output",
                str(folder / "records"),
                "--id-column",
                "image_id",
                "--folds",
                "2",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "skipped 1" in out
    assert f"  skipped {folder / 'train' / 'img004.jpg'}: not an image Pillow can read" in out


def test_train_and_predict_on_the_records_need_no_file_flags_and_submit_class_names(tmp_path):
    folder = mixed_competition(tmp_path, {"cat": 16, "dog": 16, "owl": 16})
    cfg = Config(id_column="image_id", folds=3)
    images_to_records.write_records(
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
    assert [row["image_id"] for row in submission] == [f"t{n}.jpg" for n in range(6)]
    assert {row["label"] for row in submission} <= {"cat", "dog", "owl"}


def tiny_jpeg(path: Path, shade: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((24, 24, 3), shade, np.uint8)).save(path, quality=90)


def test_a_spreadsheets_spaces_bom_and_line_ends_make_no_class_and_are_said(tmp_path, capsys):
    """A hand-edited or exported train.csv: " cat" and "cat " are cat, not classes of their
    own; ids and the header padded too, a byte-order mark and Windows line ends. Before, records
    counted " cat" as a fourth class and trained on it."""
    folder = mixed_competition(tmp_path, {"cat": 6, "dog": 6, "owl": 6})
    rows = read_csv(folder / "train.csv")
    padded = [" image_id", "label "]
    before, after = [" ", "", "  "], ["", " "]  # 26 values: 9 ids, 15 labels, 2 columns
    lines = [",".join(padded)] + [
        f"{row['image_id']}{after[i % 2]},{before[i % 3]}{row['label']}{after[i % 2]}"
        for i, row in enumerate(rows)
    ]
    (folder / "train.csv").write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    manifest = write(folder, cfg=Config(id_column="image_id", folds=3))
    assert manifest["classes"] == ["cat", "dog", "owl"] and manifest["skipped"] == []
    assert manifest["train"]["records"] == 18
    said = [line for line in capsys.readouterr().out.splitlines() if "spaces around" in line]
    line = (
        f"{folder / 'train.csv'}: 26 values read without the spaces around them (such as ' cat'), "
        "as a spreadsheet or a hand edit leaves them"
    )
    assert said == [line]


def test_labels_differing_only_in_case_or_unicode_form_are_refused_naming_both(tmp_path, capsys):
    """A label spelled "Daisy" on some rows and "daisy" on others, or "é" composed on some and
    written as "e" and a combining accent on others, made a class of each, silently: refused in one
    line that names both spellings and their rows, before a shard is written; kept apart where
    the user says so."""
    folder = mixed_competition(tmp_path, {"cat": 6, "dog": 6, "owl": 6})
    rows = read_csv(folder / "train.csv")
    recased = [{**row, "label": "Cat" if row["label"] == "cat" and i % 3 == 0 else row["label"]}
               for i, row in enumerate(rows)]  # fmt: skip
    write_csv(folder / "train.csv", ["image_id", "label"],
              [(r["image_id"], r["label"]) for r in recased])  # fmt: skip
    cats = collections.Counter(row["label"] for row in recased)
    assert cats["Cat"] and cats["cat"]
    output = folder / "records"
    argv = ["records", "--images", str(folder / "train"), "--csv", str(folder / "train.csv"),
            "--output-dir", str(output), "--id-column", "image_id", "--folds", "3"]  # fmt: skip
    assert main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error == (
        f"error: {folder / 'train.csv'}: the labels 'cat' ({cats['cat']} rows) and 'Cat' "
        f"({cats['Cat']} rows) in 'label' differ only in case or Unicode form, and would train "
        "as classes of their own; write each class one way in the CSV, or set "
        "Config.keep_label_spellings / --keep-label-spellings to keep them apart"
    )
    assert not output.exists() or not any(output.rglob("*"))

    composed, decomposed = "ros\u00e9", "rose\u0301"  # the same word on screen
    named = [(r["image_id"], composed if i < 4 else decomposed if i < 6 else r["label"])
             for i, r in enumerate(rows)]  # fmt: skip
    write_csv(folder / "train.csv", ["image_id", "label"], named)
    with pytest.raises(UserError, match=r"'ros\\xe9' \(4 rows\) and 'rose\\u0301' \(2 rows\)"):
        write(folder, cfg=Config(id_column="image_id", folds=3))
    assert not output.exists() or not any(output.rglob("*"))
    kept = write(folder, cfg=Config(id_column="image_id", folds=3, keep_label_spellings=True))
    assert composed in kept["classes"] and decomposed in kept["classes"]


def test_a_cassava_style_csv_of_file_names_needs_no_id_or_label_flags(tmp_path):
    """Cassava's train.csv is image_id,label with ids such as 1000015157.jpg: the records keep
    the ids as the CSV spells them, and the manifest names the columns predict uses."""
    rows = [(f"{1000015157 + number}.jpg", str(number % 3)) for number in range(12)]
    for name, label in rows:
        tiny_jpeg(tmp_path / "train_images" / name, 40 * int(label))
    write_csv(tmp_path / "train.csv", ["image_id", "label"], rows)
    flags = ["--images", str(tmp_path / "train_images"), "--csv", str(tmp_path / "train.csv")]
    assert main(["records", *flags, "--output", str(tmp_path / "records"), "--folds", "2"]) == 0
    manifest = json.loads((tmp_path / "records" / "manifest.json").read_text())
    assert (manifest["id_column"], manifest["label_column"]) == ("image_id", "label")
    assert manifest["classes"] is None and manifest["num_classes"] == 3
    back = {row["id"]: str(row["class"]) for row in read_back(tmp_path / "records")}
    assert back == dict(rows)


def test_test_record_ids_are_file_names_with_their_extension_and_subfolder(tmp_path):
    folder = mixed_competition(tmp_path, {"cat": 3, "dog": 3, "owl": 3})
    tiny_jpeg(folder / "test" / "sub" / "t6.jpg", 90)
    images_to_records.write_records(
        Config(folds=1), str(folder / "train"), str(folder / "train.csv"),
        str(folder / "records"), test_images=str(folder / "test"),
    )  # fmt: skip
    spec = {"id": tf.io.FixedLenFeature([], tf.string)}
    files = [str(path) for path in (folder / "records" / "test").glob("*.tfrec")]
    parsed = tf.data.TFRecordDataset(files).map(lambda r: tf.io.parse_single_example(r, spec))
    ids = sorted(row["id"].decode() for row in parsed.as_numpy_iterator())
    assert ids == sorted([*(f"t{n}.jpg" for n in range(6)), "sub/t6.jpg"])


def test_a_csv_whose_columns_name_no_image_asks_for_the_id_column(tmp_path):
    for number in range(4):
        tiny_jpeg(tmp_path / "train_images" / f"img{number}.jpg", 60)
    write_csv(tmp_path / "train.csv", ["name", "label"], [(f"photo{n}", "cat") for n in range(4)])
    with pytest.raises(UserError) as caught:
        images_to_records.write_records(
            Config(folds=1), str(tmp_path / "train_images"), str(tmp_path / "train.csv"),
            str(tmp_path / "records"),
        )  # fmt: skip
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'train.csv'}: no column names the images in ")
    assert "its columns are name, label" in message and "--id-column" in message


def test_a_label_column_that_cannot_be_told_asks_for_it(tmp_path):
    for number in range(4):
        tiny_jpeg(tmp_path / "train_images" / f"img{number}.jpg", 60)
    rows = [(f"img{n}", "cat", "left") for n in range(4)]
    write_csv(tmp_path / "train.csv", ["image", "species", "side"], rows)
    with pytest.raises(UserError) as caught:
        images_to_records.write_records(
            Config(folds=1), str(tmp_path / "train_images"), str(tmp_path / "train.csv"),
            str(tmp_path / "records"),
        )  # fmt: skip
    wanted = "its columns are image, species, side (ids in 'image'), none named 'label' or 'target'"
    assert wanted + "; set Config.label_column / --label-column" in str(caught.value)


PLANT_LABELS = [
    "healthy", "scab", "scab frog_eye_leaf_spot", "rust", "frog_eye_leaf_spot",
    "complex", "powdery_mildew", "rust frog_eye_leaf_spot", "healthy", "scab",
]  # fmt: skip


def plant_pathology(folder: Path, count: int) -> list[tuple[str, str]]:
    """Plant Pathology 2021's layout: train_images/<hex>.jpg and train.csv with image,labels,
    some labels naming several diseases."""
    rows = [(f"{number:016x}.jpg", PLANT_LABELS[number % 10]) for number in range(count)]
    for number, (name, _) in enumerate(rows):
        tiny_jpeg(folder / "train_images" / name, 8 * number)
    write_csv(folder / "train.csv", ["image", "labels"], rows)
    return rows


def read_back_multi_hot(records_dir: Path, num_classes: int) -> list[dict]:
    spec = {
        "id": tf.io.FixedLenFeature([], tf.string),
        "class": tf.io.FixedLenFeature([num_classes], tf.int64),
        "fold": tf.io.FixedLenFeature([], tf.int64),
    }
    files = sorted(str(path) for path in (records_dir / "train").glob("*.tfrec"))
    parsed = tf.data.TFRecordDataset(files).map(lambda r: tf.io.parse_single_example(r, spec))
    return [
        {"id": row["id"].decode(), "class": row["class"].tolist(), "fold": int(row["fold"])}
        for row in parsed.as_numpy_iterator()
    ]


def test_several_labels_per_image_become_multi_hot_records_in_stratified_folds(tmp_path):
    rows = plant_pathology(tmp_path, 30)
    manifest = images_to_records.write_records(
        Config(folds=3), str(tmp_path / "train_images"), str(tmp_path / "train.csv"),
        str(tmp_path / "records"),
    )  # fmt: skip
    classes = ["complex", "frog_eye_leaf_spot", "healthy", "powdery_mildew", "rust", "scab"]
    assert manifest["multi_label"] is True and manifest["classes"] == classes
    assert (manifest["id_column"], manifest["label_column"]) == ("image", "labels")
    back = read_back_multi_hot(tmp_path / "records", len(classes))
    held = {row["id"]: {classes[n] for n, v in enumerate(row["class"]) if v} for row in back}
    assert held == {name: set(labels.split()) for name, labels in rows}
    assert sorted(row["id"] for row in back) == sorted(name for name, _ in rows)  # each once
    per_fold = manifest["train"]["per_fold"]
    for fold in range(3):
        in_fold = [row for row in back if row["fold"] == fold]
        assert per_fold[str(fold)]["records"] == len(in_fold) == 10
        holding = collections.Counter(n for row in in_fold for n, v in enumerate(row["class"]) if v)
        assert per_fold[str(fold)]["classes"] == {str(n): c for n, c in sorted(holding.items())}


def test_multi_hot_records_pass_the_checks_of_a_run_the_manifest_makes_multi_label(tmp_path):
    plant_pathology(tmp_path, 20)
    images_to_records.write_records(
        Config(folds=2), str(tmp_path / "train_images"), str(tmp_path / "train.csv"),
        str(tmp_path / "records"),
    )  # fmt: skip
    run = start_run(Config(data_dir=str(tmp_path / "records"), image_size=32), on_accelerator=False)
    cfg = run.cfg  # with what the manifest says
    assert cfg.multi_label and cfg.num_classes == 6
    files = records.find_checked(cfg, run.places, "train_files", labeled=True)
    assert all(not shard.problems for shard in scan.scan_split(files, cfg, labeled=True))


def test_whole_number_labels_of_a_multi_label_csv_sort_as_numbers():
    classes, rows, rarest = competition_files.multi_hot(pd.Series(["10 2", "2", "9 2"]))
    assert classes == ["2", "9", "10"]
    assert rows.tolist() == [[1, 0, 1], [1, 0, 0], [1, 1, 0]]
    assert rarest == [2, 0, 1]  # each image's least common label stratifies its fold


def multi_hot_shard(path: Path, rows: list[list[int]]) -> str:
    with tf.io.TFRecordWriter(str(path)) as writer:
        for row in rows:
            label = tf.train.Feature(int64_list=tf.train.Int64List(value=row))
            image = tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"jpeg"]))
            features = tf.train.Features(feature={"image": image, "class": label})
            example = tf.train.Example(features=features)
            writer.write(example.SerializeToString())
    return str(path)


def test_a_multi_hot_shard_checked_as_single_label_says_to_set_multi_label(tmp_path):
    shard = multi_hot_shard(tmp_path / "00-3.tfrec", [[0, 1, 0], [1, 1, 0], [0, 0, 1]])
    multi_label = Config(num_classes=3, multi_label=True)
    assert not scan.scan_shard(shard, multi_label, labeled=True).problems  # good multi-hot rows
    found = scan.scan_shard(shard, Config(num_classes=3), labeled=True)
    assert found.describe() == (
        f"{shard}: 3 of 3 records have multi-hot rows in 'class' (several labels per image), "
        "and this run expects one class number; set Config.multi_label / --multi-label "
        "(first: record 0)"
    )


def test_single_label_records_checked_as_multi_label_say_to_unset_it(tmp_path):
    rows = [{"image": b"jpeg", "class": n % 3} for n in range(4)]
    shard = shards.write_shards(str(tmp_path), rows, 1, 8)[0]
    found = scan.scan_shard(shard, Config(num_classes=3, multi_label=True), labeled=True)
    assert "4 of 4 records have one class number in 'class'" in found.describe()
    assert "set Config.multi_label / --multi-label to False" in found.describe()


def test_a_multi_hot_row_of_another_length_or_value_is_named_with_its_record(tmp_path):
    shard = multi_hot_shard(tmp_path / "00-3.tfrec", [[0, 1, 0], [1, 0, 0, 1], [0, 2, 1]])
    found = scan.scan_shard(shard, Config(num_classes=3, multi_label=True), labeled=True)
    assert found.problems == {
        "have multi-hot rows in 'class' of another length than 3 "
        "(Config.num_classes / --num-classes)": 1,
        "have multi-hot rows in 'class' with values not 0 or 1": 1,
    }
    assert list(found.first.values()) == [1, 2]  # the record each problem is first met in
