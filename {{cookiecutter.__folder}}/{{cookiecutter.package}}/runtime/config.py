"""Every knob of the project, in one dataclass of plain values.

In a notebook: `Config(epochs=3)`. From a shell: `python -m {{ cookiecutter.package }} train --epochs 3`
(each field a flag, `batch_size` is `--batch-size`). Where each value came from is kept beside
it, as a run's `sources` (stages/run.py): the data fills only the fields nobody gave.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import re
import typing

from .backbone_choices import BACKBONES, size_rule
from .errors import UserError, flag, named
from .scoring import METRICS, classes_scored, scores_classes
from .submission_shapes import SHAPES

# The competition this project was made for; see --competition to point it at another.
COMPETITION = {{ cookiecutter.competition | tojson }}
BACKENDS = ("tensorflow", "jax")
# Config.crop_area 0 (auto): random crops keeping this area, only from this image size up; below
# it they cost accuracy wherever measured (docs/recipe.md): a small image's crop blurs it.
CROP_FROM_SIZE = 128
CROP_AREA = 0.75
# Config.flip "auto": flips from this image size up, where images are photos (docs/recipe.md).
FLIP_FROM_SIZE = 128
AUTO = "auto"
PRECISIONS = ("auto", "float32", "mixed_bfloat16", "mixed_float16")
TTA_VIEWS = {"none": 1, "flip": 2, "eight": 8}  # Config.tta: the views predict averages


class Switch:
    """The kind of a field that is True, False or "auto" (decided from the data, and said)."""


def targets(cfg) -> str:
    """Each image's truth as the metric scores it: "classes", "values" or "shares" of classes."""
    return METRICS[cfg.metric].targets if cfg.metric in METRICS else "classes"


def knob(default, help, tuned=False, section="", checkpoint="recorded", rare=False):
    """A field of Config and its flag's help: the notebook's config cell shows `tuned` ones,
    --help leaves `rare` ones to --help-all, `checkpoint` is checkpoints.py's rule for it."""
    if checkpoint not in ("where", "recorded", "trained", "data", "model"):
        raise ValueError(f"knob: checkpoint {checkpoint!r} is none of checkpoints.py's rules")
    metadata = {"help": help, "tuned": tuned, "section": section, "checkpoint": checkpoint}
    return dataclasses.field(default=default, metadata={**metadata, "rare": rare})


