"""Which accelerator trains the model, through which Keras backend, on how many replicas:
the backend the user chose, else on a TPU TPUStrategy or Keras on JAX (Kaggle's TPU image has a
CPU-only TensorFlow), MirroredStrategy over several GPUs, else the default strategy. A fallback
to the CPU where a TPU or GPU seems present warns; `require` makes it a failure."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import os
from pathlib import Path

from ..config import Config
from ..errors import UserError, first_line, named
from . import backend, processes, rehearsal, startup_logs, versions
from .files import unwritable

COMPILE_CACHE = "jax-cache"  # under the output folder: the programs JAX compiled


@dataclasses.dataclass(frozen=True)
class Accelerator:
    kind: str  # "tpu", "gpu" or "cpu"
    backend: str  # "tensorflow" or "jax"
    replicas: int  # model replicas in sync, over all processes
    how: str  # how it was found, for the log
    warning: str = ""
    strategy: object = None  # TensorFlow: the tf.distribute strategy
    devices: tuple = ()  # JAX: the devices DataParallel splits each batch over
    processes: int = 1

    @functools.cached_property
    def distribution(self):
        import keras

        distribution = keras.distribution.DataParallel(devices=list(self.devices))
        if self.processes > 1:  # each process reads its own share (pipeline.for_training)
            if not hasattr(type(distribution), "auto_shard_dataset"):
                raise UserError(
                    f"Keras {keras.__version__} cannot take a share of the batch from each "
                    "process; several processes need a newer Keras (pip install -U keras)"
                )
            distribution.auto_shard_dataset = False
        return distribution

    def scope(self):
        """Build, compile, fit and predict inside this."""
        if self.backend == "tensorflow":
            return self.strategy.scope()
        return self.distribution.scope() if len(self.devices) > 1 else contextlib.nullcontext()

    @property
    def image_dtype(self) -> str:
        # TPUs under TensorFlow take no uint8 infeed; bfloat16 holds 0..255 exactly.
        return "bfloat16" if (self.kind, self.backend) == ("tpu", "tensorflow") else "uint8"

    def global_batch(self, batch_size: int) -> int:
        return batch_size * self.replicas

    def precision(self, requested: str) -> str:
        """The Keras dtype policy: bfloat16 compute on TPUs, float16 on GPUs, float32 on CPUs."""
        if requested != "auto":
            return requested
        return {"tpu": "mixed_bfloat16", "gpu": "mixed_float16"}.get(self.kind, "float32")

    @property
    def writes_files(self) -> bool:
        """Only process 0 writes checkpoints and weights; the others hold the same values."""
        if self.processes == 1:
            return True
        import jax

        return jax.process_index() == 0


def detect(cfg: Config, output: Path) -> Accelerator:
    """The accelerator this run uses, printed; JAX compiles into the run's `output` folder."""
    with startup_logs.held_to_level():  # TensorFlow's and XLA's start-up lines
        found = find(cfg)
    print(describe(found))
    # Not in a bucket that refuses writes: TensorFlow's gs:// client would ask for ever.
    if found.backend == "jax" and cfg.compile_cache and not unwritable(output, buckets=True):
        import jax

        cache = output / COMPILE_CACHE
        jax.config.update("jax_compilation_cache_dir", str(cache))
        print(f"compile cache: {cache} (each step compiled once: every fold, evaluate, predict)")
    return found


def require(device: Accelerator, kind: str) -> None:
    """Stop with the fix when the run would not use this accelerator ("tpu", "gpu"; "": any)."""
    if kind and device.kind != kind:
        raise UserError(
            f"this run needs a {kind.upper()} but would use the {device.kind} ({device.how}); "
            f"pick a {kind.upper()} accelerator in the notebook's settings (Kaggle: Settings > "
            "Accelerator) and run it again, or make the notebook with --accelerator cpu"
        )


def find(cfg: Config) -> Accelerator:
    chosen, source = backend.asked_for(cfg.backend)
    if cfg.num_processes > 1:  # a pod's hosts, or machines joined by hand
        if chosen == "tensorflow":
            raise UserError(
                f"{named('num_processes')} {cfg.num_processes} with the tensorflow backend "
                f"({source}): Keras 3 cannot fit under MultiWorkerMirroredStrategy "
                f"(keras-team/keras#20585); set {named('backend')} jax"
            )
        chosen = "jax"
        processes.join(cfg)
    if cfg.simulate_replicas:  # a TPU-8 run rehearsed on the CPU
        simulated = rehearsal.simulated(chosen or "tensorflow", cfg.simulate_replicas)
        found = Accelerator("cpu", **simulated)
    elif chosen:
        found = on_jax(source) if chosen == "jax" else on_tensorflow(source)
    else:
        found = automatic()
    return dataclasses.replace(found, processes=cfg.num_processes)


