"""Which accelerator trains the model: a TPU, several GPUs, or the default strategy.

`detect()` never raises: a machine without the hardware gets the default strategy and,
where hardware seemed present but could not be used, a warning that says why.
"""

from __future__ import annotations

import dataclasses
import glob
import os

# Signs of TPU hardware: named TPUs and pods, legacy Colab, TPU VMs (Kaggle, Cloud).
TPU_ENV = ("TPU_NAME", "COLAB_TPU_ADDR", "ISTPUVM", "TPU_PROCESS_ADDRESSES")
TPU_DEVICE_FILES = ("/dev/accel*", "/dev/vfio/[0-9]*")


@dataclasses.dataclass(frozen=True)
class Accelerator:
    kind: str  # "tpu", "gpu" or "cpu"
    backend: str  # the Keras backend
    replicas: int
    strategy: object  # a tf.distribute.Strategy; build and compile the model in its scope()
    how: str  # how it was found, for the log
    warning: str = ""


def tpu_signs() -> list[str]:
    found = [name for name in TPU_ENV if os.environ.get(name)]
    return found + [path for pattern in TPU_DEVICE_FILES for path in glob.glob(pattern)]


def detect() -> Accelerator:
    import keras
    import tensorflow as tf

    backend = keras.backend.backend()
    warning = ""
    signs = tpu_signs()
    if signs:
        try:
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
                tpu=os.environ.get("TPU_NAME") or "local"
            )
            tf.tpu.experimental.initialize_tpu_system(resolver)
            strategy = tf.distribute.TPUStrategy(resolver)
            how = "TPUStrategy (" + ", ".join(signs) + ")"
            return Accelerator("tpu", backend, strategy.num_replicas_in_sync, strategy, how)
        except (ValueError, RuntimeError, NotImplementedError, tf.errors.OpError) as error:
            warning = (
                f"TPU signs ({', '.join(signs)}) but TensorFlow cannot drive it "
                f"({type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}); "
                "training on the CPU instead. On Kaggle, pick the TPU accelerator with a "
                "TensorFlow that supports it."
            )
    gpus = tf.config.list_physical_devices("GPU")
    if len(gpus) > 1:
        strategy = tf.distribute.MirroredStrategy()
        how = f"MirroredStrategy over {len(gpus)} GPUs"
        return Accelerator("gpu", backend, strategy.num_replicas_in_sync, strategy, how, warning)
    strategy = tf.distribute.get_strategy()
    if gpus:
        return Accelerator("gpu", backend, 1, strategy, "default strategy on one GPU", warning)
    return Accelerator("cpu", backend, 1, strategy, "default strategy, no TPU or GPU", warning)


def describe(accelerator: Accelerator) -> str:
    lines = [
        f"accelerator: {accelerator.kind} ({accelerator.how})",
        f"backend: {accelerator.backend}",
        f"replicas: {accelerator.replicas}",
    ]
    if accelerator.warning:
        lines.append(f"WARNING: {accelerator.warning}")
    return "\n".join(lines)