@dataclasses.dataclass
class Config:
    # fmt: off
    competition: str = knob(COMPETITION, "Kaggle competition slug",
                            section="The competition and its files")
    data_dir: str = knob("", "data folder, gs:// bucket or tfds:NAME; empty: $DATA_DIR, Kaggle's "
                         "input, data/", tuned=True, checkpoint="where")
    train_files: str = knob({{ (cookiecutter.__records_prefix ~ "train/*.tfrec") | tojson }}, "training TFRecords",
                            checkpoint="data")
    valid_files: str = knob({{ (cookiecutter.__records_prefix ~ "val/*.tfrec") | tojson }},
                            "validation TFRecords, or none")
    test_files: str = knob({{ (cookiecutter.__records_prefix ~ "test/*.tfrec") | tojson }}, "test TFRecords")
    sample_submission: str = knob("sample_submission.csv", "the competition's sample; empty: none")
    # A competition's own images and CSV, read where the data folder holds no records (images.py).
    train_csv: str = knob("train.csv", "the training CSV: ids and labels", checkpoint="data")
    train_images: str = knob("train_images", "the training images' folder")
    test_images: str = knob("test_images", "the folder of test images; given, predict reads it "
                            "instead of test_files", checkpoint="where")
    group_column: str = knob("", "images and CSV: rows sharing it share a fold (patient)",
                             checkpoint="data")
    window: str = knob("auto", "DICOM images: auto (each file's own), CENTER,WIDTH, or lung, "
                       "bone...", rare=True, checkpoint="trained")
    series_depth: int = knob(0, "DICOM series: the depth of their folders under the images' "
                             "(0: none); the training CSV's", rare=True, checkpoint="trained")
    # The table beside each image (data/metadata.py), and the columns the model's head joins.
    test_csv: str = knob("", "the test images' table of metadata; empty: none", tuned=True,
                         checkpoint="where")
    metadata_columns: str = knob("auto", "columns beside each image; '': none", tuned=True,
                                 checkpoint="model")
    answer_columns: str = knob("", "several images per answer: the tables' columns naming an "
                               "image's answer, joined by _ (patient_id,laterality); empty: the "
                               "sample's id column, where the test table has it", rare=True)
    aggregate: str = knob("mean", "several images per answer: their predictions' mean, or max "
                          "(any image shows it)", rare=True)
    image_key: str = knob("image", "feature holding JPEG bytes", section="What the records hold",
                          checkpoint="data", rare=True)
    label_key: str = knob("class", "feature holding the int64 class", checkpoint="data", rare=True)
    id_key: str = knob("id", "feature holding the string id", rare=True)
    id_column: str = knob("id", "column of ids in the CSV; submission.csv's is the sample's first "
                          "(else this)")
    label_column: str = knob("label", "column of labels (values: a,b,c)")
    submission: str = knob("auto", "auto: as the sample's columns say; or " + ", ".join(SHAPES))
    class_names: str = knob("", "class names in class order, comma-separated; empty: the data's",
                            checkpoint="trained", rare=True)
    multi_label: bool = knob(False, "several labels per image (sigmoid, per-class thresholds)",
                             checkpoint="trained")
    keep_label_spellings: bool = knob(False, "labels that differ only in case or Unicode form "
                                      "(Daisy, daisy) as classes of their own; else refused",
                                      checkpoint="data", rare=True)
    image_size: int = knob({{ cookiecutter.image_size }}, "square size images are resized to", tuned=True,
                           section="The model", checkpoint="model")
    num_classes: int = knob({{ cookiecutter.num_classes }}, "number of classes (values: of targets)", checkpoint="model")
    backbone: str = knob({{ cookiecutter.backbone | tojson }}, "one of " + ", ".join(BACKBONES), tuned=True,
                         checkpoint="model")
    weights: str = knob("auto", "auto: imagenet where the backbone has ImageNet weights, else "
                        "none; or imagenet, none, a keras-hub preset folder, small-cnn's .h5")
    dropout: float = knob(0.2, "dropout before the classifier", tuned=True, checkpoint="trained")
    batch_size: int = knob(16, "images per replica per step", tuned=True, section="Training")
    epochs: int = knob(12, "training epochs", tuned=True)
    # Where in the learning-rate schedule an epoch starts: resuming must not move it.
    steps_per_epoch: int = knob(0, "steps per epoch; 0: one pass over the training records",
                                checkpoint="data")
    learning_rate: float = knob({{ "1e-3" if cookiecutter.backbone == "small-cnn" else "1e-4" }}, "peak learning rate for one replica; scaled by replicas",
                                tuned=True)
    warmup_epochs: float = knob(1.0, "epochs of linear warm-up before the cosine decay", tuned=True)
    folds: int = knob(5, "folds the training images are split into (1: none)", checkpoint="data")
    # Empty: data in folds validates on fold 0; records that carry none train on their train
    # files and validate on their val files, as given. A fold asked for pools those files.
    fold: str = knob("", "the fold that validates, or all; empty: fold 0 of data in folds, else "
                     "train/val", tuned=True)
    # Not Config.seed: runs of other seeds (the commonest ensemble) must hold the same folds,
    # or their out-of-fold predictions cannot be blended.
    fold_seed: int = knob(42, "seed of the folds the training images are split into; --seed "
                          "leaves them", checkpoint="data", rare=True)
    drop_ids: str = knob("", "CSV of ids: training images left out (audit's rows kept)",
                         checkpoint="data", rare=True)
    relabel: str = knob("", "CSV of id,label: training labels replaced", checkpoint="data",
                        rare=True)
    pseudo_labels: str = knob("", "CSV of test ids and soft labels (`pseudo`'s), added to "
                              "training", checkpoint="data", rare=True)
    pseudo_weight: float = knob(1.0, "a pseudo-labeled image's weight in the loss (a training "
                                "image's is 1)", checkpoint="data", rare=True)
    tta: str = knob("none", "predict: the views averaged: none; flip (the mirror image, photos); "
                    "eight (every flip and quarter turn: tiles, cells, satellite)", tuned=True)
    bad_records: str = knob("fail", "training images that do not decode: fail, or skip them",
                            rare=True)
    shuffle_buffer: int = knob(2048, "records shuffled together while training", rare=True)
    steps_per_execution: int = knob(0, "training steps per device call; 0: 32 on TPU, 1 "
                                    "elsewhere", rare=True)
    precision: str = knob("auto", "auto: bfloat16 on TPU, float16 on GPU, else float32", rare=True)
    metric: str = knob({{ cookiecutter.metric | tojson }}, "competition metric: " + ", ".join(METRICS))
    pauc_min_tpr: float = knob(0.8, "pauc: the true-positive rate it scores above",
                               checkpoint="trained", rare=True)
    map_k: int = knob(3, "map_at_k: classes ranked per image, as the submission lists",
                      checkpoint="trained", rare=True)
    target_weights: str = knob("", "weighted_r2: each target's weight, a,b,c; empty: equal",
                               checkpoint="trained", rare=True)
    output_dir: str = knob("", "checkpoints, submission.csv; empty: Kaggle's, output/",
                           checkpoint="where")
    trained_dir: str = knob("", "the trained run predict uses: a folder, or "
                            "kaggle:notebooks/OWNER/SLUG; empty: output", checkpoint="where")
    resume: bool = knob(True, "continue from the last finished epoch's checkpoint in output_dir",
                        checkpoint="where")
    seed: int = knob(42, "random seed")
    # The recipe: what each part buys on your data, `ablate` measures (model.py uses them all).
    flip: Switch = knob(AUTO, "random horizontal flips while training; auto: from "  # noqa: RUF009
                        f"{FLIP_FROM_SIZE} px (photos), none below", tuned=True,
                        section="The recipe")
    turns: bool = knob(False, "all eight orientations (tiles, cells)", tuned=True)
    crop_area: float = knob(0.0, "smallest area random crops keep; 1: none; 0: auto (none below "
                            f"{CROP_FROM_SIZE} px, else {CROP_AREA})", tuned=True)
    rand_augment: float = knob(0.0, "RandAugment's strength (0 to 1), two ops per image on the "
                               "host; 0: off (slow on a small host)", tuned=True)
    mixup: float = knob(0.0, "MixUp's alpha: two images blended, labels alike (0.2 is usual); "
                        "0: off", tuned=True)
    cutmix: float = knob(0.0, "CutMix's strength: a box pasted from another image, labels by "
                         "area; 0: off", tuned=True)
    mix_probability: float = knob(0.5, "share of batches MixUp or CutMix mix", tuned=True)
    label_smoothing: float = knob(0.1, "each label's share spread over others", tuned=True)
    # For a rare positive (ISIC 2024: 0.1%): its mistakes weigh as much as the common class's.
    class_balance: float = knob(0.0, "rare classes weigh (1/share)^N in the loss; 0: off",
                                tuned=True)
    weight_decay: float = knob(0.05, "AdamW's weight decay, norms and biases left alone; 0: Adam",
                               tuned=True)
    ema: float = knob(0.99, "momentum of the weights' average (warmed up), the weights kept; "
                      "0: off", tuned=True)
    backbone_learning_rate: float = knob(1.0, "the backbone's learning rate as a share of "
                                         "learning_rate, the head's; 1: the same", tuned=True)
    stochastic_depth: float = knob(0.1, "EfficientNet blocks skipped in training", tuned=True)
    backend: str = knob("", "tensorflow or jax; empty: $KERAS_BACKEND, else the hardware",
                        section="Where it runs", checkpoint="where", rare=True)
    simulate_replicas: int = knob(0, "rehearse N replicas on the CPU; 0: off", checkpoint="where",
                                  rare=True)
    compile_cache: bool = knob(True, "JAX: keep compiled steps in <output>/jax-cache, for later "
                               "folds, evaluate, predict", checkpoint="where", rare=True)
    coordinator: str = knob("", "host:port of process 0 (multi-process JAX); empty: none",
                            section="Several hosts (Cloud TPU pods)", checkpoint="where", rare=True)
    coordinator_timeout: int = knob(60, "seconds to wait for every process to join; then stop",
                                    checkpoint="where", rare=True)
    num_processes: int = knob(1, "processes training together (JAX); each runs the same command",
                              checkpoint="where", rare=True)
    process_id: int = knob(0, "this process's number, 0 to num_processes - 1", checkpoint="where",
                           rare=True)
    # fmt: on

    def __post_init__(self):
        if self.valid_files.strip().lower() == "none":  # as the help says it, and "" alike
            self.valid_files = ""
        if wrong := problems(self):
            raise UserError("; ".join(wrong))


