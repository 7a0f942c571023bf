"""k-fold on the demo as a competition ships it: Kaggle's own records (train, val and test
shards, no folds in them), records in three folds, every fold trained in turn, out-of-fold
scores, and a fold ensemble with flips."""

import dataclasses
import shutil

import numpy as np
import pandas as pd
import pytest
import tensorflow as tf
from builders import ids

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.data import records
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.stages.evaluate import evaluate
from {{ cookiecutter.package }}.runtime.stages.predict import predict
from {{ cookiecutter.package }}.runtime.stages.train import train
from {{ cookiecutter.package }}.tools.images_to_records import write_records


@pytest.mark.slow
def test_three_folds_score_out_of_fold_and_their_ensemble_with_flips_submits(
    demo_dir, tmp_path, capsys
):
    images = demo_dir / "images"
    write_records(
        Config(folds=3), str(images / "train"), str(images / "train.csv"),
        str(tmp_path / "records"), test_images=str(images / "test"),
    )  # fmt: skip
    run = Config(
        data_dir=str(tmp_path / "records"), output_dir=str(tmp_path / "out"), fold="all",
        image_size=32, backbone="small-cnn", weights="none", batch_size=32, epochs=1,
        steps_per_epoch=2, learning_rate=3e-3, flip=False,
        sample_submission=str(demo_dir / "sample_submission.csv"),
    )  # fmt: skip
    result = train(run)
    printed = capsys.readouterr().out
    for fold in range(3):
        assert f"\nfold {fold} macro_f1: " in printed
    out_of_fold = f"out-of-fold macro_f1: {result['out_of_fold']:.4f} (1437 images, "
    assert out_of_fold in printed
    oof = pd.read_csv(tmp_path / "out" / "oof.csv", dtype={"id": str})
    assert sorted(oof["id"]) == sorted(ids(images / "train.csv"))  # every record once
    assert sorted(oof["fold"].unique()) == [0, 1, 2]
    assert sorted(result["folds"]) == [0, 1, 2]

    submission = predict(dataclasses.replace(run, tta="flip"))
    averaged = capsys.readouterr().out
    assert "averaged 3 fold models, with flips: " in averaged
    assert all(f"fold{fold}/model.weights.h5" in averaged for fold in range(3))
    assert ids(submission) == ids(demo_dir / "sample_submission.csv")  # row for row
    # What a blend reads: each class's probability, averaged over folds and flips as submitted.
    kept = pd.read_csv(submission.with_name("test_probabilities.csv"), dtype={"id": str})
    assert kept["id"].tolist() == ids(demo_dir / "sample_submission.csv")
    columns = oof.columns[-10:].tolist()  # the class columns out-of-fold has, in class order
    assert columns[0] in ("p0", "p_zero") and kept.columns.tolist() == ["id", *columns]
    assert np.allclose(kept[columns].sum(axis=1), 1, atol=1e-4)
    labels = pd.read_csv(submission, dtype={"id": str})["label"].astype(int)
    assert (kept[columns].to_numpy().argmax(1) == labels).all()  # the labels submitted

    # Every fold's model on its own validation records, then all of them: train's out-of-fold.
    confusion, predicted = evaluate(dataclasses.replace(run, fold="all"))
    evaluated = capsys.readouterr().out
    for fold in range(3):
        assert f"\nfold {fold} macro_f1: " in evaluated
    assert f"\nvalid macro_f1: {result['out_of_fold']:.4f}\n" in evaluated, evaluated
    assert confusion == tmp_path / "out" / "confusion.png" and confusion.exists()
    assert predicted == tmp_path / "out" / "predictions.png" and predicted.exists()

    # A fold model from an earlier run in more folds is refused, not averaged in.
    written = submission.read_bytes()
    (tmp_path / "out" / "fold7").mkdir()
    shutil.copy(tmp_path / "out" / "fold0" / "model.weights.h5", tmp_path / "out" / "fold7")
    with pytest.raises(UserError, match=r"fold7/model.weights.h5: trained on folds the current"):
        predict(run)
    assert submission.read_bytes() == written


@pytest.fixture(scope="module")
def two_folds(demo_dir, tmp_path_factory):
    """The demo's records in two folds, and a small run of them (a test gives its output)."""
    images, folder = demo_dir / "images", tmp_path_factory.mktemp("folds")
    write_records(
        Config(folds=2), str(images / "train"), str(images / "train.csv"), str(folder / "records")
    )
    return Config(
        data_dir=str(folder / "records"), image_size=32, backbone="small-cnn", weights="none",
        batch_size=32, epochs=1, steps_per_epoch=1,
    )  # fmt: skip


def test_doctor_names_the_fold_folders_train_writes_and_resumes_from(two_folds, tmp_path, capsys):
    """With records in folds, train checkpoints and writes into <output>/fold0/: doctor says
    so, rather than "no checkpoint in <output>/checkpoints" where train would resume."""
    from {{ cookiecutter.package }}.runtime.stages.doctor import doctor

    out = tmp_path / "out"
    doctor(dataclasses.replace(two_folds, output_dir=str(out)))
    printed = capsys.readouterr().out
    where = f"output: {out} (from Config.output_dir / --output-dir); train writes {out}/fold0\n"
    assert where in printed
    assert f"resume: no checkpoint in {out / 'fold0' / 'checkpoints'}:" in printed
    written = out / "fold0" / "model.weights.h5"
    assert f"trained weights: none yet; train writes {written}" in printed


