"""Config fields, flags, presets and where the data is looked for."""

import dataclasses
import json
from pathlib import Path

import pytest

from {{ cookiecutter.package }}.__main__ import from_flags, main, parser
from {{ cookiecutter.package }}.runtime import config
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.outputs.submission import load_sample
from {{ cookiecutter.package }}.runtime.platform import paths
from {{ cookiecutter.package }}.runtime.stages import preflight
from {{ cookiecutter.package }}.runtime.stages.run import Run, start
from {{ cookiecutter.package }}.tools.demo import PRESETS

pytestmark = pytest.mark.quick  # one unit alone: make test-quick runs it


def test_every_field_is_a_flag_of_its_type():
    """Each config field can be set from the command line and keeps its type."""
    fields = config.knobs()
    values = {int: "7", float: "0.5", str: "x"}
    kinds = config.types()
    argv = ["doctor"]  # it checks every field
    for field in fields:
        argv += (
            [config.flag(field.name)]
            if kinds[field.name] in (bool, config.Switch)
            else [config.flag(field.name), values[kinds[field.name]]]
        )
    args = parser().parse_args(argv)
    for field in fields:
        parsed = getattr(args, field.name)
        kind = bool if kinds[field.name] is config.Switch else kinds[field.name]
        assert type(parsed) is kind, field.name


def test_each_command_lists_the_settings_it_reads_and_refuses_the_others(capsys):
    """`records --help` is not 40 training flags; a training flag given to it is refused."""

    def help_of(command: str) -> str:
        with pytest.raises(SystemExit):
            main([command, "--help"])
        return capsys.readouterr().out

    records = help_of("records")
    assert "--folds" in records and "--id-column" in records and "--images IMAGES" in records
    assert "--learning-rate" not in records and "--backbone" not in records
    assert "--competition" in help_of("kaggle") and "--batch-size" not in help_of("kaggle")
    assert "--sample-submission" in help_of("score") and "--epochs" not in help_of("score")
    assert "--learning-rate" in help_of("train") and "--learning-rate" in help_of("kernel")
    bench = help_of("bench-input")
    assert "--images-per-pass" in bench and "--images " not in bench  # a count, not a folder
    assert main(["records", "--images", "x", "--csv", "y", "--output", "z", "--epochs", "3"]) == 2
    assert "unrecognized arguments: --epochs 3" in capsys.readouterr().err


def test_flags_override_the_preset_and_the_rest_keep_defaults():
    args = parser().parse_args(["train", "--preset", "demo", "--epochs", "2", "--flip"])
    cfg, sources = from_flags(args)
    assert cfg.epochs == 2 and cfg.flip is True  # the preset has none
    assert cfg.backbone == PRESETS["demo"]["backbone"]
    assert cfg.seed == Config().seed
    assert (sources["epochs"], sources["backbone"]) == ("flag", "preset demo")
    assert "seed" not in sources  # a default: what the data says may fill it


def test_data_dir_comes_from_flag_then_env_then_kaggle_then_data(tmp_path, monkeypatch):
    """Resolution order: --data-dir, $DATA_DIR, /kaggle/input/<competition>, data/."""
    monkeypatch.setattr(paths, "KAGGLE_INPUT", tmp_path)
    monkeypatch.delenv("DATA_DIR", raising=False)
    cfg = Config(competition="some-competition")
    sources = config.notebook_sources(cfg)  # as a notebook's config cell gives it
    assert paths.data_folder(cfg, sources) == (
        "data",
        f"default: no Config.data_dir / --data-dir, $DATA_DIR or {tmp_path / 'some-competition'}",
    )
    (tmp_path / "some-competition").mkdir()
    assert paths.data_folder(cfg, sources) == (str(tmp_path / "some-competition"), "Kaggle input")
    monkeypatch.setenv("DATA_DIR", "/elsewhere")
    assert paths.data_folder(cfg, sources) == ("/elsewhere", "$DATA_DIR")
    flagged = dataclasses.replace(cfg, data_dir="gs://bucket/flowers")
    sources = config.notebook_sources(flagged)
    assert paths.data_folder(flagged, sources) == (
        "gs://bucket/flowers", "Config.data_dir, notebook"
    )  # fmt: skip
    assert paths.data_folder(flagged, {"data_dir": "flag"}) == (
        "gs://bucket/flowers", "--data-dir"
    )  # fmt: skip
    places = paths.find(flagged, sources)
    assert places.in_data("train/*.tfrec") == "gs://bucket/flowers/train/*.tfrec"
    assert places.in_data("/abs/*.tfrec") == "/abs/*.tfrec"