def knobs() -> list[dataclasses.Field]:
    return list(dataclasses.fields(Config))


FIELDS = {field.name: field for field in knobs()}


def default(field: dataclasses.Field):
    return field.default  # every field's is a plain value (knob)


@functools.cache
def types() -> dict[str, type]:
    """Each field's type as a class, from the annotations' text."""
    return typing.get_type_hints(Config)


def sections() -> dict[str, list[dataclasses.Field]]:
    """The knobs by section title, in Config's order: the notebook shows them so."""
    grouped, title = {}, ""
    for field in knobs():
        title = field.metadata["section"] or title
        grouped.setdefault(title, []).append(field)
    return grouped


# Where each value came from, by field (a run's `sources`): "flag", "notebook", "preset NAME",
# or "manifest" (`filled`). A field not listed holds its default, or was set in a notebook later.
Sources = dict[str, str]


def notebook_sources(cfg: Config) -> Sources:
    """Where the values of a config made in a notebook came from: each that is not a default."""
    return {name: "notebook" for name in FIELDS if given(cfg, {}, name)}


def given(cfg: Config, sources: Sources, name: str, typed: bool = False) -> str:
    """Where the user gave this field ("flag", "notebook", "preset NAME"), or "". With `typed`,
    only a flag or the notebook: a preset's paths, as the defaults, lie in the data folder."""
    where = sources.get(name)
    if where is None:  # set after the config was made (`cfg.epochs = 3` in a later cell)
        where = "notebook" if getattr(cfg, name) != default(FIELDS[name]) else ""
    return "" if where == "manifest" or (typed and where.startswith("preset")) else where


