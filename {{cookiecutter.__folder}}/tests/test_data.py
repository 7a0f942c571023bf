"""TFRecords in, static-shape batches out; test ids complete; clear errors for wrong files."""

import dataclasses

import pytest
import tensorflow as tf

from {{ cookiecutter.package }}.runtime.data import pipeline, records, scan
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.outputs.submission import read_sample
from {{ cookiecutter.package }}.runtime.stages.run import Run, start
from {{ cookiecutter.package }}.tools import shards
from {{ cookiecutter.package }}.tools.demo import from_preset

pytestmark = pytest.mark.quick  # one unit alone: make test-quick runs it


def read(cfg) -> Run:
    """The run of `cfg` as a command starts it, its data read."""
    return start(cfg, on_accelerator=False)


def files(run: Run, pattern: str) -> list[str]:
    return records.find(run.places.in_data(pattern), "test_files")


def test_training_batches_have_static_shapes_and_varied_labels(demo_cfg):
    run = read(demo_cfg)
    batches = pipeline.for_training(run.data, files(run, run.cfg.train_files), run.cfg, 16)
    image_spec, label_spec = batches.element_spec
    assert image_spec.shape == (16, 32, 32, 3) and image_spec.dtype == tf.uint8
    assert label_spec.shape == (16,) and label_spec.dtype == tf.int32
    images, labels = next(iter(batches))
    assert len(set(labels.numpy().tolist())) > 3  # shuffled across classes and shards
    assert 0 < images.numpy().mean() < 255


def test_tpu_batches_under_tensorflow_carry_bfloat16_pixels_in_0_to_255(demo_cfg):
    """TPUs under TensorFlow take no uint8: the same pixels travel as bfloat16."""
    run = read(dataclasses.replace(demo_cfg, crop_area=1.0, shuffle_buffer=1))
    cfg, train_files = run.cfg, files(run, demo_cfg.train_files)
    as_uint8 = pipeline.for_inference(run.data, train_files, cfg, 16, labeled=True)
    as_bfloat16 = pipeline.for_inference(
        run.data, train_files, cfg, 16, True, image_dtype="bfloat16"
    )
    assert as_bfloat16.element_spec[0].dtype == tf.bfloat16
    first, second = next(iter(as_uint8))[0], next(iter(as_bfloat16))[0]
    assert tf.reduce_all(tf.cast(first, tf.bfloat16) == second)
    training = pipeline.for_training(run.data, train_files, cfg, 16, image_dtype="bfloat16")
    assert training.element_spec[0].dtype == tf.bfloat16


def test_images_are_resized_to_the_configured_size(demo_cfg):
    run = read(dataclasses.replace(demo_cfg, image_size=48))
    test_files = files(run, run.cfg.test_files)
    batches = pipeline.for_inference(run.data, test_files, run.cfg, 8, labeled=False)
    assert batches.element_spec[0].shape[1:] == (48, 48, 3)
    assert next(iter(batches))[0].shape == (8, 48, 48, 3)


def test_the_last_inference_batch_is_filled_with_weight_zero_rows(demo_cfg):
    """XLA sees one batch shape; the blank rows never reach a score or a submission."""
    run = read(demo_cfg)
    test_files = files(run, run.cfg.test_files)
    batches = pipeline.for_inference(run.data, test_files, run.cfg, 64, labeled=False)
    assert all(part.shape.is_fully_defined() for part in batches.element_spec)
    weights = tf.concat([weight for _, _, weight in batches], axis=0).numpy()
    ids = tf.concat([key for _, key, _ in batches], axis=0).numpy()
    count = records.count(test_files)
    assert len(weights) % 64 == 0 and len(weights) > count  # 360 records: 6 batches of 64
    assert weights[:count].min() == 1.0 and weights[count:].max() == 0.0
    assert b"" not in ids[:count] and set(ids[count:]) == {b""}


def test_inference_yields_every_test_id_once_in_the_same_order_twice(demo_cfg, demo_dir):
    run = read(demo_cfg)
    test_files = files(run, run.cfg.test_files)
    batches = pipeline.for_inference(run.data, test_files, run.cfg, 32, labeled=False)
    first = [key.decode() for _, ids, weights in batches for key in ids.numpy()[weights > 0]]
    second = [key.decode() for _, ids, weights in batches for key in ids.numpy()[weights > 0]]
    sample = read_sample((demo_dir / "sample_submission.csv").read_bytes(), "sample")["id"].tolist()
    assert first == second
    assert sorted(first) == sorted(sample) and len(first) == len(set(first))


def test_record_count_from_kaggle_names_matches_the_records(demo_cfg):
    train_files = files(read(demo_cfg), demo_cfg.train_files)
    assert all(records.COUNT_IN_NAME.search(name) for name in train_files)
    assert records.count(train_files) == sum(1 for _ in tf.data.TFRecordDataset(train_files))


def test_a_missing_feature_is_named_with_its_file_and_flag(tmp_path):
    shard = shards.write_shards(str(tmp_path), [{"image": b"jpeg", "label": 3}], 1, 8)[0]
    with pytest.raises(UserError) as caught:
        records.check(shard, {"class": ("int64", "label_key")})
    message = str(caught.value)
    assert shard in message and "'class'" in message and "Config.label_key / --label-key" in message
    assert "label (int64)" in message  # what the records do hold


def test_a_feature_of_the_wrong_kind_is_named(tmp_path):
    shard = shards.write_shards(str(tmp_path), [{"image": b"jpeg", "class": "three"}], 1, 8)[0]
    with pytest.raises(UserError, match="'class' .*is bytes, the pipeline needs int64"):
        records.check(shard, {"class": ("int64", "label_key")})


def test_labels_beyond_num_classes_are_caught_with_the_fix(demo_cfg):
    shard = files(read(demo_cfg), demo_cfg.train_files)[0]
    assert not scan.scan_shard(shard, demo_cfg, labeled=True).problems
    five = dataclasses.replace(demo_cfg, num_classes=5, class_names="")
    fewer = scan.scan_shard(shard, five, labeled=True)
    assert "have labels outside 0..4 (Config.num_classes / --num-classes)" in fewer.problems


def test_a_typed_pattern_laid_out_as_in_the_data_folder_is_found_there(
    demo_dir, tmp_path, monkeypatch
):
    """A competition's files are described as laid out in its folder ("train/*.tfrec"): typed
    so, and matching nothing where the user runs, the pattern is read in the data folder."""
    monkeypatch.chdir(tmp_path)
    given = {"data_dir": str(demo_dir), "train_files": "train/*.tfrec"}
    cfg, sources = from_preset("demo", given, "flag")
    run = start(cfg, sources, on_accelerator=False, read=False)
    assert records.find_checked(run.cfg, run.places, "train_files", labeled=True) == sorted(
        str(path) for path in (demo_dir / "train").glob("*.tfrec")
    )


def test_no_matching_files_names_the_pattern_and_flag(tmp_path):
    with pytest.raises(
        UserError,
        match=r"no files match .*nothing/\*\.tfrec.* \(Config.test_files / --test-files\)",
    ):
        records.find(str(tmp_path / "nothing/*.tfrec"), "test_files")