def test_every_bad_value_is_named_by_its_flag():
    with pytest.raises(UserError) as caught:
        Config(image_size=8, num_classes=1, backbone="vgg")
    message = str(caught.value)
    assert "Config.image_size / --image-size = 8: must be a whole number" in message
    assert "Config.num_classes / --num-classes = 1: must be at least 2" in message
    assert "Config.backbone / --backbone = 'vgg': must be one of" in message


def test_epochs_0_is_one_problem_and_valid_files_none_means_no_validation():
    """--epochs 0 names epochs alone (not warm-up too); --valid-files none, as its help says,
    is no validation, not a file pattern."""
    with pytest.raises(UserError) as caught:
        Config(epochs=0)
    assert str(caught.value) == "Config.epochs / --epochs = 0: must be at least 1"
    parsed, sources = from_flags(parser().parse_args(["train", "--valid-files", "none"]))
    assert parsed.valid_files == "" and config.given(parsed, sources, "valid_files") == "flag"


def test_cli_reports_a_bad_flag_in_one_line_and_exits_2(capsys):
    assert main(["train", "--image-size", "8"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "error: Config.image_size / --image-size = 8: must be a whole number from 32 to 1024"
    )
    assert "Traceback" not in err


def test_output_goes_where_kaggle_keeps_it_unless_the_config_says_otherwise(tmp_path, monkeypatch):
    """In a Kaggle notebook submission.csv must land in /kaggle/working; elsewhere output/."""
    monkeypatch.setattr(paths, "KAGGLE_WORKING", tmp_path / "working")
    monkeypatch.delenv("KAGGLE_KERNEL_RUN_TYPE", raising=False)
    assert paths.find(Config(), {}).output == Path("output")
    monkeypatch.setenv("KAGGLE_KERNEL_RUN_TYPE", "Batch")  # set in every Kaggle notebook
    assert paths.find(Config(), {}).output == tmp_path / "working"
    chosen = Config(output_dir=str(tmp_path / "mine"))
    assert paths.find(chosen, {"output_dir": "notebook"}).output == tmp_path / "mine"


@pytest.mark.quick
def test_places_are_found_once_each_fold_writes_its_own_and_inputs_are_looked_up_when_read(
    tmp_path,
):
    """The places a command found where it started are its run's: fold k's run writes into
    <output>/fold<k>/, a config changed later (a notebook cell) and started again has its own,
    and a Kaggle input a field names that is not attached stops only what reads it."""
    cfg = Config(output_dir=str(tmp_path / "run"), drop_ids="kaggle:datasets/a/b")
    run = start(cfg, on_accelerator=False, read=False)
    assert run.places.output == tmp_path / "run"
    assert run.fold(0).places.output == tmp_path / "run" / "fold0"
    assert run.fold(0).cfg.fold == "0" and run.cfg.fold == ""  # the run itself unchanged
    cfg.output_dir = str(tmp_path / "elsewhere")  # set after the run started
    assert start(cfg, on_accelerator=False, read=False).places.output == tmp_path / "elsewhere"
    assert run.places.output == tmp_path / "run"
    with pytest.raises(UserError, match="kaggle:datasets/a/b"):
        run.places.file("drop_ids")


def test_a_missing_package_is_named_with_the_command_that_installs_it(capsys, monkeypatch):
    """Colab's TPU runtime has no TensorFlow: one line, not a ModuleNotFoundError."""
    import sys

    monkeypatch.setitem(sys.modules, "tensorflow", None)  # `import tensorflow` raises
    assert main(["train", "--backend", "tensorflow", "--simulate-replicas", "2"]) == 2
    err = capsys.readouterr().err
    assert "`train` needs tensorflow, which is not installed here" in err
    assert "-m pip install tensorflow-cpu (Colab's TPU runtime ships none)" in err
    assert "Traceback" not in err


def manifest_folder(folder: Path) -> Path:
    """A records folder whose manifest says 7 classes and the CSV's image_id column."""
    folder.mkdir()
    manifest = {"folds": 1, "test": {"records": 0}, "num_classes": 7, "classes": None}
    manifest["train"] = {"records": 0, "per_fold": {}}  # as `records` writes it, if empty
    manifest |= {"id_column": "image_id", "label_column": "label", "multi_label": False}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_a_value_given_wins_over_the_manifest_even_when_it_equals_the_default(tmp_path):
    """--num-classes 5 where 5 is the default is still the user's: the manifest's 7 fills only
    what was not given, and doctor says where each value came from."""
    folder = str(manifest_folder(tmp_path / "records"))
    default = Config().num_classes
    flags = ["doctor", "--data-dir", folder, "--num-classes", str(default)]
    run = start(*from_flags(parser().parse_args(flags)), on_accelerator=False)
    assert run.cfg.num_classes == default
    assert (run.cfg.id_column, run.sources["id_column"]) == ("image_id", "manifest")
    said = preflight.values(preflight.Preflight("doctor", run)).line
    assert f"num_classes = {default} (flag)" in said
    assert "id_column = 'image_id' (manifest)" in said

    def read(cfg: Config, sources: config.Sources | None = None) -> Run:
        return start(cfg, sources, on_accelerator=False)

    assert read(Config(data_dir=folder)).cfg.num_classes == 7
    cell = {"data_dir": folder, "num_classes": default}  # the config cell: a default given too
    in_notebook = read(Config(**cell), dict.fromkeys(cell, "notebook"))
    assert in_notebook.cfg.num_classes == default
    assert config.given(in_notebook.cfg, in_notebook.sources, "num_classes") == "notebook"
    assert read(Config(data_dir=folder, num_classes=6)).cfg.num_classes == 6
    set_later = Config(data_dir=folder)
    set_later.num_classes = 6  # a notebook cell after the config cell
    filled = read(set_later)
    assert (filled.cfg.num_classes, config.given(filled.cfg, filled.sources, "num_classes")) == (
        6, "notebook"
    )  # fmt: skip


def test_a_path_given_is_used_from_where_you_run_and_refused_when_missing(tmp_path, monkeypatch):
    """docs/data.md's --sample-submission data/sample_submission.csv is that file, not one
    inside --data-dir; a path given that does not exist stops the run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "sample_submission.csv").write_text("image_id,label\nt0.jpg,0\n")
    flags = ["predict", "--data-dir", "data/records"]

    def sample(*more: str):
        args = parser().parse_args([*flags, *more])
        run = start(*from_flags(args), on_accelerator=False, read=False)
        return load_sample(run.cfg, run.sources, run.places)

    given = sample("--sample-submission", "data/sample_submission.csv")
    assert given["image_id"].tolist() == ["t0.jpg"]
    with pytest.raises(UserError, match=r"data/x.csv \(--sample-submission\) does not exist"):
        sample("--sample-submission", "data/x.csv")
    # Left out, it is looked up in the data folder, and may be missing (rows sorted by id).
    assert sample() is None


def test_records_shipped_at_several_sizes_are_read_at_the_image_size(tmp_path):
    """Kaggle's flowers ship tfrecords-jpeg-192x192 to -512x512: --image-size 192 reads the
    192 set, 256 the smallest above it, 600 the largest; a pattern the user typed stands."""
    for size in (192, 331, 512):
        (tmp_path / f"tfrecords-jpeg-{size}x{size}" / "train").mkdir(parents=True)
    shipped = "tfrecords-jpeg-512x512/train/*.tfrec"

    def read_at(image_size: int, source: str = "preset flowers") -> str:
        cfg = Config(data_dir=str(tmp_path), image_size=image_size, train_files=shipped)
        sources = {"data_dir": "flag", "image_size": "flag", "train_files": source}
        return paths.find(cfg, sources).file("train_files").removeprefix(f"{tmp_path}/")

    assert read_at(192) == "tfrecords-jpeg-192x192/train/*.tfrec"
    assert read_at(256) == "tfrecords-jpeg-331x331/train/*.tfrec"
    assert read_at(600) == "tfrecords-jpeg-512x512/train/*.tfrec"
    assert read_at(192, source="flag") == shipped  # given: as given