def given_fields(cfg: Config, sources: Sources, typed: bool = False) -> frozenset[str]:
    """The fields the user gave (with `typed`, of FILE_FIELDS, typed where they run)."""
    names = FILE_FIELDS if typed else FIELDS
    return frozenset(name for name in names if given(cfg, sources, name, typed))


def came_from(cfg: Config, sources: Sources, name: str) -> str:
    where = given(cfg, sources, name)
    if where == "flag":
        return flag(name)
    return f"Config.{name}, {where}" if where else f"Config.{name}"


def filled(
    cfg: Config, sources: Sources, values: dict, where: str = "the data"
) -> tuple[Config, Sources]:
    """The config with what the data says for the fields the user did not give, and sources.
    Class names the user gave must be the data's, in its order: else a class is renamed."""
    theirs = names_in(values["class_names"]) if values.get("class_names") else []
    gave = given(cfg, sources, "class_names")
    if theirs and gave and names_in(cfg.class_names) != theirs:
        raise UserError(
            f"{named('class_names')} ({cfg.class_names!r}, from the {gave}) disagrees with the "
            f"classes {where} names, in class order ({','.join(theirs)!r}); leave it out to use "
            "those"
        )
    chosen = {name: value for name, value in values.items() if not given(cfg, sources, name)}
    classes = chosen.get("num_classes", cfg.num_classes)
    names = names_in(chosen["class_names"]) if chosen.get("class_names") else []
    if len(names) > classes:  # the user gave fewer classes than the data names: which is which?
        del chosen["class_names"]
    elif names:  # more: the classes the data does not name keep their numbers
        chosen["class_names"] = ",".join(names + [str(n) for n in range(len(names), classes)])
    return dataclasses.replace(cfg, **chosen), {**sources, **dict.fromkeys(chosen, "manifest")}