def automatic() -> Accelerator:
    if not backend.tensorflow_installed():  # Colab's TPU, a GPU machine with JAX alone
        found, reason = jax_accelerator(None, "no TensorFlow installed")
        if not found:
            raise UserError(
                f"no TensorFlow installed and JAX does not start ({reason}); install one: "
                "`pip install jax` (or jax[cuda12] for a GPU), or `pip install tensorflow`"
            )
        return found
    signs = backend.tpu_signs()
    if not signs:
        return tf_devices("no TPU or GPU found", warning="")
    if backend.tensorflow_drives_tpus():
        found, tf_reason = tf_tpu(signs)
        jax_reason = "not tried: TensorFlow has already fixed Keras' backend"
    else:
        tf_reason = "no tensorflow-tpu installed"
        found, jax_reason = jax_accelerator("tpu", f"TensorFlow cannot drive the TPU ({tf_reason})")
    if found:
        return found
    warning = (
        f"TPU signs ({', '.join(signs)}) but neither TensorFlow ({tf_reason}) nor JAX "
        f"({jax_reason}) can drive the TPU; training on the CPU. In a Kaggle notebook, pick a "
        "TPU accelerator and keep the image's own jax, keras and tensorflow (no pip install)"
    )
    return tf_devices("the TPU is unusable", warning)


def on_tensorflow(source: str) -> Accelerator:
    signs = backend.tpu_signs()
    if not signs:
        return tf_devices(f"tensorflow from {source}", warning="")
    found, reason = tf_tpu(signs)
    if found:
        return found
    if source == backend.KERAS_LOADED:
        raise UserError(
            f"TPU signs ({', '.join(signs)}), but Keras was loaded with the tensorflow backend "
            f"before the accelerator was chosen, and this TensorFlow cannot drive the TPU "
            f"({reason}). Restart the kernel and run the accelerator cell (accelerator.detect) "
            "before anything imports tensorflow or keras: it picks JAX for this TPU"
        )
    warning = (
        f"TPU signs ({', '.join(signs)}) but TensorFlow cannot drive the TPU ({reason}); "
        f"training on the CPU. Keras on JAX can: set {source} to jax"
    )
    return tf_devices(f"tensorflow from {source}", warning)


def tf_tpu(signs: list[str]) -> tuple[Accelerator | None, str]:
    """TPUStrategy through the resolver the signs call for, or None and why not."""
    backend.use("tensorflow")
    try:
        import tensorflow as tf
    except ImportError as error:
        return None, first_line(error)
    name, colab = os.environ.get("TPU_NAME"), os.environ.get("COLAB_TPU_ADDR")
    if name:
        target, where = name, f"TPU {name}"
    elif os.environ.get("KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS"):
        target, where = None, "TPU pod endpoints"  # the resolver reads them itself
    elif colab:
        target, where = f"grpc://{colab}", f"legacy Colab TPU at grpc://{colab}"
    else:
        target, where = "local", "TPU VM (local)"
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver.connect(tpu=target)
        strategy = tf.distribute.TPUStrategy(resolver)
    # A TensorFlow without TPU support raises NotFoundError for `local`, others elsewhere.
    except (ValueError, RuntimeError, NotImplementedError, KeyError, tf.errors.OpError) as error:
        return None, first_line(error)
    how, replicas = f"TPUStrategy, {where} ({', '.join(signs)})", strategy.num_replicas_in_sync
    return Accelerator("tpu", "tensorflow", replicas, how, strategy=strategy), ""


def jax_accelerator(platform: str | None, how: str) -> tuple[Accelerator | None, str]:
    """Keras on JAX over every device of the platform (None: JAX's default), or None and why not."""
    try:
        import jax

        devices = jax.devices(platform) if platform else jax.devices()
    except (ImportError, RuntimeError, ValueError) as error:
        return None, first_line(error)
    backend.use("jax")
    backend.hide_gpus_from_tensorflow()
    kind = devices[0].platform if devices[0].platform in ("tpu", "gpu") else "cpu"
    if kind == "tpu":
        every_chip_seen(devices, jax.process_index())
    spread = f"one {kind.upper()} device"
    if len(devices) > 1:
        spread = f"DataParallel over {len(devices)} {kind.upper()} devices"
    how = f"Keras on JAX, {spread}; {how}"
    return Accelerator(kind, "jax", len(devices), how, devices=tuple(devices)), ""


