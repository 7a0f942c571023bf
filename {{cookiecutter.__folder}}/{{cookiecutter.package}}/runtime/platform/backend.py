"""The Keras backend, chosen before anything loads Keras: Keras reads $KERAS_BACKEND once,
when keras or tensorflow is first imported, so importing the package calls `choose()`."""

from __future__ import annotations

import contextlib
import glob
import os
import sys

from ..config import BACKENDS
from ..errors import UserError, named
from .versions import TENSORFLOWS, installed

# TPU signs: remote TPUs, which any TensorFlow reaches over the network, and TPU VMs' own chips.
REMOTE_TPU_ENV = ("TPU_NAME", "KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS", "COLAB_TPU_ADDR")
TPU_ENV = (*REMOTE_TPU_ENV, "ISTPUVM", "TPU_PROCESS_ADDRESSES")
TPU_DEVICE_FILES = ("/dev/accel*", "/dev/vfio/[0-9]*")  # v2-v4, v5e and later
GPU_DEVICE_FILES = ("/dev/nvidia[0-9]*",)
KERAS_LOADED = "Keras, already loaded"

chosen_at_import = ""  # what choose() put in $KERAS_BACKEND: our default, not the user's choice


def choose() -> None:
    """Set $KERAS_BACKEND, unless it is set or Keras is loaded: jax for a TPU this TensorFlow cannot
    drive or where JAX is alone, else tensorflow. Reads only the environment, files and packages."""
    global chosen_at_import
    if os.environ.get("KERAS_BACKEND") or "keras" in sys.modules or "tensorflow" in sys.modules:
        return
    tpu_for_jax = tpu_signs() and not tensorflow_drives_tpus() and installed("jax")
    jax_alone = installed("jax") and not tensorflow_installed()
    chosen_at_import = "jax" if tpu_for_jax or jax_alone else "tensorflow"
    os.environ["KERAS_BACKEND"] = chosen_at_import


def asked_for(field: str) -> tuple[str, str]:
    """The backend the user asked for and where they said so; ("", "") when they did not."""
    wanted, source = "", ""
    if field:
        wanted, source = field, named("backend")
    elif os.environ.get("KERAS_BACKEND", chosen_at_import) != chosen_at_import:
        wanted, source = os.environ["KERAS_BACKEND"], "$KERAS_BACKEND"
    if wanted and wanted not in BACKENDS:
        raise UserError(f"{source}={wanted!r}: this project runs on " + " or ".join(BACKENDS))
    in_use = in_use_by_keras()
    if in_use and wanted and wanted != in_use:
        raise UserError(
            f"{source} is {wanted}, but Keras was already loaded with the {in_use} backend "
            "(something imported keras or tensorflow first); restart the kernel and run the "
            "accelerator cell (accelerator.detect) before anything else"
        )
    return (in_use, KERAS_LOADED) if in_use and not wanted else (wanted, source)


def in_use_by_keras() -> str:
    return sys.modules["keras"].backend.backend() if "keras" in sys.modules else ""


def use(backend: str) -> None:
    """Fix the Keras backend; call before importing TensorFlow, which imports Keras."""
    if not in_use_by_keras():
        os.environ["KERAS_BACKEND"] = backend


def tensorflow_installed() -> bool:
    return any(installed(name) for name in TENSORFLOWS)


def tensorflow_drives_tpus() -> bool:
    """Remote TPUs work with any TensorFlow, a TPU VM's own chips need tensorflow-tpu; read
    from the installed packages, as importing TensorFlow would fix Keras' backend."""
    if any(os.environ.get(name) for name in REMOTE_TPU_ENV):
        return any(installed(name) for name in ("tensorflow", "tensorflow-cpu", "tensorflow-tpu"))
    return bool(installed("tensorflow-tpu"))


def device_files(patterns) -> list[str]:
    return [path for pattern in patterns for path in sorted(glob.glob(pattern))]


def tpu_signs() -> list[str]:
    return [name for name in TPU_ENV if os.environ.get(name)] + device_files(TPU_DEVICE_FILES)


def hide_gpus_from_tensorflow() -> None:
    """tf.data runs beside JAX; TensorFlow must not take the GPU's memory for itself."""
    with contextlib.suppress(ImportError, RuntimeError):
        import tensorflow as tf

        tf.config.set_visible_devices([], "GPU")