def given_values(cfg: Config, sources: Sources) -> str:
    """Each value that is not a default, and where it came from."""
    listed = [name for name in FIELDS if name in sources]
    shown = "\n".join(f"  {name} = {getattr(cfg, name)!r} ({sources[name]})" for name in listed)
    return "values (flag, notebook, preset, manifest; the rest are defaults):\n" + shown


# Fields that name files: a value the user typed is used as given, others in the data folder.
FILE_FIELDS = ("train_files", "valid_files", "test_files", "sample_submission", "train_csv",
               "train_images", "test_images")  # fmt: skip


def fields_with(*kinds: str) -> tuple[str, ...]:
    return tuple(field.name for field in knobs() if field.metadata["checkpoint"] in kinds)


# Files of labels a training run reads beside the data: the audit's and pseudo's.
LABEL_FILES = ("drop_ids", "relabel", "pseudo_labels")
# What only training reads (the recipe, its schedule, its data), and what only prediction reads:
# the command line offers each where it is read; the inference notebook shows neither training's.
TRAINING_ONLY = (
    *[field.name for field in sections()["The recipe"]], *LABEL_FILES, "pseudo_weight", "dropout",
    "epochs", "steps_per_epoch", "learning_rate", "warmup_epochs", "bad_records", "shuffle_buffer",
    "steps_per_execution", "resume", "seed",
)  # fmt: skip
TRAINING_DATA = ("train_files", "valid_files", "train_csv", "train_images", "group_column")
PREDICTION_ONLY = ("tta", "submission", "test_files", "test_images", "sample_submission")

# Fields that name features of the records, and columns of the submission: each its own.
FEATURE_FIELDS = ("image_key", "label_key", "id_key")
COLUMN_FIELDS = ("id_column", "label_column")
# What a value of each type may be (a whole number is a number too), as messages say it.
KINDS = {int: (int,), float: (int, float), str: (str,), bool: (bool,), Switch: (bool, str)}
KIND_NAMES = {int: "a whole number", float: "a number", str: "text", bool: "True or False",
              Switch: f"True, False or {AUTO!r}"}  # fmt: skip