def test_a_fold_folder_train_cannot_write_stops_doctor_as_it_stops_train(
    two_folds, tmp_path, no_model
):
    """A file where fold 0's folder goes: doctor finds what train would, naming that folder,
    where it used to check only <output>/checkpoints and say ready."""
    from {{ cookiecutter.package }}.runtime.stages.doctor import doctor

    out = tmp_path / "out"
    out.mkdir()
    (out / "fold0").write_text("my notes\n")
    run = dataclasses.replace(two_folds, output_dir=str(out), fold="all")
    message = (
        f"cannot write the output in {out / 'fold0' / 'checkpoints'}: {out / 'fold0'} is a file, "
        "not a folder; set Config.output_dir / --output-dir to a folder this run can write (in a "
        "Kaggle notebook: /kaggle/working)"
    )
    assert doctor(run) == [message]
    with pytest.raises(UserError) as caught:
        train(run)
    assert str(caught.value) == message
    assert (out / "fold0").read_text() == "my notes\n"


def record_ids(pattern: str) -> list[str]:
    """The ids of the records in the files `pattern` matches."""
    spec = {"id": tf.io.FixedLenFeature([], tf.string)}
    records = tf.data.TFRecordDataset(sorted(tf.io.gfile.glob(pattern)))
    return [tf.io.parse_single_example(r, spec)["id"].numpy().decode() for r in records]


@pytest.mark.slow
def test_kaggles_own_records_train_five_folds_pooled_and_predict_averages_them(
    demo_dir, tmp_path, capsys
):
    """The demo's shards as Kaggle ships a TFRecords competition (train/, val/, test/, no folds
    in them): `--fold all` trains five models over the train and val records pooled, each
    record validated once; `--fold 2` trains fold 2 of the same split; no fold asked, the
    train files train and the val files validate, as given."""
    out = tmp_path / "out"
    flags = ["--preset", "demo", "--data-dir", str(demo_dir), "--steps-per-epoch", "2"]
    flags += ["--epochs", "1", "--output-dir", str(out)]
    assert main(["train", *flags, "--fold", "all"]) == 0
    printed = capsys.readouterr().out
    said = (
        "records: 5 folds over the 1,437 records of 6 files (4 train, 2 val), stratified by "
        "class: each fold validates on 287 or 288 records; fold 0 validates"
    )
    assert said in printed
    assert sorted(path.parent.name for path in out.glob("fold*/model.weights.h5")) == [
        f"fold{fold}" for fold in range(5)
    ]
    labelled = record_ids(f"{demo_dir}/train/*.tfrec") + record_ids(f"{demo_dir}/val/*.tfrec")
    oof = pd.read_csv(out / "oof.csv", dtype={"id": str})
    assert sorted(oof["id"]) == sorted(labelled)  # every train and val record, once
    assert sorted(oof["fold"].unique()) == [0, 1, 2, 3, 4]

    assert main(["predict", *flags]) == 0
    assert "averaged 5 fold models" in capsys.readouterr().out
    assert ids(out / "submission.csv") == ids(demo_dir / "sample_submission.csv")

    again = tmp_path / "again"
    assert main(["train", *flags, "--output-dir", str(again), "--fold", "2"]) == 0
    assert "; fold 2 validates" in capsys.readouterr().out
    fold2 = pd.read_csv(again / "fold2" / "valid.csv", dtype={"id": str})
    assert sorted(fold2["id"]) == sorted(oof.loc[oof["fold"] == 2, "id"])  # the same split
    assert not (again / "fold0").exists()

    given = tmp_path / "given"
    assert main(["train", *flags, "--output-dir", str(given)]) == 0
    assert "\nrecords: " not in capsys.readouterr().out
    valid = pd.read_csv(given / "valid.csv", dtype={"id": str})
    assert sorted(valid["id"]) == sorted(record_ids(f"{demo_dir}/val/*.tfrec"))
    assert not list(given.glob("fold*"))


@pytest.mark.quick
def test_enough_files_are_dealt_whole_into_folds_of_as_many_records():
    """Kaggle's flowers ship 16 train and 16 val files (798 and 232 records): five folds of
    whole files, six or seven each, none far from a fifth of the records."""
    train = [f"train/{n:02d}-512x512-798.tfrec" for n in range(16)]
    valid = [f"val/{n:02d}-512x512-232.tfrec" for n in range(16)]
    pooled = records.pool_folds(train, valid, [798] * 16 + [232] * 16, None, 5, 42)
    assert pooled.describe() == (
        "5 folds over 32 files (16 train, 16 val): each fold validates on 6 or 7 files"
    )
    held = [pooled.records(fold, True) for fold in range(5)]
    assert sum(held) == 16 * (798 + 232) and max(held) - min(held) <= 798
    for fold in range(5):  # a fold trains on every file it does not validate on
        assert sorted(pooled.files_of(fold, True) + pooled.files_of(fold, False)) == sorted(
            train + valid
        )
    assert records.pool_folds(train, valid, [798] * 16 + [232] * 16, None, 5, 42) == pooled


@pytest.mark.quick
def test_fewer_labelled_records_than_folds_is_refused_with_the_counts_and_the_flag():
    with pytest.raises(UserError) as caught:
        records.pool_folds(["train/a.tfrec"], ["val/b.tfrec"], [2, 1], lambda files: None, 5, 42)
    assert str(caught.value) == (
        "Config.fold / --fold: Config.folds / --folds 5 folds need at least 5 labelled records, "
        "and the train and val files (2) hold 3; give --folds 3 or fewer, or leave "
        "Config.fold / --fold out to train on the train files and validate on the val files "
        "as given"
    )