def every_chip_seen(devices, process: int) -> None:
    """Stop where another process holds some of this TPU VM's chips: JAX would train on the rest."""
    chips = backend.device_files(backend.TPU_DEVICE_FILES)
    seen = [device for device in devices if device.process_index == process]
    if chips and len(seen) < len(chips):
        kinds = ", ".join(sorted({device.device_kind for device in seen}))
        raise UserError(
            f"JAX sees {len(seen)} TPU device{'s' if len(seen) > 1 else ''} ({kinds}) but this "
            f"TPU VM has {len(chips)} chips ({', '.join(chips)}): another process holds the rest "
            "(an earlier kernel, or TensorFlow given the TPU); restart the session, and set "
            "no TPU_VISIBLE_CHIPS"
        )


def on_jax(source: str) -> Accelerator:
    found, reason = jax_accelerator(None, f"jax from {source}")
    if not found:
        raise UserError(
            f"{source} asks for jax, but JAX does not start ({reason}); install it with "
            "`pip install jax` (Kaggle's and Colab's TPU images have it)"
        )
    if found.kind != "cpu":
        return found
    if hardware := backend.tpu_signs() + backend.device_files(backend.GPU_DEVICE_FILES):
        warning = (
            f"hardware signs ({', '.join(hardware)}) but JAX sees only the CPU; install the "
            "jax build for it (jax[tpu] or jax[cuda12]) or use the notebook's own jax"
        )
        found = dataclasses.replace(found, warning=warning)
    return found


def tf_devices(how: str, warning: str) -> Accelerator:
    """MirroredStrategy over several GPUs, the default strategy on one GPU or the CPU."""
    backend.use("tensorflow")
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    several = len(gpus) > 1
    strategy = tf.distribute.MirroredStrategy() if several else tf.distribute.get_strategy()
    if gpus:
        how = f"MirroredStrategy over {len(gpus)} GPUs" if several else "default strategy, one GPU"
        how += f" ({tf_gpu_name(tf, gpus[0])})"
        replicas = strategy.num_replicas_in_sync
        return Accelerator("gpu", "tensorflow", replicas, how, warning, strategy)
    nvidia = backend.device_files(backend.GPU_DEVICE_FILES)
    if nvidia and not warning:
        warning = (
            f"GPU device files ({', '.join(nvidia)}) but TensorFlow sees no GPU (a CPU-only "
            "build, or CUDA libraries missing); training on the CPU. Use the notebook's own "
            "tensorflow, or pip install 'tensorflow[and-cuda]'"
        )
    how = f"default strategy on the CPU; {how}"
    return Accelerator("cpu", "tensorflow", 1, how, warning, strategy)


def tf_gpu_name(tf, gpu) -> str:
    """The GPU's name and compute capability as TensorFlow reads them: "Tesla T4, sm75"."""
    name = str(getattr(gpu, "name", gpu))
    try:
        details = tf.config.experimental.get_device_details(gpu)
    except (ValueError, RuntimeError, AttributeError):  # not a device TensorFlow knows
        return name
    capability = details.get("compute_capability")
    sm = f", sm{''.join(str(part) for part in capability)}" if capability else ""
    return f"{details.get('device_name', name)}{sm}"


def describe(device: Accelerator) -> str:
    lines = [f"accelerator: {device.kind} ({device.how})", f"backend: {device.backend}"]
    lines += [f"replicas: {device.replicas}"]
    lines += [f"processes: {device.processes}"] if device.processes > 1 else []
    lines += [f"devices: {devices_of(device)}", f"versions: {versions.of_run(device.backend)}"]
    return "\n".join(lines + ([f"WARNING: {device.warning}"] if device.warning else []))


def devices_of(device: Accelerator) -> str:
    """The devices the run trains on, by kind: "8 TPU v5 lite", "2 GPU", "1 CPU"."""
    if not device.devices:  # TensorFlow: its strategy's replicas
        return f"{device.replicas} {device.kind.upper()}"
    kinds = collections.Counter(named_device(device) for device in device.devices)
    return ", ".join(f"{count} {kind}" for kind, count in kinds.items())


def named_device(device) -> str:
    """A JAX device's kind, with its CUDA compute capability for a GPU: "Tesla T4 (sm75)"."""
    capability = getattr(device, "compute_capability", "") if device.platform == "gpu" else ""
    sm = f" (sm{''.join(str(capability).split('.')[:2])})" if capability else ""
    return f"{device.device_kind}{sm}"