def problems(cfg: Config) -> list[str]:
    """Every value that cannot work, each with its field, its flag and what it must be: at
    construction, and again before every run (a notebook may change a field after)."""
    values, kinds = {name: getattr(cfg, name) for name in FIELDS}, types()
    wrong_type = [
        f"{named(name)} = {value!r}: must be {KIND_NAMES[kinds[name]]}"
        for name, value in values.items()
        if not isinstance(value, KINDS[kinds[name]])
        or (kinds[name] not in (bool, Switch) and isinstance(value, bool))
        or (kinds[name] is Switch and value not in (True, False, AUTO))
    ]
    if wrong_type:
        return wrong_type  # the checks below compare values of the right type
    floats = [name for name in FIELDS if kinds[name] is float]
    if not_finite := [name for name in floats if not math.isfinite(values[name])]:
        return [f"{named(name)} = {values[name]!r}: must be a finite number" for name in not_finite]
    chosen = METRICS.get(cfg.metric)
    rule, why, nearest = size_rule(cfg.backbone, cfg.image_size)
    checks = [
        ("image_size", 32 <= cfg.image_size <= 1024, "a whole number from 32 to 1024"),
        ("num_classes", cfg.num_classes >= (1 if targets(cfg) == "values" else 2),
         "at least 2 (for a metric of values, 1: the targets)"),
        ("batch_size", cfg.batch_size >= 1, "at least 1"),
        ("epochs", cfg.epochs >= 1, "at least 1"),
        ("steps_per_epoch", cfg.steps_per_epoch >= 0, "0 or more"),
        ("learning_rate", 0 < cfg.learning_rate <= 1, "above 0 and at most 1"),
        ("warmup_epochs", cfg.epochs < 1 or 0 <= cfg.warmup_epochs <= cfg.epochs,
         f"from 0 to {named('epochs')} ({cfg.epochs})"),  # epochs below 1: said once, for epochs
        ("crop_area", 0 <= cfg.crop_area <= 1, "0 (auto), or above 0 and at most 1"),
        ("rand_augment", 0 <= cfg.rand_augment <= 1, "from 0 (off) to 1"),
        ("mixup", 0 <= cfg.mixup <= 10, "from 0 (off) to 10 (0.2 to 0.4 is usual)"),
        ("cutmix", 0 <= cfg.cutmix <= 10, "from 0 (off) to 10 (1.0 is usual)"),
        ("mix_probability", 0 <= cfg.mix_probability <= 1, "from 0 (no batch) to 1 (every one)"),
        ("label_smoothing", 0 <= cfg.label_smoothing < 1, "from 0 (off) to below 1"),
        ("class_balance", 0 <= cfg.class_balance <= 1, "from 0 (off) to 1 (balanced)"),
        ("class_balance", not (cfg.class_balance and cfg.multi_label),
         "0 for several labels per image (each class is its own yes or no)"),
        ("weight_decay", 0 <= cfg.weight_decay <= 1, "from 0 (off) to 1"),
        ("ema", cfg.ema == 0 or 0.5 <= cfg.ema < 1, "0 (off), or from 0.5 to below 1"),
        ("stochastic_depth", 0 <= cfg.stochastic_depth < 1, "from 0 (off) to below 1"),
        ("backbone_learning_rate", 0 <= cfg.backbone_learning_rate <= 1, "from 0 (frozen) to 1"),
        ("dropout", 0 <= cfg.dropout < 1, "from 0 to below 1"),
        ("pseudo_weight", 0 < cfg.pseudo_weight <= 10, "above 0 and at most 10"),
        ("folds", cfg.folds >= 1, "at least 1 (1: no folds)"),
        ("fold", cfg.fold in ("", "all") or cfg.fold.isdigit(), "a fold number, all, or empty"),
        ("bad_records", cfg.bad_records in ("fail", "skip"), "fail or skip"),
        ("tta", cfg.tta in TTA_VIEWS, ", ".join(TTA_VIEWS)),
        ("aggregate", cfg.aggregate in ("mean", "max"), "mean or max"),
        ("shuffle_buffer", cfg.shuffle_buffer >= 1, "at least 1 (1: no shuffling)"),
        ("seed", 0 <= cfg.seed < 2**32, "from 0 to 2**32 - 1"),
        ("fold_seed", 0 <= cfg.fold_seed < 2**32, "from 0 to 2**32 - 1"),
        ("data_dir", cfg.data_dir != "tfds:" and " " not in cfg.data_dir.partition("tfds:")[2],
         "tfds:NAME with a TensorFlow Datasets name, such as tfds:tf_flowers"),
        ("backbone", cfg.backbone in BACKBONES, "one of " + ", ".join(BACKBONES)),
        ("image_size", not rule,
         f"{rule} for {named('backbone')} {cfg.backbone} ({why}), such as {nearest}"),
        ("metric", chosen, "one of " + ", ".join(METRICS)),
        ("metric", not (cfg.multi_label and chosen and chosen.single_label),
         f"one that scores several labels per image ({named('multi_label')}): "
         + ", ".join(name for name, metric in METRICS.items() if not metric.single_label)),
        ("metric", not chosen or scores_classes(cfg.metric, cfg.num_classes),
         f"a metric of {cfg.num_classes} classes: {cfg.metric} scores "
         + (classes_scored(cfg.metric) if chosen else "")),
        ("pauc_min_tpr", 0 <= cfg.pauc_min_tpr < 1, "at least 0 and below 1"),
        ("target_weights", weighs_each_target(cfg),
         f"{cfg.num_classes} weights of 0 or more ({named('num_classes')}), not all 0, a,b,c"),
        ("metric", not (cfg.relabel and targets(cfg) != "classes")
         and not ((cfg.class_balance or cfg.pseudo_labels) and targets(cfg) == "values"),
         f"a metric of classes with {named('relabel')}, {named('class_balance')} or "
         + f"{named('pseudo_labels')}, which give or weigh classes"),
        ("map_k",
         cfg.map_k >= 1 and (not (chosen and chosen.ranked) or cfg.map_k <= cfg.num_classes),
         f"1 to {named('num_classes')} ({cfg.num_classes}): the classes ranked per image"),
        ("submission", cfg.submission in ("auto", *SHAPES), "one of auto, " + ", ".join(SHAPES)),
        ("class_names", not cfg.class_names or len(names_in(cfg.class_names)) == cfg.num_classes,
         f"{cfg.num_classes} names ({named('num_classes')}), comma-separated"),
        ("steps_per_execution", cfg.steps_per_execution >= 0, "0 or more"),
        ("precision", cfg.precision in PRECISIONS, "one of " + ", ".join(PRECISIONS)),
        ("backend", cfg.backend in ("", *BACKENDS), "empty or one of " + ", ".join(BACKENDS)),
        ("simulate_replicas", cfg.simulate_replicas >= 0, "0 (off) or a number of replicas"),
        ("competition", SLUG.fullmatch(cfg.competition), "a Kaggle slug such as digit-recognizer"),
        ("coordinator", not cfg.coordinator or is_address(cfg.coordinator), "host:port"),
        ("coordinator_timeout", cfg.coordinator_timeout >= 1, "at least 1 (seconds)"),
        ("num_processes", cfg.num_processes >= 1, "at least 1"),
        ("process_id", 0 <= cfg.process_id < cfg.num_processes, "below --num-processes"),
    ]  # fmt: skip
    checks += [(name, getattr(cfg, name), "the name of a feature") for name in FEATURE_FIELDS]
    checks += [(name, getattr(cfg, name), "the name of a column") for name in COLUMN_FIELDS]
    failed = [(name, want) for name, ok, want in checks if not ok]
    wrong = [f"{named(name)} = {getattr(cfg, name)!r}: must be {want}" for name, want in failed]
    wrong += [
        f"{named(name)} = {value!r}: starts or ends with a space; remove it"
        for name, value in values.items()
        if kinds[name] is str and value != value.strip()
    ]
    for group, what in ((FEATURE_FIELDS, "feature of the records"), (COLUMN_FIELDS, "column")):
        for earlier, later in itertools.combinations(group, 2):
            if getattr(cfg, earlier) and getattr(cfg, earlier) == getattr(cfg, later):
                wrong.append(
                    f"{named(later)} = {getattr(cfg, later)!r} is also {named(earlier)}: each "
                    f"must name its own {what}"
                )
    return wrong


