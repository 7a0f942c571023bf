"""The label audit and the corrections it leads to: `audit` ranks the training labels most
likely wrong first, from out-of-fold predictions; `train --drop-ids` and `--relabel` train
without them, or with other labels, and leave validation and the data as they were. Each
refusal is a row of test_bad_inputs.py."""

import shutil

import numpy as np
import pandas as pd

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.stages.audit import audited
from {{ cookiecutter.package }}.runtime.stages.run import start


def test_the_audit_ranks_labels_the_models_contradict_first():
    """Of 300 images in 3 classes, the 15 whose label was changed, and whose out-of-fold
    probabilities still point at their true class, come first; a hard image that no other
    class claims (its own leads, at less than the usual confidence) is no suspect."""
    rng = np.random.default_rng(0)
    truth = np.repeat(np.arange(3), 100)
    probabilities = rng.dirichlet([1, 1, 1], len(truth)) * 0.4
    probabilities[np.arange(len(truth)), truth] += 0.6  # the models learned the true class
    given = truth.copy()
    flipped = rng.choice(len(truth), 15, replace=False)
    given[flipped] = (truth[flipped] + rng.integers(1, 3, 15)) % 3
    hard = np.setdiff1d(np.arange(len(truth)), flipped)[0]
    probabilities[hard] = 0.275
    probabilities[hard, truth[hard]] = 0.45  # its class leads, below the class's threshold
    table = pd.DataFrame(probabilities, columns=["p0", "p1", "p2"])
    table.insert(0, "predicted", probabilities.argmax(1).astype(str))
    table.insert(0, "label", given.astype(str))
    table.insert(0, "fold", np.arange(len(truth)) % 5)
    table.insert(0, "id", [f"img{n:03d}" for n in range(len(truth))])

    audit = audited(table, {"num_classes": 3})

    changed = {f"img{n:03d}" for n in flipped}
    assert set(audit["id"][:15]) == changed
    # A suspect is an image another class claims: not every changed one, never another.
    assert set(audit["id"][audit["suspect"]]) <= changed
    assert audit["suspect"].sum() > len(flipped) / 2
    first = audit.iloc[0]
    number = int(first["id"][3:])
    assert (first["given_label"], first["suggested_label"]) == (given[number], truth[number])
    assert not audit.set_index("id").loc[f"img{hard:03d}", "suspect"]
    assert sorted(audit["id"]) == sorted(table["id"])  # every image, once


def test_audit_of_a_fold_all_run_writes_every_image_and_pictures_its_suspects(
    blendable, tmp_path, capsys
):
    run = shutil.copytree(blendable.runs[0], tmp_path / "run")
    assert main(["audit", str(run), "--data-dir", str(blendable.data)]) == 0
    printed = capsys.readouterr().out

    oof = pd.read_csv(run / "oof.csv", dtype=str)
    audit = pd.read_csv(run / "label_audit.csv", dtype={"id": str, "given_label": str})
    assert sorted(audit["id"]) == sorted(oof["id"])
    # The most suspicious first: the given label's probability against its class's threshold.
    assert (audit["p_given"] / audit["given_threshold"]).is_monotonic_increasing
    given = oof.set_index("id")["label"]  # the classes are numbers here
    assert (audit.set_index("id")["given_label"] == given.loc[audit["id"]]).all()
    suspects = int(audit["suspect"].sum())
    assert f"{suspects} of {len(oof)} training images" in printed
    assert suspects  # two steps of training leave many: the file below is written
    assert (run / "label_audit.png").stat().st_size > 0
    # Its first rows, as many as it counts suspects: what --drop-ids and --relabel take as
    # they are, in a notebook as in a shell.
    first = run / "likely_wrong.csv"
    assert f"to train without them, --drop-ids {first} (or with the models' labels" in printed
    likely = pd.read_csv(first, dtype={"id": str, "given_label": str})
    pd.testing.assert_frame_equal(likely, audit.head(suspects))
    from {{ cookiecutter.package }}.runtime.config import Config
    from {{ cookiecutter.package }}.runtime.data import corrections

    def read(cfg: Config) -> corrections.Corrections:  # as train reads them where it starts
        return corrections.read(cfg, start(cfg, on_accelerator=False, read=False).places)

    dropped = read(Config(drop_ids=str(first))).dropped
    relabeled = read(Config(relabel=str(first))).relabeled  # classes by number
    assert dropped == set(likely["id"]) == set(relabeled)
    suggested = likely["suggested_label"].astype(int)  # the classes are numbers here
    assert [relabeled[key] for key in likely["id"]] == suggested.tolist()


def test_dropped_and_relabeled_images_train_so_and_validate_as_given(blendable, tmp_path, capsys):
    """Every training image of class 2 left out and every one of class 1 relabeled 0: the
    batches train holds only class 0, one step fewer a pass; validation keeps its labels."""
    from {{ cookiecutter.package }}.runtime.config import Config
    from {{ cookiecutter.package }}.runtime.data import pipeline
    from {{ cookiecutter.package }}.runtime.stages import preflight, training_checks

    rows = pd.read_csv(blendable.data / "train.csv", dtype=str)
    folds = pd.read_csv(blendable.runs[0] / "fold0" / "folds.csv", dtype=str)
    training = set(folds["id"][folds["fold"] != "0"])
    (tmp_path / "drop.csv").write_text(
        "image_id\n" + "".join(f"{key}\n" for key in rows["image_id"][rows["label"] == "2"])
    )
    relabeled = rows[rows["label"] == "1"].assign(label="0")
    relabeled.to_csv(tmp_path / "relabel.csv", index=False)
    cfg = Config(
        data_dir=str(blendable.data), output_dir=str(tmp_path / "out"), folds=2, fold="0",
        image_size=32, backbone="small-cnn", weights="none", batch_size=4, epochs=1,
        drop_ids=str(tmp_path / "drop.csv"),
        relabel=str(tmp_path / "relabel.csv"),
    )  # fmt: skip
    run = start(cfg)  # as train starts it: with what the CSV says, its classes
    checked = preflight.ready(run, "train", training_checks.CHECKS)
    dropped = len(training & set(rows["image_id"][rows["label"] == "2"]))
    kept = len(training) - dropped
    line = f"{dropped} of {len(training)} training images left out"
    assert line in checked.corrections.line
    assert checked.plan.value.steps_per_epoch == kept // 4
    batches = pipeline.for_training(
        run.data, checked.train.value.files, run.cfg, 4, corrections=checked.corrections.value
    )
    labels = np.concatenate([label for _, label in batches.take(3 * kept // 4)])
    assert set(labels.tolist()) == {0}

    assert main(["train", "--output-dir", str(tmp_path / "out"), *flags_of(cfg)]) == 0
    assert line in capsys.readouterr().out
    valid = pd.read_csv(tmp_path / "out" / "fold0" / "valid.csv", dtype=str).set_index("id")
    given = rows.set_index("image_id")["label"].loc[valid.index]
    assert (valid["label"] == given).all()  # validation scores the labels as given
    assert set(valid["label"]) == {"0", "1", "2"}


def flags_of(cfg) -> list[str]:
    names = ("data_dir", "folds", "fold", "image_size", "backbone", "weights", "batch_size",
             "epochs", "drop_ids", "relabel")  # fmt: skip
    return [
        word for name in names for word in (f"--{name.replace('_', '-')}", str(getattr(cfg, name)))
    ]
