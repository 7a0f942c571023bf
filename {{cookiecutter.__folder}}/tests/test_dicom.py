"""`records` reads DICOM as Kaggle's medical competitions ship it: pydicom's own test files
(CT and MR, little- and big-endian, RLE, JPEG, JPEG-LS, JPEG 2000, palette and YBR colour,
multi-frame), copied with a CSV naming them, become records whose pixels are pydicom's own
decoded, rescaled and windowed arrays; a folder of slices is one series; each bad file is one
line, and the rest are written. Written against pydicom 3.0."""

import copy
import io
import json
import random
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from builders import write_csv
from PIL import Image
from test_code_competition import NAME, rerun_of
from test_competitions import readme_commands

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.data import dicom
from {{ cookiecutter.package }}.runtime.data.images import CompetitionImages
from {{ cookiecutter.package }}.runtime.stages.run import start

pydicom = pytest.importorskip("pydicom")
from pydicom.data import get_testdata_file
from pydicom.pixels import apply_color_lut, apply_modality_lut, apply_voi_lut

# pydicom's test files, each a kind a competition may ship.
FILES = [
    "CT_small.dcm",  # CT, explicit VR little-endian, no window: its range
    "MR_small.dcm",  # MR, its own window
    "MR_small_bigendian.dcm",
    "MR_small_implicit.dcm",
    "MR_small_RLE.dcm",
    "SC_rgb_jpeg_dcmtk.dcm",  # JPEG baseline, YBR
    "SC_rgb_jpeg_gdcm.dcm",  # JPEG Lossless (process 14)
    "MR_small_jpeg_ls_lossless.dcm",  # JPEG-LS
    "MR_small_jp2klossless.dcm",  # JPEG 2000
    "693_J2KI.dcm",  # CT, JPEG 2000, its own window
    "examples_palette.dcm",
    "examples_ybr_color.dcm",  # 30 frames of YBR: the middle one
    "SC_rgb_rle_2frame.dcm",
    "rtdose.dcm",  # 15 grey frames
]
NEEDS_PYLIBJPEG = {"SC_rgb_jpeg_gdcm.dcm", "MR_small_jpeg_ls_lossless.dcm"}  # Pillow has neither
# Blocks pylibjpeg and its plugins in every process started with it on PYTHONPATH (the
# writer's workers too): an image without them, as Kaggle's TPU image is.
WITHOUT_PYLIBJPEG = """
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pylibjpeg", "libjpeg", "openjpeg", "rle"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Blocked())
"""


