"""What a run does on the accelerator it found: the global batch, the steps per epoch, the
precision and the steps per device call. `train` runs with these numbers and `doctor` shows
them, from this one function, so what doctor says is what train does."""

from __future__ import annotations

import dataclasses

from ..config import Config
from ..errors import UserError, named
from ..platform.accelerator import Accelerator

STEPS_PER_EXECUTION_ON_TPU = 32  # a TPU idles between host calls; run many steps per call
# Why Accelerator.precision's auto chose its policy (docs/speed.md: the figures). GPUs: on one
# H100, EfficientNet-B0 at 224 px, batch 128, 5,163 images/s in float16 against 4,621 in
# bfloat16; a T4 has no bfloat16 at all.
AUTO_PRECISION_WHY = {
    "gpu": "auto: float16 with loss scaling on GPUs, faster than bfloat16 on an H100 and the only "
    "half precision a T4 has",
    "tpu": "auto: bfloat16 on TPUs, whose matrix units take it",
    "cpu": "auto: float32 on the CPU",
}


@dataclasses.dataclass(frozen=True)
class Plan:
    global_batch: int  # images per step over all replicas
    steps_per_epoch: int
    precision: str  # a Keras dtype policy
    steps_per_execution: int  # training steps per device call
    note: str = ""  # why a setting is not what the config asked for
    precision_why: str = ""  # why this precision, in a few words

    def describe(self) -> str:
        why = f" ({self.precision_why})" if self.precision_why else ""
        lines = [
            f"steps per epoch: {self.steps_per_epoch}",
            f"steps per execution: {self.steps_per_execution}",
            f"precision: {self.precision}{why}",
        ]
        return "\n".join(lines + ([self.note] if self.note else []))


def make(cfg: Config, device: Accelerator, training_records: int) -> Plan:
    global_batch = device.global_batch(cfg.batch_size)
    steps = cfg.steps_per_epoch or training_records // global_batch
    if steps == 0:
        raise UserError(
            f"{training_records} training records make no full global batch of {global_batch} "
            f"({named('batch_size')} {cfg.batch_size} x {device.replicas} replicas); "
            f"lower {named('batch_size')}"
        )
    multi_step, note = steps_per_execution(device, cfg.steps_per_execution, steps)
    asked = f"{named('precision')} {cfg.precision}"
    why = AUTO_PRECISION_WHY[device.kind] if cfg.precision == "auto" else asked
    return Plan(global_batch, steps, device.precision(cfg.precision), multi_step, note, why)


def steps_per_execution(device: Accelerator, requested: int, steps_per_epoch: int):
    """Steps per device call (at most an epoch's), and a note (or "") when Keras 3 forces fewer."""
    wanted = requested or (STEPS_PER_EXECUTION_ON_TPU if device.kind == "tpu" else 1)
    if wanted > 1 and device.backend == "tensorflow" and device.replicas > 1:
        return 1, (
            f"steps per execution: 1, not {wanted}: Keras 3 under tf.distribute fails above 1 "
            "(keras-team/keras#19246); Config.backend / --backend jax runs several"
        )
    return min(wanted, steps_per_epoch), ""
