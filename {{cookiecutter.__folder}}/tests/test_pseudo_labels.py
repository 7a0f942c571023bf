"""Pseudo-labels: `pseudo` keeps each fold model's test predictions at a confidence, and a run
trained on them adds a fold's own rows to that fold's training alone, never to validation,
so its out-of-fold score is made without them. Each refusal is a row of test_bad_inputs.py."""

import dataclasses
import shutil

import numpy as np
import pandas as pd

from {{ cookiecutter.package }}.__main__ import main


def predicted(blendable, tmp_path):
    """A copy of a blendable run, predicted again: each fold model's test probabilities too."""
    run = shutil.copytree(blendable.runs[0], tmp_path / "run")
    flags = ["--data-dir", str(blendable.data), "--folds", "2", "--image-size", "32"]
    flags += ["--backbone", "small-cnn", "--weights", "none", "--batch-size", "8"]
    assert main(["predict", *flags, "--fold", "all", "--output-dir", str(run)]) == 0
    return run, flags


def test_pseudo_keeps_each_fold_models_confident_rows_and_a_run_trains_on_its_own_folds(
    blendable, tmp_path, capsys
):
    from {{ cookiecutter.package }}.runtime.config import Config
    from {{ cookiecutter.package }}.runtime.data import pipeline
    from {{ cookiecutter.package }}.runtime.stages import preflight, training_checks
    from {{ cookiecutter.package }}.runtime.stages.run import start

    run, flags = predicted(blendable, tmp_path)
    assert main(["pseudo", str(run), "--min-confidence", "0.4"]) == 0
    pseudo = pd.read_csv(run / "pseudo_labels.csv", dtype={"image_id": str, "fold": str})
    for fold in ("0", "1"):  # each fold's rows: its own model's, where confident
        own = pd.read_csv(run / f"fold{fold}" / "test_probabilities.csv", dtype={"image_id": str})
        confident = own[own[["p0", "p1", "p2"]].max(axis=1) >= 0.4].reset_index(drop=True)
        rows = pseudo[pseudo["fold"] == fold].drop(columns="fold").reset_index(drop=True)
        pd.testing.assert_frame_equal(rows, confident, atol=1e-4, check_dtype=False)
    assert (pseudo[["p0", "p1", "p2"]].max(axis=1) >= 0.4).all()

    cfg = Config(
        data_dir=str(blendable.data), output_dir=str(tmp_path / "next"), folds=2, fold="1",
        image_size=32, backbone="small-cnn", weights="none", batch_size=4, epochs=1,
        pseudo_labels=str(run / "pseudo_labels.csv"), pseudo_weight=0.25,
    )  # fmt: skip
    started = start(cfg)  # as train starts it: with what the CSV says, its classes
    checked = preflight.ready(started, "train", training_checks.CHECKS)
    ours = pseudo[pseudo["fold"] == "1"]
    added = checked.pseudo.value
    assert added.ids == ours["image_id"].tolist()
    rows = ours[["p0", "p1", "p2"]].to_numpy()
    np.testing.assert_allclose(added.rows, rows / rows.sum(1, keepdims=True), atol=1e-4)
    # Ids as a sample may spell them, without the extension: the same test images.
    unsuffixed = pseudo.assign(image_id=pseudo["image_id"].str.removesuffix(".jpg"))
    unsuffixed.to_csv(tmp_path / "unsuffixed.csv", index=False)
    again = dataclasses.replace(cfg, pseudo_labels=str(tmp_path / "unsuffixed.csv"))
    again_run = start(again, accelerator=started.accelerator)
    again_checked = preflight.ready(again_run, "train", training_checks.CHECKS)
    assert again_checked.pseudo.value.ids == added.ids
    training = checked.train.value.records
    assert checked.plan.value.steps_per_epoch == (training + len(ours)) // 4
    files = checked.train.value.files
    batches = pipeline.for_training(started.data, files, started.cfg, 4, pseudo=added)
    seen = [(label, weight) for _, label, weight in batches.take(40).as_numpy_iterator()]
    labels = np.concatenate([label for label, _ in seen])
    weights = np.concatenate([weight for _, weight in seen])
    assert labels.shape[1] == 3 and set(np.unique(weights)) == {0.25, 1.0}
    soft = labels[weights == 0.25]  # the test images: their soft labels, as the file has them
    assert min(np.abs(soft[:, None] - added.rows[None]).sum(-1).min(1)) < 1e-5
    assert set(labels[weights == 1.0].max(1)) == {1.0}  # the training images: one-hot

    trained = ["--output-dir", str(tmp_path / "next"), "--epochs", "1", "--fold", "all"]
    pseudo_flags = ["--pseudo-labels", str(run / "pseudo_labels.csv")]
    assert main(["train", *flags, *trained, *pseudo_flags]) == 0
    printed = capsys.readouterr().out
    assert "test images added to training, each weighing 1.0" in printed
    assert "fold 0's model's" in printed and "fold 1's model's" in printed
    oof = pd.read_csv(tmp_path / "next" / "oof.csv", dtype={"id": str})
    train_ids = pd.read_csv(blendable.data / "train.csv", dtype=str)["image_id"]
    assert sorted(oof["id"]) == sorted(train_ids)  # validated on training images alone


