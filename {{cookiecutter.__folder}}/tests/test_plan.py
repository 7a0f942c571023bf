"""The run's numbers: what train uses and doctor shows."""

import pytest

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.learning import plan
from {{ cookiecutter.package }}.runtime.platform.accelerator import Accelerator

pytestmark = pytest.mark.quick  # one unit alone: make test-quick runs it


TPU = Accelerator("tpu", "jax", 8, "fake")
MIRRORED = Accelerator("gpu", "tensorflow", 2, "fake")
CPU = Accelerator("cpu", "tensorflow", 1, "fake")


def test_precision_and_steps_per_execution_follow_the_accelerator():
    assert [found.precision("auto") for found in (TPU, MIRRORED, CPU)] == [
        "mixed_bfloat16",
        "mixed_float16",
        "float32",
    ]
    assert TPU.precision("float32") == "float32"
    assert plan.steps_per_execution(TPU, 0, steps_per_epoch=100) == (32, "")
    assert plan.steps_per_execution(TPU, 0, steps_per_epoch=10) == (10, "")  # one epoch
    assert plan.steps_per_execution(CPU, 0, steps_per_epoch=100) == (1, "")
    steps, why = plan.steps_per_execution(MIRRORED, 8, steps_per_epoch=100)
    assert steps == 1 and why.startswith("steps per execution: 1, not 8: Keras 3")


def test_a_plan_says_why_its_precision():
    """float16 with loss scaling on GPUs (measured faster than bfloat16 on an H100; a T4 has
    no bfloat16), and the user's own choice named as theirs."""
    on_gpu = plan.make(Config(batch_size=16), MIRRORED, training_records=1000).describe()
    assert "precision: mixed_float16 (auto: float16 with loss scaling on GPUs, faster " in on_gpu
    asked = plan.make(Config(batch_size=16, precision="mixed_bfloat16"), MIRRORED, 1000)
    assert asked.describe().endswith(
        "precision: mixed_bfloat16 (Config.precision / --precision mixed_bfloat16)"
    )


def test_a_plan_counts_global_batches_and_names_the_field_when_none_fits():
    made = plan.make(Config(batch_size=16), TPU, training_records=12753)
    assert (made.global_batch, made.steps_per_epoch, made.steps_per_execution) == (128, 99, 32)
    assert made.describe().splitlines() == [
        "steps per epoch: 99",
        "steps per execution: 32",
        "precision: mixed_bfloat16 (auto: bfloat16 on TPUs, whose matrix units take it)",
    ]
    with pytest.raises(
        UserError,
        match=r"100 training records make no full global batch of 128 "
        r"\(Config.batch_size / --batch-size 16 x 8 replicas\)",
    ):
        plan.make(Config(batch_size=16), TPU, training_records=100)
