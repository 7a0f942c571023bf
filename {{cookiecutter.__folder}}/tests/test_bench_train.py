"""`bench train` times each variant of a training step, prints their ratios and says what it
could not measure; `bench compile` times each fold's first step with the cache off and on.
(What the figures are is for the benchmark to say on a real machine, not for a test.)"""

import dataclasses
import re
import subprocess

import keras
import pytest

from {{ cookiecutter.package }}.__main__ import main
from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.tools.bench import STEP_VARIANTS
from {{ cookiecutter.package }}.tools.bench_train import STEP_RATIOS, step_seconds

PACKAGE = "{{ cookiecutter.package }}"


def printed_line(pattern: str, printed: str) -> bool:
    return re.search("^" + pattern + "$", printed, re.MULTILINE) is not None


def tiny_application(include_top, weights, input_shape):
    """Stands in for keras.applications' EfficientNet, which takes a minute to compile."""
    assert (include_top, weights) == (False, None)  # nothing to download
    inputs = keras.Input(input_shape)
    return keras.Model(inputs, keras.layers.Conv2D(4, 3, strides=2)(inputs))


def test_bench_train_times_our_step_and_each_variant_of_it(demo_cfg, preset, capsys, monkeypatch):
    monkeypatch.setattr(keras.applications, "EfficientNetB0", tiny_application)
    folder = preset("efficientnet-b0")
    cfg = dataclasses.replace(
        demo_cfg, backbone="efficientnet-b0", weights=folder, batch_size=2, mixup=0.2
    )
    medians = step_seconds(cfg, STEP_VARIANTS, steps=2, repeats=1)
    printed = capsys.readouterr().out
    assert list(medians) == ["CACHED", "OURS", "UNMIXED", "BARE", "STOCK", "APPS"]
    assert all(seconds > 0 for seconds in medians.values())
    seconds = r"\d+\.\d\d\d s"
    assert printed_line(f"pass 1/1: CACHED {seconds}, OURS .*, APPS {seconds}", printed)
    settings = "at 32x32, global batch 2, float32, steps per execution: 1; tensorflow on the cpu"
    assert printed_line(rf"efficientnet-b0 \(ImageNet weights of {folder}\) {settings}.*", printed)
    for name in medians:
        rate = r"[\d,]+\.\d images/s"
        assert printed_line(
            rf"{name} +{seconds} a step, {rate} \(median of 2 device calls\)", printed
        )
    assert printed_line(
        r"first call, compiling: CACHED -?\d+\.\d s, UNMIXED -?\d+\.\d s, BARE .*, "
        r"APPS -?\d+\.\d s",
        printed,
    )
    for over, under, meaning in STEP_RATIOS:
        assert printed_line(rf"{over}/{under} \d+\.\d\d \({meaning}\)", printed), over
    assert "not measured" not in printed


def test_bench_train_says_what_it_could_not_measure(tmp_path, capsys):
    """Without training records, keras-hub or keras.applications' network of the backbone."""
    cfg = Config(backbone="small-cnn", weights="none", image_size=32, batch_size=2)
    cfg = dataclasses.replace(cfg, data_dir=str(tmp_path), output_dir=str(tmp_path / "output"))
    for command in (["bench", "train"], ["bench-train"]):  # bench-train: its older name
        assert main([*command, "--variants", "BARE,FAST", "--weights", "none"]) == 2
        assert "--variants FAST: no such variant; pick from CACHED," in capsys.readouterr().err
    medians = step_seconds(cfg, STEP_VARIANTS, steps=1, repeats=1)
    printed = capsys.readouterr().out
    assert list(medians) == ["CACHED", "BARE"]
    assert printed_line(
        r"not measured: OURS: no training records to read \(no files match .*", printed
    )
    stock = "small CNN has no stride-1 depthwise convolution padded beforehand: "
    stock += "efficientnet_padding.py changes nothing"
    assert printed_line(f"not measured: STOCK: {stock}", printed)
    assert printed_line(
        "not measured: APPS: keras.applications has no network of small CNN's", printed
    )
    assert printed_line(
        "not measured: UNMIXED: mixing is off: --mixup or --cutmix switches it on", printed
    )
    assert "CACHED/BARE" in printed and "OURS/" not in printed and "/APPS" not in printed


@pytest.mark.slow
def test_bench_train_runs_where_keras_runs_on_jax_without_tensorflow(
    preset, start_python, tmp_path
):
    """A GPU machine with JAX alone, Colab's TPU runtime: the cached batch is fed as arrays,
    so every variant but OURS (tf.data reads the records) is timed, in images a second too.
    Small presets of EfficientNet-B0's and DINOv3-S's own classes, both at once."""
    runs = {}
    for backbone in ("efficientnet-b0", "dinov3-small"):
        flags = ["--backbone", backbone, "--weights", preset(backbone), "--image-size", "32"]
        flags += ["--batch-size", "2", "--timed-steps", "1", "--repeats", "1"]
        flags += ["--output-dir", str(tmp_path / backbone), "--variants", "CACHED,BARE,OURS"]
        script = "tests/without_tensorflow.py"  # as if TensorFlow were never installed
        runs[backbone] = start_python(
            script, PACKAGE, "bench", "train", *flags, backend="", warm=False
        )
    for backbone, process in runs.items():
        try:
            out, err = process.communicate(timeout=300)
        finally:
            process.kill()
        done = subprocess.CompletedProcess(process.args, process.returncode, out, err)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        printed = done.stdout
        assert "accelerator: cpu (Keras on JAX, one CPU device; no TensorFlow installed)" in printed
        assert printed_line(
            rf"{backbone} \(.*\) at 32x32, global batch 2, .*; jax on the cpu.*", printed
        )
        for name in ("CACHED", "BARE"):
            line = (
                rf"{name} +\d+\.\d\d\d s a step, [\d,]+\.\d images/s \(median of 1 device calls\)"
            )
            assert printed_line(line, printed), printed
        assert printed_line(
            r"not measured: OURS: no training records to read \(no TensorFlow installed, "
            r"whose tf.data reads them\)",
            printed,
        )
        assert "Failed to apply" not in done.stderr


@pytest.mark.slow
def test_bench_compile_times_each_folds_first_step_with_the_cache_off_and_on(tmp_path, capfd):
    """Two folds in a process, each a new model, with JAX's compilation cache off, then in
    another with it on; the table has a row for each."""
    flags = ["--backbone", "small-cnn", "--weights", "none", "--image-size", "32"]
    flags += ["--batch-size", "2", "--output-dir", str(tmp_path)]
    assert main(["bench", "compile", *flags]) == 0
    printed = capfd.readouterr().out
    assert printed.count("fold 2: first step") == 2, printed
    seconds, ratio = r" +-?\d+\.\d\d s", r" +-?\d+\.\d\d"
    for cache in ("off", "on"):
        row = f"{cache}{seconds}{seconds}{ratio}{seconds}{seconds}{ratio}"
        assert printed_line(row, printed), printed
