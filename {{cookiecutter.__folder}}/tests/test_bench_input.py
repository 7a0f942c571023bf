"""`bench input` prints each pipeline's images per second and ours against the others.
(What the figures are is for the benchmark to say on a real machine, not for a test.)"""

import argparse
import re

import numpy as np

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.tools.bench import command
from {{ cookiecutter.package }}.tools.bench_input import input_rates, photo_like

VARIANTS = ("DN", "DA", "OURS", "B1")
FILE_VARIANTS = ("DN", "OURS", "DN-REC", "OURS-REC")  # on image files


def test_bench_input_measures_every_pipeline_on_photo_like_jpegs_it_writes(tmp_path, capsys):
    cfg = Config(output_dir=str(tmp_path), image_size=64, batch_size=16)
    medians = input_rates(cfg, synthetic=True, images=96, repeats=2)
    printed = capsys.readouterr().out
    assert f"writing 96 photo-like JPEGs at 64x64 to {tmp_path}" in printed
    heading = r"^cores: \d+, records: 96 in 8 shards .*mean JPEG \d+\.\d KiB, 64x64, batch 16"
    assert re.search(heading, printed, re.MULTILINE)
    for name in VARIANTS:
        assert re.search(rf"^{name} +\d+ images/s \(median of 2\)$", printed, re.MULTILINE), name
        assert medians[name] > 0
    for other in ("DN", "DA", "B1"):
        assert re.search(rf"^OURS/{other} \d+\.\d\d$", printed, re.MULTILINE), other
    input_rates(cfg, synthetic=True, images=96, repeats=1)  # written once, then reused
    assert "writing" not in capsys.readouterr().out


def test_bench_input_on_image_files_measures_them_and_records_of_them_in_one_run(tmp_path, capsys):
    """A competition's image files (train_images/ and train.csv, nested folders too) against
    reading and decoding them alone, and records written from them, taking turns; a pass of
    more images than there are reads them again. A folder given by --image-folder alike."""
    images = tmp_path / "data" / "train_images"
    (images / "sub").mkdir(parents=True)
    rng = np.random.default_rng(0)
    rows = ["image_id,label"]
    for number in range(48):
        name = f"sub/{number}.jpg" if number % 3 else f"{number}.jpg"
        (images / name).write_bytes(photo_like(rng, 64))
        rows.append(f"{number}.jpg,{number % 2}")
    (tmp_path / "data" / "train.csv").write_text("\n".join(rows) + "\n")
    cfg = Config(
        data_dir=str(tmp_path / "data"), output_dir=str(tmp_path / "out"), image_size=64,
        batch_size=16, folds=1,
    )  # fmt: skip
    asked = argparse.Namespace(
        mode="input", synthetic=False, image_folder="", images_per_pass=96, repeats=2
    )
    assert command(asked, cfg) == 0
    printed = capsys.readouterr().out
    records = tmp_path / "out" / "bench-input" / "train_images-records-48"
    assert f"writing 48 images as records to {records}\n" in printed
    folder, shards = re.escape(str(images)), re.escape(str(records))
    heading = (
        rf"^cores: \d+, image files: 48 \({folder}\), mean file \d+\.\d KiB, resized to "
        rf"64x64 where not at it, batch 16, 5 batches a pass; records of them: 8 shards "
        rf"\({shards}\)$"
    )
    assert re.search(heading, printed, re.MULTILINE), printed
    for name in FILE_VARIANTS:
        assert re.search(rf"^{name} +\d+ images/s \(median of 2\)$", printed, re.MULTILINE), name
    ratios = {"OURS/DN": "files", "OURS-REC/DN-REC": "records"}
    ratios["OURS-REC/OURS"] = "records against files"
    for ratio, of in ratios.items():
        assert re.search(rf"^{ratio} \d+\.\d\d \({of}\)$", printed, re.MULTILINE), ratio
    plain = Config(output_dir=str(tmp_path / "out"), image_size=64, batch_size=16)
    medians = input_rates(plain, folder=str(images), images=48, repeats=1)
    assert "image files: 48" in capsys.readouterr().out
    assert all(medians[name] > 0 for name in FILE_VARIANTS)