def copied(folder: Path, name: str, as_name: str = "", **changed) -> Path:
    """A copy of one of pydicom's test files, with header fields changed."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (as_name or name)
    if not changed:
        return Path(shutil.copy(get_testdata_file(name), path))
    ds = pydicom.dcmread(get_testdata_file(name))
    for field, value in changed.items():
        setattr(ds, field, value)
    ds.save_as(path)
    return path


def series(folder: Path, slices: int, seed: int, size: str = "CT_small.dcm") -> list[Path]:
    """A series of CT_small.dcm's slice, each 40 HU brighter than the one below it, named in
    shuffled order: the files, from the lowest slice up."""
    base = pydicom.dcmread(get_testdata_file(size))
    names = random.Random(seed).sample(range(100, 999), slices)
    uid = pydicom.uid.generate_uid()
    made = []
    for number in range(slices):
        ds = copy.deepcopy(base)
        ds.PixelData = (base.pixel_array + 40 * number).astype(np.int16).tobytes()
        x, y, z = (float(value) for value in base.ImagePositionPatient)
        ds.ImagePositionPatient = [x, y, z + 2.5 * number]
        ds.InstanceNumber, ds.SeriesInstanceUID = number + 1, uid
        made.append(folder / f"{names[number]}.dcm")
        folder.mkdir(parents=True, exist_ok=True)
        ds.save_as(made[-1])
    return made


def as_viewed(path: Path, window: tuple | None = None, frame: int | None = None) -> np.ndarray:
    """The file as the records should hold it, from pydicom: its decoded pixels (`frame`, else
    the middle one); grey ones rescaled (apply_modality_lut), then windowed by apply_voi_lut (the
    file's window, or `window`) and cut to 8 bits over the output range it documents, or
    without a window over their own range; MONOCHROME1 inverted; colour in 8 bits."""
    ds = pydicom.dcmread(path)
    stored = ds.pixel_array
    if int(ds.get("NumberOfFrames", 1) or 1) > 1:
        stored = stored[len(stored) // 2 if frame is None else frame]
    if "PALETTE" in ds.PhotometricInterpretation:
        return (apply_color_lut(stored, ds) >> 8).astype(np.uint8)
    if ds.SamplesPerPixel == 3:
        return (stored >> (8 * stored.dtype.itemsize - 8)).astype(np.uint8)
    values = apply_modality_lut(stored, ds).astype(float)
    if window:
        ds.WindowCenter, ds.WindowWidth = window
    if "WindowWidth" in ds:
        signed = ds.PixelRepresentation == 1
        low, high = (-(2 ** (ds.BitsStored - 1)), 2 ** (ds.BitsStored - 1) - 1) if signed else (
            0, 2**ds.BitsStored - 1
        )  # fmt: skip
        slope, intercept = float(ds.get("RescaleSlope", 1)), float(ds.get("RescaleIntercept", 0))
        low, high = low * slope + intercept, high * slope + intercept
        grey = (apply_voi_lut(values, ds) - low) / (high - low)
    else:
        grey = (values - values.min()) / (values.max() - values.min())
    if ds.PhotometricInterpretation == "MONOCHROME1":
        grey = 1 - grey
    return np.round(grey * 255).astype(np.uint8)


def records_of(folder: Path, split: str = "train") -> dict[str, np.ndarray]:
    """Every record's image, decoded, by its id."""
    spec = {name: tf.io.FixedLenFeature([], tf.string) for name in ("id", "image")}
    files = sorted(str(path) for path in (folder / split).glob("*.tfrec"))
    parsed = tf.data.TFRecordDataset(files).map(lambda r: tf.io.parse_single_example(r, spec))
    return {
        row["id"].decode(): np.array(Image.open(io.BytesIO(row["image"])))
        for row in parsed.as_numpy_iterator()
    }


@pytest.fixture(scope="module")
def competition(tmp_path_factory) -> Path:
    """pydicom's test files, a MONOCHROME1 copy of CT_small, an MR slice without an extension,
    and three bad inputs (a truncated file, one without pixels, a series of slices of two
    sizes), in train/ with train.csv."""
    folder = tmp_path_factory.mktemp("dicom")
    train = folder / "train"
    for name in FILES:
        copied(train, name)
    copied(train, "CT_small.dcm", "CT_small_mono1.dcm", PhotometricInterpretation="MONOCHROME1")
    copied(train, "MR_small.dcm", "mr_no_extension")  # found by content
    copied(train, "MR_truncated.dcm")
    copied(train, "nested_priv_SQ.dcm")
    odd = series(train / "odd_series", 2, seed=1)
    uid = pydicom.dcmread(odd[0]).SeriesInstanceUID
    copied(train / "odd_series", "MR_small.dcm", SeriesInstanceUID=uid)  # 64 x 64 among 128s
    ids = [path.name for path in sorted(train.iterdir())]
    labels = [(name, "ab"[number % 2]) for number, name in enumerate(ids)]
    write_csv(folder / "train.csv", ["image", "label"], labels)
    return folder


def written(competition: Path, output: Path, *flags: str) -> dict:
    """`records` of the competition into `output`: its manifest."""
    images, csv = competition / "train", competition / "train.csv"
    argv = ["records", "--images", str(images), "--csv", str(csv), "--output-dir", str(output)]
    assert main([*argv, "--folds", "2", *flags]) == 0
    return json.loads((output / "manifest.json").read_text())


@pytest.fixture(scope="module")
def with_decoders(competition, tmp_path_factory):
    """The records of `competition`, written once with every decoder installed."""
    output = tmp_path_factory.mktemp("records") / "records"
    return output, written(competition, output)


def test_every_readable_file_is_a_record_of_the_pixels_pydicom_shows(competition, with_decoders):
    """Within one grey level of pydicom's own arrays, each file; the MONOCHROME1 copy is the
    original inverted; the manifest says the window."""
    output, manifest = with_decoders
    stored = records_of(output)
    assert set(stored) == {*FILES, "CT_small_mono1.dcm", "mr_no_extension"}
    for name, pixels in stored.items():
        expected = as_viewed(competition / "train" / name)
        assert pixels.shape[:2] == expected.shape[:2], name
        assert np.abs(pixels.astype(int) - expected).max() <= 1, name
    inverted = 255 - stored["CT_small.dcm"].astype(int)
    assert np.abs(stored["CT_small_mono1.dcm"] - inverted).max() <= 1
    said = {"window": "auto", "slices": 3, "frames": "middle", "slice_column": ""}
    said["series_depth"] = 1  # odd_series: a test set read as files is read as deep
    assert manifest["dicom"] == said


def test_each_bad_input_is_one_line_naming_it_and_the_rest_are_written(with_decoders):
    _, manifest = with_decoders
    reasons = {Path(entry["file"]).name: entry["reason"] for entry in manifest["skipped"]}
    assert reasons == {
        "MR_truncated.dcm": reasons["MR_truncated.dcm"],
        "nested_priv_SQ.dcm": reasons["nested_priv_SQ.dcm"],
        "odd_series": reasons["odd_series"],
    }
    assert reasons["MR_truncated.dcm"].startswith("its pixels do not decode (ValueError: ")
    assert reasons["MR_truncated.dcm"].endswith("; it is damaged or cut short: download it again")
    assert reasons["nested_priv_SQ.dcm"].startswith("a DICOM file without pixel data")
    assert re.fullmatch(
        r"its slices differ in size: 128 x 128 \(\d+\.dcm\), 64 x 64 \(MR_small\.dcm\); leave "
        r"the odd ones out of it",
        reasons["odd_series"],
    )
    assert manifest["train"]["records"] == len(FILES) + 2


def test_a_ct_slice_is_stored_in_the_window_given(tmp_path):
    """A named window (soft tissue: 40, 400 HU) and CENTER,WIDTH, as pydicom windows them."""
    path = copied(tmp_path, "CT_small.dcm")
    for window, numbers in (("soft-tissue", (40, 400)), ("-600,1500", (-600, 1500))):
        pixels = dicom.pixels(str(path), window)[..., 0]
        assert np.abs(pixels.astype(int) - as_viewed(path, numbers)).max() <= 1, window
    assert dicom.window("bone") == "bone"


def test_the_files_own_window_follows_its_voi_lut_function_as_pydicom_applies_it(tmp_path):
    """SIGMOID (as many mammograms say) and LINEAR_EXACT shape the file's own window; a window
    given is the viewers' linear one all the same."""
    linear = dicom.pixels(str(copied(tmp_path, "MR_small.dcm")))[..., 0].astype(int)
    for function in ("SIGMOID", "LINEAR_EXACT"):
        path = copied(tmp_path, "MR_small.dcm", f"{function}.dcm", VOILUTFunction=function)
        pixels = dicom.pixels(str(path))[..., 0].astype(int)
        assert np.abs(pixels - as_viewed(path)).max() <= 1, function
        given = dicom.pixels(str(path), "600,1600")[..., 0].astype(int)
        assert np.abs(given - linear).max() <= 1, function
    assert np.abs(dicom.pixels(str(tmp_path / "SIGMOID.dcm"))[..., 0] - linear).max() > 10


def competition_images(**fields) -> CompetitionImages:
    """The reader of a competition's image files, made as a run that reads them makes it."""
    cfg = Config(**fields)
    places = start(cfg, on_accelerator=False, read=False).places
    return CompetitionImages(cfg, places, None, "images")


def test_a_dicom_file_that_does_not_decode_mid_run_is_named_with_pydicoms_reason(tmp_path):
    """What `doctor --scan`, and train or predict where decoding stops, say of a DICOM file
    read from the competition's folder whose pixels do not decode: why, and what to do."""
    path = str(copied(tmp_path, "MR_truncated.dcm"))
    (shard,) = competition_images(image_size=64).scanned([path], labeled=True)
    assert shard.describe().startswith(
        f"{path}: does not decode as an image: its pixels do not decode (ValueError: "
    )
    assert shard.describe().endswith("; it is damaged or cut short: download it again")


def test_without_pylibjpeg_only_the_files_that_need_it_are_skipped_each_naming_the_fix(
    competition, tmp_path, monkeypatch, capsys
):
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(WITHOUT_PYLIBJPEG)
    monkeypatch.setenv("PYTHONPATH", str(blocker))  # the writer's worker processes start with it
    manifest = written(competition, tmp_path / "records")
    out = capsys.readouterr().out
    for name in NEEDS_PYLIBJPEG:
        syntax = pydicom.dcmread(get_testdata_file(name)).file_meta.TransferSyntaxUID.name
        line = (
            f"  skipped {competition / 'train' / name}: its transfer syntax, {syntax}, needs a "
            "decoder that is not installed: python -m pip install pylibjpeg pylibjpeg-libjpeg "
            "pylibjpeg-openjpeg"
        )
        assert line in out.splitlines(), out
    assert manifest["train"]["records"] == len(FILES) + 2 - len(NEEDS_PYLIBJPEG)


def test_a_series_is_one_record_of_three_slices_in_order_of_position(tmp_path):
    """Twelve slices named in shuffled order: --slices 3 takes the middles of three equal
    parts (the 3rd, 7th and 11th from the bottom); the test images' series are named as the
    training CSV names them (their folders); --slice-column centres them on a slice."""
    slices = {name: series(tmp_path / "train" / name, 12, seed) for seed, name in enumerate("pq")}
    test = series(tmp_path / "test" / "r", 12, seed=3)
    write_csv(tmp_path / "train.csv", ["series", "label", "at"], [("p", "a", "5"), ("q", "b", "")])
    flags = ["--test-images", str(tmp_path / "test"), "--window", "500,3000", "--slices", "3"]
    argv = ["records", "--images", str(tmp_path / "train"), "--csv", str(tmp_path / "train.csv")]
    assert main([*argv, "--output-dir", str(tmp_path / "records"), "--folds", "1", *flags]) == 0
    stored = records_of(tmp_path / "records")
    for name, files in slices.items():
        assert stored[name].shape == (128, 128, 3)
        for channel, file in enumerate(files[2::4]):
            expected = as_viewed(file, (500, 3000))
            assert np.abs(stored[name][..., channel].astype(int) - expected).max() <= 1
    assert list(records_of(tmp_path / "records", "test")) == ["r"]
    centred = dicom.pixels(str(tmp_path / "train" / "p"), "500,3000", 3, at="5")
    for channel, file in enumerate(slices["p"][3:6]):  # Instance Numbers 4, 5 and 6
        assert np.abs(centred[..., channel].astype(int) - as_viewed(file, (500, 3000))).max() <= 1
    middle = dicom.pixels(str(tmp_path / "test" / "r"), "500,3000", 1)  # --slices 1
    assert middle.shape == (128, 128, 1)
    assert np.abs(middle[..., 0].astype(int) - as_viewed(test[6], (500, 3000))).max() <= 1


def test_a_competition_of_series_is_read_from_its_folders_as_a_notebook_reads_it(
    tmp_path, monkeypatch
):
    """Without records, a series (a folder of slices, as the training CSV names it) is one
    image to train on, and each test series as deep one id to predict."""
    rows = [(f"s{number}", "ab"[number % 2]) for number in range(8)]
    for number, (name, _) in enumerate(rows):
        series(tmp_path / "data" / "train_images" / name, 3, seed=number)
    for number in range(2):
        series(tmp_path / "data" / "test_images" / f"r{number}", 3, seed=10 + number)
    write_csv(tmp_path / "data" / "train.csv", ["id", "label"], rows)
    sample = [("r0", "a"), ("r1", "a")]
    write_csv(tmp_path / "data" / "sample_submission.csv", ["id", "label"], sample)
    monkeypatch.chdir(tmp_path)
    for command in (f"train {QUICK}", f"predict {QUICK}"):
        assert main([*command.split(), "--data-dir", "data", "--folds", "2"]) == 0, command
    written = pd.read_csv(tmp_path / "output" / "submission.csv", dtype=str)
    assert written["id"].tolist() == ["r0", "r1"]
    assert set(written["label"]) <= {"a", "b"}


def test_a_multi_frame_file_gives_its_middle_frame_or_its_frames_as_slices(tmp_path):
    """rtdose.dcm's 15 frames: the 8th alone, or with --frames slices the 3rd, 8th and 13th."""
    path = copied(tmp_path, "rtdose.dcm")
    window = (600_000, 1_200_000)
    alone = dicom.pixels(str(path), "600000,1200000")
    assert alone.shape == (10, 10, 1)
    assert np.abs(alone[..., 0].astype(int) - as_viewed(path, window, 7)).max() <= 1
    three = dicom.pixels(str(path), "600000,1200000", 3, "slices")
    for channel, frame in enumerate((2, 7, 12)):
        assert np.abs(three[..., channel].astype(int) - as_viewed(path, window, frame)).max() <= 1


QUICK = "--backbone small-cnn --weights none --image-size 32 --epochs 1 --batch-size 4"


def small_competition(data: Path) -> None:
    """Two classes of CT slices (CT_small, and 693_J2KI in JPEG 2000), the sample naming the
    test images without their .dcm as RSNA's do."""
    kinds = {"a": "CT_small.dcm", "b": "693_J2KI.dcm"}
    rows = [(f"{number}", "ab"[number % 2]) for number in range(8)]
    truth = [(f"t{number}", "ab"[number % 2]) for number in range(4)]
    for folder, labeled in (("train_images", rows), ("test_images", truth)):
        for key, label in labeled:
            copied(data / folder, kinds[label], f"{key}.dcm")
    write_csv(data / "train.csv", ["id", "label"], rows)
    write_csv(data / "sample_submission.csv", ["id", "label"], [(key, "a") for key, _ in truth])
    write_csv(data / "solution.csv", ["id", "label"], truth)


def test_a_small_dicom_competition_goes_through_records_train_predict_and_score(
    tmp_path, monkeypatch, capsys
):
    """docs/data.md's `records` command on a small competition of CT slices; then train,
    predict and score: no flag beyond --window."""
    small_competition(tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    (records,) = readme_commands("DICOM, and images past Pillow's limit")
    assert main([*records.split()[3:], "--folds", "2"]) == 0
    places = ["--data-dir", "data/records", "--sample-submission", "data/sample_submission.csv"]
    capsys.readouterr()
    assert main(["doctor", *QUICK.split(), *places]) == 0
    said = capsys.readouterr().out
    assert "\nDICOM: --window soft-tissue --slices 3 (records' manifest)\n" in said
    for command in (f"train {QUICK}", f"predict {QUICK}", "score --solution data/solution.csv"):
        assert main([*command.split(), *places]) == 0, command
    written = pd.read_csv(tmp_path / "output" / "submission.csv", dtype=str)
    assert written["id"].tolist() == ["t0", "t1", "t2", "t3"]
    assert set(written["label"]) <= {"a", "b"}
    assert re.search(r"^accuracy: [01]\.\d+", capsys.readouterr().out, re.MULTILINE)
    # A code competition's rerun reads its hidden test images as files, in the records' window.
    (record,) = (tmp_path / "output").glob("fold*/model.json")  # the one fold trained
    assert json.loads(record.read_text())["window"] == "soft-tissue"
    from_records = pd.read_csv(tmp_path / "output" / "test_probabilities.csv", dtype={"id": str})
    rerun = ["--test-images", "data/test_images", "--output-dir", "rerun"]
    rerun += ["--trained-dir", "output"]
    assert main(["predict", *QUICK.split(), *places, *rerun]) == 0
    from_files = pd.read_csv(tmp_path / "rerun" / "test_probabilities.csv", dtype={"id": str})
    assert from_files["id"].tolist() == from_records["id"].tolist()
    same = from_files.iloc[:, 1:].to_numpy(), from_records.iloc[:, 1:].to_numpy()
    np.testing.assert_allclose(*same, atol=1e-5)  # the pixels the model trained on


def test_a_series_competition_trained_as_2_5d_is_rerun_on_its_test_series_read_as_files(
    tmp_path, monkeypatch, capsys
):
    """A code competition of series (folders of slices) trained on `records --slices 3`:
    Kaggle's rerun reads the hidden test set as files, each series as deep as the training
    CSV named them and decoded into the three slices `records` stored, so it predicts every id
    as the records did; a series whose slice does not decode is named by the sample's id."""
    data = tmp_path / "data"
    rows = [(f"s{number}", "ab"[number % 2]) for number in range(8)]
    for number, (name, _) in enumerate(rows):
        series(data / "train_images" / name, 6, seed=number)
    for number in range(3):
        series(data / "test_images" / f"r{number}", 6, seed=10 + number)
    write_csv(data / "train.csv", ["id", "label"], rows)
    order = ["r2", "r0", "r1"]
    write_csv(data / "sample_submission.csv", ["id", "label"], [(key, "a") for key in order])
    monkeypatch.chdir(tmp_path)
    records = ["records", "--images", "data/train_images", "--csv", "data/train.csv"]
    records += ["--test-images", "data/test_images", "--output-dir", "data/records"]
    assert main([*records, "--window", "500,3000", "--slices", "3", "--folds", "2"]) == 0
    places = ["--data-dir", "data/records", "--sample-submission", "data/sample_submission.csv"]
    for command in (f"train {QUICK}", f"predict {QUICK}"):
        assert main([*command.split(), *places]) == 0, command
    rerun = [*QUICK.split(), *places, "--test-images", "data/test_images", "--output-dir", "rerun"]
    rerun += ["--trained-dir", "output"]
    assert main(["predict", *rerun]) == 0
    written = pd.read_csv(tmp_path / "rerun" / "submission.csv", dtype=str)
    assert written["id"].tolist() == order  # every series once, in the sample's order
    tables = [
        pd.read_csv(folder / "test_probabilities.csv", dtype={"id": str})
        for folder in (tmp_path / "output", tmp_path / "rerun")
    ]
    assert tables[0]["id"].tolist() == tables[1]["id"].tolist()
    same = [table.iloc[:, 1:].to_numpy() for table in tables]
    np.testing.assert_allclose(*same, atol=1e-5)  # the slices the model trained on
    for cut in (data / "test_images" / "r1").iterdir():  # downloads cut short
        cut.write_bytes(cut.read_bytes()[:-300])
    capsys.readouterr()
    assert main(["predict", *rerun]) == 2
    said = capsys.readouterr().err
    assert "test_images/r1: does not decode as an image (id r1): " in said, said
    assert "Traceback" not in said


@pytest.mark.slow
def test_kaggles_rerun_of_a_series_competition_reads_its_hidden_series_as_trained(tmp_path):
    """A code competition of series trained as 2.5D (`--slices 3`, from the competition's own
    files), then its inference notebook as Kaggle's scoring rerun runs it: offline, read-only,
    the hidden test series in place and the training files gone. It reads each test series as
    files, decoded into the slices the model trained on, and writes every id of the sample."""
    slug, root = "series-of-slices", tmp_path / "input"
    data = root / "competitions" / slug
    rows = [(f"s{number}", "ab"[number % 2]) for number in range(8)]
    for number, (name, _) in enumerate(rows):
        series(data / "train_images" / name, 6, seed=number)
    write_csv(data / "train.csv", ["id", "label"], rows)
    (data / "test_images").mkdir()
    write_csv(data / "sample_submission.csv", ["id", "label"], [])
    flags = [*QUICK.split(), "--window", "500,3000"]  # a series' three slices, as records
    trained = tmp_path / "working"
    train = ["train", *flags, "--data-dir", str(data), "--output-dir", str(trained)]
    assert main([*train, "--fold", "all", "--folds", "2"]) == 0
    shutil.copytree(trained, root / "notebooks" / "alice" / NAME)
    shutil.rmtree(data / "train_images")  # the rerun needs neither the images nor the labels
    (data / "train.csv").unlink()
    order = [f"h{number}" for number in (3, 0, 4, 1, 2)]
    for number, name in enumerate(sorted(order)):
        series(data / "test_images" / name, 5 + number % 2, seed=20 + number)
    write_csv(data / "sample_submission.csv", ["id", "label"], [(key, "a") for key in order])
    folder = tmp_path / "kernel"
    kernel = ["kernel", "--inference", "--competition", slug, *flags, "--accelerator", "cpu"]
    kernel += ["--kaggle-user", "alice"]
    assert main([*kernel, "--output", str(folder), "--output-dir", str(tmp_path / "rerun")]) == 0
    mounts = {"proxy": False, "rerun": True, "competitions": {slug: f"competitions/{slug}"}}
    mounts["notebooks"] = {f"alice/{NAME}": f"notebooks/alice/{NAME}"}
    rerun_of(folder, tmp_path, root, mounts)
    written = pd.read_csv(tmp_path / "rerun" / "submission.csv", dtype=str)
    assert written["id"].tolist() == order  # every series once, in the sample's order
    assert set(written["label"]) <= {"a", "b"}
    # The command line's predict on the same files: the same probabilities, the same slices.
    predict = ["predict", *flags, "--data-dir", str(data), "--trained-dir", str(trained)]
    assert main([*predict, "--output-dir", str(tmp_path / "command-line")]) == 0
    tables = [
        pd.read_csv(tmp_path / folder / "test_probabilities.csv", dtype={"id": str})
        for folder in ("rerun", "command-line")
    ]
    assert tables[0]["id"].tolist() == tables[1]["id"].tolist() == order
    np.testing.assert_allclose(tables[0].iloc[:, 1:], tables[1].iloc[:, 1:], atol=1e-5)


def test_a_dicom_competition_is_read_from_its_files_as_a_notebook_reads_it(
    tmp_path, monkeypatch, capsys
):
    """Without records, as a notebook (and a code competition's rerun on its hidden test set)
    reads the competition where Kaggle mounts it: train and predict decode the DICOM files in
    Config.window, and the model sees the pixels `records` would store; a window that is none
    is refused naming the field."""
    small_competition(tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    wrong = main(["train", *QUICK.split(), "--data-dir", "data", "--window", "skin"])
    assert wrong == 2 and "--window skin: not a window" in capsys.readouterr().err
    for command in (f"train {QUICK}", f"predict {QUICK}"):
        assert main([*command.split(), "--data-dir", "data", "--window", "soft-tissue"]) == 0
    assert main(["score", "--solution", "data/solution.csv", "--data-dir", "data"]) == 0
    written = pd.read_csv(tmp_path / "output" / "submission.csv", dtype=str)
    assert written["id"].tolist() == ["t0", "t1", "t2", "t3"]
    assert re.search(r"^accuracy: [01]\.\d+", capsys.readouterr().out, re.MULTILINE)
    path = tmp_path / "data" / "test_images" / "t0.dcm"
    read = competition_images(window="soft-tissue").encoded(tf.constant(str(path)))
    read = tf.io.decode_png(read)
    viewed = as_viewed(path, dicom.WINDOWS["soft-tissue"]).astype(int)
    assert np.abs(read.numpy()[..., 0] - viewed).max() <= 1
    # Downloads cut short, which only decoding finds: each named with what to do.
    for name, why in (("t0", "its pixels do not decode ("), ("t1", "its pixel data is missing")):
        cut = tmp_path / "data" / "test_images" / f"{name}.dcm"
        whole = cut.read_bytes()
        cut.write_bytes(whole[:-300])
        command = ["predict", *QUICK.split(), "--data-dir", "data", "--window", "soft-tissue"]
        assert main(command) == 2
        said = capsys.readouterr().err
        where = f"test_images/{name}.dcm: does not decode as an image (id {name})"  # as sampled
        assert where in said and f"): {why}" in said, said
        assert "Traceback" not in said
        cut.write_bytes(whole)