def test_a_run_joining_metadata_trains_on_test_images_with_their_own_rows(
    blendable, tmp_path, capsys
):
    """A run whose head joins a table to each image (train.csv's size here) trains on the
    pseudo-labeled test images with their rows of the test table (--test-csv), encoded as the
    training rows are: each image beside its own metadata, in the pipeline and end to end."""
    from {{ cookiecutter.package }}.runtime.config import Config
    from {{ cookiecutter.package }}.runtime.data import metadata, pipeline
    from {{ cookiecutter.package }}.runtime.stages import preflight, training_checks
    from {{ cookiecutter.package }}.runtime.stages.run import start

    data = shutil.copytree(blendable.data, tmp_path / "data")
    train = pd.read_csv(data / "train.csv", dtype=str)
    train["size"] = np.arange(len(train)) % 30  # training sizes 0 to 29, test sizes 100 up
    train.to_csv(data / "train.csv", index=False)
    tests = pd.read_csv(data / "sample_submission.csv", dtype=str)["image_id"]
    sizes = pd.DataFrame({"image_id": tests, "size": 100 + np.arange(len(tests))})
    sizes.to_csv(data / "test.csv", index=False)
    probabilities = np.random.default_rng(0).dirichlet([1, 1, 1], len(tests))
    soft = pd.DataFrame(probabilities, columns=["p0", "p1", "p2"]).assign(image_id=tests)
    soft[["image_id", "p0", "p1", "p2"]].to_csv(tmp_path / "soft.csv", index=False)

    cfg = Config(
        data_dir=str(data), test_csv=str(data / "test.csv"), output_dir=str(tmp_path / "out"),
        folds=2, fold="0", image_size=32, backbone="small-cnn", weights="none", batch_size=4,
        epochs=1, steps_per_epoch=2, pseudo_labels=str(tmp_path / "soft.csv"), pseudo_weight=0.5,
    )  # fmt: skip
    run = start(cfg)  # as train starts it: its data read
    checked = preflight.ready(run, "train", training_checks.CHECKS)
    added = checked.pseudo.value
    table = metadata.for_training(run.cfg, run.places, run.data)
    joined = metadata.with_test_rows(run.cfg, run.places, run.data, table, added.ids)
    encoded = dict(zip(joined.ids, map(tuple, joined.values.round(5)), strict=True))
    tested = {encoded[key] for key in added.ids}
    trained = {encoded[key] for key in table.ids}
    batches = pipeline.for_training(
        run.data, checked.train.value.files, run.cfg, 4, metadata=joined, pseudo=added
    )
    seen = {0.5: set(), 1.0: set()}  # the rows of the test images, and of the training ones
    for inputs, _, weight in batches.take(30).as_numpy_iterator():
        for row, w in zip(inputs["metadata"].round(5), weight, strict=True):
            seen[float(w)].add(tuple(row))
    assert seen[0.5] and seen[0.5] <= tested and seen[1.0] and seen[1.0] <= trained

    flags = ["--data-dir", str(data), "--test-csv", str(data / "test.csv"), "--folds", "2"]
    flags += ["--image-size", "32", "--backbone", "small-cnn", "--weights", "none"]
    flags += ["--epochs", "1", "--steps-per-epoch", "2", "--batch-size", "4"]
    flags += ["--pseudo-labels", str(tmp_path / "soft.csv"), "--output-dir", str(tmp_path / "out")]
    assert main(["train", *flags]) == 0
    printed = capsys.readouterr().out
    assert f"pseudo-labels: {len(tests)} test images added to training" in printed
    assert "metadata: size from " in printed