def weighs_each_target(cfg: Config) -> bool:
    """Whether Config.target_weights is empty or a weight of 0 or more per target, not all 0."""
    try:
        weights = [float(weight) for weight in names_in(cfg.target_weights or "1")]
    except ValueError:
        return False
    return not cfg.target_weights or (
        len(weights) == cfg.num_classes and min(weights) >= 0 and sum(weights) > 0
    )


def crop_area(cfg: Config) -> float:
    """Config.crop_area, or for 0 (auto) CROP_AREA, and 1.0 (no crops) below CROP_FROM_SIZE."""
    return cfg.crop_area or (CROP_AREA if cfg.image_size >= CROP_FROM_SIZE else 1.0)


def flips(cfg: Config) -> bool:
    """Whether training flips images: Config.flip, or for "auto" from FLIP_FROM_SIZE up."""
    return cfg.flip if cfg.flip != AUTO else cfg.image_size >= FLIP_FROM_SIZE


def validating_fold(cfg: Config) -> int:
    """The fold that validates: with `all`, fold 0 is checked first; with none, fold 0 too."""
    return int(cfg.fold) if cfg.fold.isdigit() else 0


def names_in(text: str) -> list[str]:
    return [name.strip() for name in text.split(",")]


# As Kaggle spells competition slugs (and the template's answer is checked the same way).
SLUG = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


def is_address(text: str) -> bool:
    host, _, port = text.rpartition(":")
    return bool(host.strip()) and port.isdigit() and 1 <= int(port) <= 65535


def class_names(cfg: Config) -> list[str] | None:
    """The classes' names in class order, or None when the classes are only numbers."""
    return names_in(cfg.class_names) if cfg.class_names else None
