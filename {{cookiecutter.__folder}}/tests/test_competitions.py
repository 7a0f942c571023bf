"""Competitions as Kaggle ships them (a folder of images, train.csv, a sample submission) go
through `records`, `train` and `predict` and come out as their samples ask: ids spelt as
the sample spells them, in its order, with its columns."""

import json
import re
import shlex

import numpy as np
import pandas as pd
import pytest
from builders import NAMES, competition, ids, image, write_csv
from conftest import PROJECT

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.stages.predict import predict
from {{ cookiecutter.package }}.runtime.stages.score import score_files
from {{ cookiecutter.package }}.runtime.stages.train import train
from {{ cookiecutter.package }}.tools.images_to_records import write_records

PACKAGE = "{{ cookiecutter.package }}"
# Small and quick: what the tests add to the README's commands, which train for real.
QUICK = "--backbone small-cnn --weights none --image-size 32 --epochs 2 --batch-size 8"
QUICK_CONFIG = {
    "backbone": "small-cnn", "weights": "none", "image_size": 32, "epochs": 2,
    "batch_size": 8, "learning_rate": 3e-3, "flip": False,
}  # fmt: skip


def readme_commands(section: str) -> list[str]:
    """The commands of docs/data.md's code block under `section`, continuation lines joined."""
    text = (PROJECT / "docs" / "data.md").read_text()
    block = text.split(f"## {section}", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    joined = re.sub(r"\\\n\s*", "", block)
    return [line.split("  #")[0].strip() for line in joined.splitlines() if line.strip()]


@pytest.mark.slow
def test_the_readme_commands_on_a_cassava_style_competition_match_its_sample(tmp_path, monkeypatch):
    """Run as the README writes them (`python -m PACKAGE` taken off: the commands' own
    start-up is test_preflight's), from where the data folder is, with no id flags: ids such
    as 1000015157.jpg in an image_id column, a sample in its own order."""
    labels = [name for name in ("0", "1", "2") for _ in range(12)]
    data = tmp_path / "data"
    competition(data, labels, ["image_id", "label"], ["image_id", "label"])
    monkeypatch.chdir(tmp_path)
    commands = readme_commands("A competition of images and a CSV")
    assert [command.split()[3] for command in commands] == ["records", "train", "predict"]
    for command in commands:
        words = shlex.split(command)
        assert words[:3] == ["python", "-m", PACKAGE], command
        quick = shlex.split(QUICK) if words[3] != "records" else ["--folds", "3"]
        assert main([*words[3:], *quick]) == 0, command
    written = pd.read_csv(tmp_path / "output" / "submission.csv", dtype=str)
    sample = pd.read_csv(data / "sample_submission.csv", dtype=str)
    assert list(written.columns) == list(sample.columns) == ["image_id", "label"]
    assert written["image_id"].tolist() == sample["image_id"].tolist()  # 5024.jpg first
    assert set(written["label"]) <= {"0", "1", "2"}


def test_a_probability_column_competition_submits_a_column_per_class(tmp_path, capsys):
    """Plant Pathology 2020's shape: image_id and a probability per class, scored by the mean
    ROC AUC over the classes."""
    labels = [name for name in NAMES for _ in range(12)]
    folder = competition(
        tmp_path, labels, ["image_id", "label"], ["image_id", "rust", "scab", "healthy"]
    )
    write_records(
        Config(folds=2), str(folder / "train_images"), str(folder / "train.csv"),
        str(folder / "records"), test_images=str(folder / "test_images"),
    )  # fmt: skip
    cfg = Config(
        data_dir=str(folder / "records"), output_dir=str(folder / "out"), metric="roc_auc",
        sample_submission=str(folder / "sample_submission.csv"), **QUICK_CONFIG,
    )  # fmt: skip
    train(cfg)
    assert re.search(r"valid roc_auc: [01]\.\d{4}", capsys.readouterr().out)
    written = pd.read_csv(predict(cfg), dtype={"image_id": str})
    sample = pd.read_csv(folder / "sample_submission.csv", dtype={"image_id": str})
    assert list(written.columns) == ["image_id", "rust", "scab", "healthy"]
    assert written["image_id"].tolist() == sample["image_id"].tolist()
    probabilities = written[["rust", "scab", "healthy"]].to_numpy()
    assert np.allclose(probabilities.sum(axis=1), 1, atol=1e-4)  # softmax over the classes
    truth = [NAMES[(int(name[:4]) - 5000) // 3 % 3] for name in written["image_id"]]
    write_csv(
        folder / "solution.csv", ["image_id", "label"], zip(written["image_id"], truth, strict=True)
    )
    scores = score_files(
        str(folder / "out" / "submission.csv"), str(folder / "solution.csv"), "image_id", "label"
    )
    assert 0 <= scores["roc_auc"] <= 1


def test_a_multi_label_competition_submits_labels_above_thresholds_chosen_on_validation(
    tmp_path, capsys
):
    """Plant Pathology 2021's shape: several labels per image separated by spaces, a sigmoid
    per class, each class's threshold chosen on the validation fold, samples F1."""
    combinations = ["healthy", "rust", "scab", "rust scab", "healthy rust"]
    labels = [combination for combination in combinations for _ in range(8)]
    folder = competition(tmp_path, labels, ["image", "labels"], ["image", "labels"])
    manifest = write_records(
        Config(folds=2), str(folder / "train_images"), str(folder / "train.csv"),
        str(folder / "records"), test_images=str(folder / "test_images"),
    )  # fmt: skip
    assert manifest["multi_label"] and manifest["classes"] == ["healthy", "rust", "scab"]
    cfg = Config(
        data_dir=str(folder / "records"), output_dir=str(folder / "out"), metric="samples_f1",
        sample_submission=str(folder / "sample_submission.csv"), **QUICK_CONFIG,
    )  # fmt: skip
    train(cfg)
    printed = capsys.readouterr().out
    assert re.search(r"valid samples_f1: [01]\.\d{4}", printed)
    assert "thresholds per class (best validation F1 each): [" in printed
    assert (folder / "out" / "fold0" / "thresholds.json").is_file()
    written = pd.read_csv(predict(cfg), dtype=str, keep_default_na=False)
    sample = pd.read_csv(folder / "sample_submission.csv", dtype=str)
    assert list(written.columns) == ["image", "labels"]
    assert written["image"].tolist() == sample["image"].tolist()
    for value in written["labels"]:  # one or more class names, each once
        assert value and set(value.split()) <= set(NAMES)
        assert len(value.split()) == len(set(value.split()))
    truth = [NAMES[(int(name[:4]) - 5000) // 3 % 3] for name in written["image"]]
    write_csv(
        folder / "solution.csv", ["image", "labels"], zip(written["image"], truth, strict=True)
    )
    scores = score_files(
        str(folder / "out" / "submission.csv"), str(folder / "solution.csv"), "image", "labels"
    )
    assert 0 <= scores.get("samples_f1", scores.get("accuracy", -1)) <= 1


def test_an_isic_style_binary_competition_reads_the_metadata_beside_each_image(tmp_path, capsys):
    """ISIC 2024's shape: isic_id,target with rare positives, scored by the partial AUC above
    80% sensitivity, with a table of metadata beside the images (test-metadata.csv for the
    test images, ids without their extension); every fold trained, and one probability per
    id in the sample's order. The images here carry nothing of the target and one column of
    the tables carries all of it: the held-out ranking is right only if each image is
    joined to its own row, in training and in prediction alike."""
    labels = ["0"] * 30 + ["1"] * 8
    folder = competition(tmp_path, labels, ["isic_id", "target"], ["isic_id", "target"])
    rng = np.random.default_rng(1)
    for path in [*(folder / "train_images").iterdir(), *(folder / "test_images").iterdir()]:
        image(path, ["healthy"], rng)  # one look for both classes
    site = {"0": "lower extremity", "1": "posterior torso"}
    names = ids(folder / "train.csv", "isic_id")
    header = ["isic_id", "target", "age_approx", "anatom_site_general", "iddx_full"]
    rows = [
        (name, label, 40 + number % 7, site[label], "Malignant" if label == "1" else "Benign")
        for number, (name, label) in enumerate(zip(names, labels, strict=True))
    ]
    write_csv(folder / "train.csv", header, rows)
    order = pd.read_csv(folder / "sample_submission.csv", dtype=str)["isic_id"]
    truth = [int(name[:4]) % 2 for name in order]  # unlike the test images' looks
    write_csv(folder / "sample_submission.csv", ["isic_id", "target"], [(i, 0.5) for i in order])
    tests = [
        (name.removesuffix(".jpg"), 40 + number % 7, site[str(t)])
        for number, (name, t) in enumerate(zip(order, truth, strict=True))
    ]
    write_csv(folder / "test-metadata.csv", ["isic_id", "age_approx", "anatom_site_general"], tests)
    write_records(
        Config(folds=2, num_classes=2), str(folder / "train_images"), str(folder / "train.csv"),
        str(folder / "records"), test_images=str(folder / "test_images"),
        test_csv=str(folder / "test-metadata.csv"),
    )  # fmt: skip
    cfg = Config(
        data_dir=str(folder / "records"), output_dir=str(folder / "out"), metric="pauc",
        num_classes=2, fold="all", sample_submission=str(folder / "sample_submission.csv"),
        **{**QUICK_CONFIG, "epochs": 8},
    )  # fmt: skip
    train(cfg)
    printed = capsys.readouterr().out
    assert "metadata: age_approx, anatom_site_general from " in printed
    assert "left out: iddx_full (only the training table has it)" in printed
    assert re.search(r"out-of-fold pauc: 0\.\d{4}", printed)
    written = pd.read_csv(predict(cfg), dtype={"isic_id": str})
    assert list(written.columns) == ["isic_id", "target"]
    assert written["isic_id"].tolist() == order.tolist()
    assert written["target"].between(0, 1).all()
    write_csv(folder / "solution.csv", ["isic_id", "target"], zip(order, truth, strict=True))
    files = str(folder / "out" / "submission.csv"), str(folder / "solution.csv")
    scores = score_files(*files, "isic_id", "target", cfg)
    assert set(scores) == {"roc_auc", "pauc"} and scores["roc_auc"] == 1.0, scores


def test_an_ordinal_competition_trains_on_qwk_and_submits_grades(tmp_path, capsys):
    """APTOS 2019's shape: id_code,diagnosis with grades in order, scored by quadratic weighted
    kappa; the submission holds grades."""
    labels = [grade for grade in "012" for _ in range(12)]
    folder = competition(tmp_path, labels, ["id_code", "diagnosis"], ["id_code", "diagnosis"])
    write_records(
        Config(folds=2), str(folder / "train_images"), str(folder / "train.csv"),
        str(folder / "records"), test_images=str(folder / "test_images"),
    )  # fmt: skip
    # An earlier run's cuts, which this run must replace or remove, never keep.
    (folder / "out" / "fold0").mkdir(parents=True)
    (folder / "out" / "fold0" / "grade_cuts.json").write_text('{"grade_cuts": [1.9, 2.0]}')
    cfg = Config(
        data_dir=str(folder / "records"), output_dir=str(folder / "out"), metric="qwk",
        num_classes=3, sample_submission=str(folder / "sample_submission.csv"), **QUICK_CONFIG,
    )  # fmt: skip
    train(cfg)
    printed = capsys.readouterr().out
    assert re.search(r"valid qwk: -?[01]\.\d{4}", printed)
    kept = folder / "out" / "fold0" / "grade_cuts.json"
    if "cuts between grades (best validation kappa): [" in printed:
        cuts = json.loads(kept.read_text())["grade_cuts"]
        assert len(cuts) == 2 and 0 <= cuts[0] <= cuts[1] <= 2 and cuts != [1.9, 2.0]
    else:
        assert "grades: the most probable; cuts" in printed and not kept.exists()
    written = pd.read_csv(predict(cfg), dtype=str)
    assert list(written.columns) == ["id_code", "diagnosis"]
    assert set(written["diagnosis"]) <= {"0", "1", "2"}


def screening(folder):
    """RSNA screening's shape: two views (CC, MLO) of each side of each patient, one truth per
    side (cancer); the test table gives each image its side's prediction_id, which the sample
    asks for. Images are striped in their side's colour, but for one test side whose views
    disagree: its CC view looks like cancer, its MLO view does not."""
    rng = np.random.default_rng(2)
    for kind in ("train_images", "test_images"):
        (folder / kind).mkdir(parents=True)
    rows, tests, number = [], [], 1000
    for kind, patients in (("train", 14), ("test", 4)):
        for patient in range(patients):
            for side in "LR":
                cancer = (patient + (side == "R")) % 2
                for view in ("CC", "MLO"):
                    number += 1
                    seen = cancer if (kind, patient, side) != ("test", 0, "L") else view == "CC"
                    image(folder / f"{kind}_images" / f"{number}.jpg", [NAMES[seen]], rng)
                    if kind == "train":
                        rows.append((f"p{patient:02d}", number, side, view, cancer))
                    else:
                        tests.append((f"t{patient}", number, side, view, f"t{patient}_{side}"))
    columns = ["patient_id", "image_id", "laterality", "view"]
    write_csv(folder / "train.csv", [*columns, "cancer"], rows)
    write_csv(folder / "test.csv", [*columns, "prediction_id"], tests)
    order = ["t2_R", "t0_L", "t3_L", "t1_R", "t0_R", "t2_L", "t1_L", "t3_R"]
    write_csv(
        folder / "sample_submission.csv", ["prediction_id", "cancer"], [(i, 0) for i in order]
    )
    return order


def test_a_screening_competition_answers_each_side_from_its_views(tmp_path, capsys):
    """Several images, one answer: `predict` gathers each side's two views to the sample's
    prediction_id (the test table's column of that name, or the columns that make it), by
    their mean or, with --aggregate max, by the view that shows it most; out of fold, the
    training table's patient_id and laterality gather the views alike."""
    order = screening(tmp_path)
    records = ["records", "--images", str(tmp_path / "train_images"), "--csv"]
    records += [str(tmp_path / "train.csv"), "--test-images", str(tmp_path / "test_images")]
    records += ["--label-column", "cancer", "--group-column", "patient_id", "--folds", "2"]
    records += ["--metadata-columns", ""]
    assert main([*records, "--output-dir", str(tmp_path / "records")]) == 0
    run = ["--data-dir", str(tmp_path / "records"), "--output-dir", str(tmp_path / "out")]
    run += [*shlex.split(QUICK), "--epochs", "4", "--metric", "roc_auc", "--no-flip"]
    answers = ["--answer-columns", "patient_id,laterality"]
    assert main(["train", *run, "--fold", "all", *answers]) == 0
    printed = capsys.readouterr().out
    assert "validation: 28 images, 14 answers (mean of 2 per answer)" in printed
    assert re.search(r"out-of-fold roc_auc: [01]\.\d{4} \(28 answers, ", printed)
    oof = pd.read_csv(tmp_path / "out" / "oof.csv", dtype=str)
    sides = {f"p{patient:02d}_{side}" for patient in range(14) for side in "LR"}
    assert sorted(oof["id"]) == sorted(sides)  # each side once, from the fold that held it
    tested = ["--sample-submission", str(tmp_path / "sample_submission.csv")]
    tested += ["--test-csv", str(tmp_path / "test.csv")]
    written = {}
    for how, flags in (("mean", answers), ("max", ["--aggregate", "max"])):
        assert main(["predict", *run, *tested, *flags]) == 0
        said = capsys.readouterr().out
        assert f"16 images, 8 answers ({how} of 2 per answer)" in said
        written[how] = pd.read_csv(tmp_path / "out" / "submission.csv", dtype={"cancer": float})
        assert written[how]["prediction_id"].tolist() == order  # a row per side, in order
        assert written[how]["cancer"].between(0, 1).all()
    mean, most = (written[how].set_index("prediction_id")["cancer"] for how in ("mean", "max"))
    assert (most >= mean - 1e-6).all()
    assert most["t0_L"] > mean["t0_L"] + 0.01  # its views disagree: max takes the one that shows it
    # A sample id no image answers stops predict naming it; images of an id the sample
    # lacks are named and left out.
    write_csv(tmp_path / "sample_submission.csv", ["prediction_id", "cancer"],
              [(key, 0) for key in ["t9_L", *order[1:]]])  # fmt: skip
    assert main(["predict", *run, *tested]) == 2
    said = capsys.readouterr().err
    assert "1 ids of the sample have no test image in " in said and "(such as 't9_L')" in said
    kept = pd.read_csv(tmp_path / "out" / "submission.csv", dtype={"cancer": float})
    pd.testing.assert_frame_equal(kept, written["max"])  # the one before, as it was
    write_csv(tmp_path / "sample_submission.csv", ["prediction_id", "cancer"],
              [(key, 0) for key in order[1:]])  # fmt: skip
    assert main(["predict", *run, *tested]) == 0
    assert "left out: the images of 1 answers the sample lacks (such as 't2_R')" in (
        capsys.readouterr().out
    )
    kept = pd.read_csv(tmp_path / "out" / "submission.csv", dtype=str)
    assert kept["prediction_id"].tolist() == order[1:]
    # Labels are gathered alike: each side's label is that of its views' mean probabilities.
    assert main(["predict", *run, *tested, "--submission", "labels"]) == 0
    labels = pd.read_csv(tmp_path / "out" / "submission.csv", dtype=str)
    gathered = pd.read_csv(
        tmp_path / "out" / "test_probabilities.csv", dtype={"prediction_id": str}
    )
    assert labels["prediction_id"].tolist() == gathered["prediction_id"].tolist() == order[1:]
    assert labels["cancer"].tolist() == [str(n) for n in gathered.iloc[:, 1:].to_numpy().argmax(1)]
