"""The checks only a training run needs, besides preflight.py's. train, preview and doctor pass
them to preflight.check; a notebook that only predicts carries none of them. A feature's module
is used only where the check finds it on: a notebook whose run leaves it off carries none."""

from __future__ import annotations

from ..data import corrections, metadata, pipeline, pseudo_labels, scan
from ..errors import UserError, named
from ..learning import backbones, plan
from ..outputs import checkpoints
from ..platform import versions
from .preflight import Check, Preflight, Result, train_runs


def table(p: Preflight) -> Result | None:
    """The table beside each image the run joins to it: its columns, those left out and why."""
    cfg, data = p.cfg, p.run.data
    if p.manifest is None:
        return None  # the data did not read: said already
    if not data.uses_metadata:
        return Result("")
    read = metadata.found(cfg, p.run.places, data)
    if read is None:
        return Result("")
    left_out = metadata.left_out_line(read.left_out)
    line = f"metadata: {', '.join(read.columns)} from {read.where}"
    return Result(line + (f"; left out: {left_out}" if left_out else ""), read)


def label_corrections(p: Preflight) -> Result[corrections.Corrections | None] | None:
    """Config.drop_ids and Config.relabel read, and each id found among the labeled images."""
    cfg = p.cfg
    if not (cfg.drop_ids or cfg.relabel):
        return Result("", None)
    train = p.train.value if p.train else None
    if train is None:
        return None  # no training files, or their problem is said already
    if not train.ids:
        raise UserError(
            f"{named('drop_ids')} and {named('relabel')} name images by id, and the training "
            f"data carries none ({named('id_key')}); write records with ids (`records` does)"
        )
    valid = p.splits.get("valid")
    labeled = {*train.ids, *(valid.ids if valid else [])}
    made = corrections.read(cfg, p.run.places)
    return Result(corrections.checked(p.run.places, made, train.ids, labeled), made)


def pseudo(p: Preflight) -> Result[pseudo_labels.PseudoLabels | None] | None:
    """Config.pseudo_labels: this fold's rows, each id found among the test images."""
    cfg, data, places = p.cfg, p.run.data, p.run.places
    if not cfg.pseudo_labels:
        return Result("", None)
    if p.manifest is None:
        return None  # the data's problem is said already
    if not cfg.test_files and data.tests_from != "images":
        raise UserError(
            f"{named('pseudo_labels')}: the run reads no test set ({named('test_files')})"
        )
    alongside = training_images(p)
    if alongside is None:
        return None  # said already
    test = data.test.split("test_files", False)
    made, line = pseudo_labels.read(cfg, places, test.ids, test.files, alongside)
    if data.uses_metadata and made:  # each test image trained on joins its test table's row
        read = metadata.found(cfg, places, data)
        if read is not None:
            spec = metadata.fitted(read.table, read.columns)
            metadata.for_test(cfg, places, data, [spec], made.ids, metadata.PSEUDO_WHO)
    return Result(line, made)


def training_images(p: Preflight) -> int | None:
    """The training images a pass, less those --drop-ids leaves out; None after a problem."""
    train, fixed = p.splits.get("train"), p.corrections
    if train is None or fixed is None:
        return None
    return fixed.value.training(train.ids) if fixed.value else train.records


def plan_of_run(p: Preflight) -> Result[plan.Plan] | None:
    records = training_images(p)
    if records is None or p.pseudo is None:
        return None  # no training files, or their problem is said already
    added = len(p.pseudo.value.ids) if p.pseudo.value else 0  # test images trained on too
    made = plan.make(p.cfg, p.run.accelerator, records + added)
    return Result(made.describe(), made)


def skip(p: Preflight) -> Result[frozenset[str]]:
    """With --bad-records skip, decode every training image now and leave the bad ones out."""
    train = p.train.value if p.train and p.cfg.bad_records == "skip" else None
    shards = p.run.data.train.scanned(train.files, True) if train else None
    if shards is None:  # nothing to skip, or a TFDS set, whose images TFDS checked preparing it
        return Result("", frozenset())
    bad = [shard for shard in shards if shard.bad]
    skipped = scan.skipped(shards)
    line = f"bad records: {len(skipped)} in {len(bad)} shards, left out of training"
    return Result(line + "".join(f"\n  {shard.describe()}" for shard in bad), skipped)


def batch(p: Preflight) -> Result | None:
    """Built, not read: its shapes are known at once. XLA compiles only static shapes."""
    if p.plan is None:
        return None
    augmentations = pipeline.host_augmentations(p.cfg)  # looked up now: the cell's edit too
    training = pipeline.for_training(
        p.run.data, p.train.value.files, p.cfg, p.plan.value.global_batch,
        p.run.accelerator.image_dtype, augmentations=augmentations,
    )  # fmt: skip
    pipeline.check_static(training, "train_files")
    return Result(f"train batch: {pipeline.describe_spec(training.element_spec)}")


def weights(p: Preflight) -> Result[backbones.Backbone] | None:
    """Load the backbone's weights as train will (and reuses): a missing preset fails now."""
    if versions.unbuildable(p.cfg.backbone):
        return None  # the packages check said why
    precision = p.plan.value.precision if p.plan else "float32"
    with p.run.accelerator.scope():  # a TensorFlow strategy's variables are made in its scope
        backbone = backbones.load(p.cfg, precision)
    return Result(f"weights: {p.cfg.backbone}, {backbone.source}", backbone)


def resume(p: Preflight) -> Result | None:
    """Where train starts; with records in folds, each fold resumes from its own folder."""
    if p.plan is None:
        return None
    planned = p.plan.value
    resumed = [checkpoints.check_resumable(run.cfg, run.places, planned) for run in train_runs(p)]
    return Result("resume: " + "; ".join(resumed))


TRAINING = ("train", "preview", "doctor")
CHECKS = (  # in the order doctor prints them, after the test split and the sample submission
    Check(table, "metadata", ("train", "doctor")),
    Check(label_corrections, "label corrections", TRAINING, keep="corrections"),
    Check(pseudo, "pseudo-labels", TRAINING, keep="pseudo"),
    Check(plan_of_run, "steps per epoch", TRAINING, keep="plan"),
    Check(skip, "bad records", ("train", "doctor"), keep="skip"),
    Check(batch, "train batch", ("doctor",)),
    Check(weights, "weights", ("train", "doctor"), keep="weights"),
    Check(resume, "resume", ("train", "doctor"), keep="resume"),
)
