"""k-fold on the demo as a competition ships it: images and a CSV, records in three folds,
every fold trained in turn, out-of-fold scores, and a fold ensemble with flips."""

import dataclasses
import shutil

import numpy as np
import pandas as pd
import pytest
from builders import ids

from {{ cookiecutter.package }}.runtime.config import Config
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
    out_of_fold = f"out-of-fold macro_f1: {result['out_of_fold']:.4f} (1437 records, "
    assert out_of_fold in printed
    oof = pd.read_csv(tmp_path / "out" / "oof.csv", dtype={"id": str})
    assert sorted(oof["id"]) == sorted(ids(images / "train.csv"))  # every record once
    assert sorted(oof["fold"].unique()) == [0, 1, 2]
    assert sorted(result["folds"]) == [0, 1, 2]

    submission = predict(dataclasses.replace(run, tta=True))
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
