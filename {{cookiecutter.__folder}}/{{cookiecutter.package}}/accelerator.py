"""Which accelerator trains the model, through which Keras backend, on how many replicas.

`detect(cfg)` decides before Keras is imported, because Keras reads its backend once, and
importing TensorFlow imports Keras: each route fixes the backend before it touches either.

1. A backend the user chose (`--backend`, else $KERAS_BACKEND) wins.
2. TPU hardware: TPUStrategy if this TensorFlow can drive TPUs; else Keras on JAX with
   DataParallel if JAX sees TPU devices (Kaggle's TPU image: its TensorFlow is CPU-only);
   else a warning that names the fix, and the CPU.
3. Several GPUs: MirroredStrategy; one GPU: the default strategy.
4. Otherwise the default strategy on the CPU.

`--simulate-replicas N` rehearses an N-replica run on the CPU: N logical CPU devices under
MirroredStrategy (TensorFlow) or N host devices under DataParallel (JAX).

No path raises on a machine without the hardware. Falling back to the CPU where a TPU or
GPU seems present always warns; `require(found, "tpu")` (`doctor --require tpu`, a notebook's
accelerator cell) turns that into a failure.

Importing the package calls `choose_backend()`: it sets $KERAS_BACKEND from the hardware
signs alone, so that code which imports `train` before calling `detect` still loads Keras
with the backend that can drive this machine's accelerator.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import glob
import importlib.metadata
import os
import socket
import sys
import threading

from .config import BACKENDS, Config, UserError, first_line, named

# Signs of TPU hardware: remote TPUs (a named TPU, pod endpoints, legacy Colab), which any
# TensorFlow reaches over the network, and TPU VMs (Kaggle, Cloud), whose chips are local.
REMOTE_TPU_ENV = ("TPU_NAME", "KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS", "COLAB_TPU_ADDR")
TPU_ENV = (*REMOTE_TPU_ENV, "ISTPUVM", "TPU_PROCESS_ADDRESSES")
TPU_DEVICE_FILES = ("/dev/accel*", "/dev/vfio/[0-9]*")  # v2-v4, v5e and later
GPU_DEVICE_FILES = ("/dev/nvidia[0-9]*",)


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
        if self.processes > 1:  # each process reads its own share (dataset.for_training)
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
        if len(self.devices) > 1:
            return self.distribution.scope()
        return contextlib.nullcontext()

    @property
    def image_dtype(self) -> str:
        # TPUs under TensorFlow take no uint8 infeed; bfloat16 holds 0..255 exactly.
        return "bfloat16" if (self.kind, self.backend) == ("tpu", "tensorflow") else "uint8"

    @property
    def writes_files(self) -> bool:
        """Only process 0 writes checkpoints and weights; the others hold the same values."""
        if self.processes == 1:
            return True
        import jax

        return jax.process_index() == 0


# The backend choose_backend() put in $KERAS_BACKEND: a default of ours, not the user's choice.
chosen_at_import = ""


def choose_backend() -> None:
    """Set $KERAS_BACKEND before anything loads Keras, unless it is set or Keras is loaded:
    jax where TPU signs show a TPU that this TensorFlow cannot drive, else tensorflow.
    Reads only the environment, device files and installed packages: it imports nothing."""
    global chosen_at_import
    if os.environ.get("KERAS_BACKEND") or "keras" in sys.modules or "tensorflow" in sys.modules:
        return
    tpu_for_jax = tpu_signs() and not tensorflow_drives_tpus() and installed("jax")
    chosen_at_import = "jax" if tpu_for_jax else "tensorflow"
    os.environ["KERAS_BACKEND"] = chosen_at_import


def detect(cfg: Config) -> Accelerator:
    """The accelerator this run uses; prints what it found. Call before anything imports Keras."""
    found = find(cfg)
    print(describe(found))
    return found


def require(found: Accelerator, kind: str) -> None:
    """Stop with the fix when the run would not use this accelerator ("tpu", "gpu"; "": any)."""
    if kind and found.kind != kind:
        raise UserError(
            f"this run needs a {kind.upper()} but would use the {found.kind} ({found.how}); "
            f"pick a {kind.upper()} accelerator in the notebook's settings (Kaggle: Settings > "
            "Accelerator) and run it again, or make the notebook with --accelerator cpu"
        )


def find(cfg: Config) -> Accelerator:
    backend, source = chosen_backend(cfg.backend)
    if cfg.num_processes > 1:
        if backend == "tensorflow":
            raise UserError(
                f"{named('num_processes')} {cfg.num_processes} with the tensorflow backend "
                f"({source}): Keras 3 cannot fit under MultiWorkerMirroredStrategy "
                f"(keras-team/keras#20585); set {named('backend')} jax"
            )
        backend = "jax"
        start_processes(cfg)
    if cfg.simulate_replicas:
        found = simulated(backend or "tensorflow", cfg.simulate_replicas)
    elif backend == "jax":
        found = on_jax(source)
    elif backend == "tensorflow":
        found = on_tensorflow(source)
    else:
        found = automatic()
    return dataclasses.replace(found, processes=cfg.num_processes)


def chosen_backend(field: str) -> tuple[str, str]:
    """The backend the user asked for and where they said so; ("", "") when they did not."""
    wanted, source = "", ""
    if field:
        wanted, source = field, named("backend")
    elif os.environ.get("KERAS_BACKEND", chosen_at_import) != chosen_at_import:
        wanted, source = os.environ["KERAS_BACKEND"], "$KERAS_BACKEND"
    if wanted and wanted not in BACKENDS:
        raise UserError(f"{source}={wanted!r}: this project runs on " + " or ".join(BACKENDS))
    in_use = keras_backend_in_use()
    if in_use and wanted and wanted != in_use:
        raise UserError(
            f"{source} is {wanted}, but Keras was already loaded with the {in_use} backend "
            "(something imported keras or tensorflow first); restart the kernel and run the "
            "accelerator cell (accelerator.detect) before anything else"
        )
    if in_use and not wanted:
        return in_use, KERAS_LOADED
    return wanted, source


KERAS_LOADED = "Keras, already loaded"


def keras_backend_in_use() -> str:
    if "keras" not in sys.modules:
        return ""
    import keras

    return keras.backend.backend()


def use_backend(backend: str) -> None:
    """Fix the Keras backend; call before importing TensorFlow, which imports Keras."""
    if not keras_backend_in_use():
        os.environ["KERAS_BACKEND"] = backend


def installed(package: str) -> bool:
    try:
        importlib.metadata.version(package)
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


def tensorflow_drives_tpus() -> bool:
    """Remote TPUs work with any TensorFlow; a TPU VM's own chips need the tensorflow-tpu
    build (Kaggle's TPU image has tensorflow-cpu instead). Read from the installed packages:
    importing TensorFlow would fix Keras' backend."""
    if any(os.environ.get(name) for name in REMOTE_TPU_ENV):
        return any(installed(name) for name in ("tensorflow", "tensorflow-cpu", "tensorflow-tpu"))
    return installed("tensorflow-tpu")


def device_files(patterns) -> list[str]:
    return [path for pattern in patterns for path in sorted(glob.glob(pattern))]


def tpu_signs() -> list[str]:
    return [name for name in TPU_ENV if os.environ.get(name)] + device_files(TPU_DEVICE_FILES)


def automatic() -> Accelerator:
    signs = tpu_signs()
    if not signs:
        return tf_devices("no TPU or GPU found", warning="")
    if tensorflow_drives_tpus():
        found, tf_reason = tf_tpu(signs)
        if found:
            return found
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
    signs = tpu_signs()
    if not signs:
        return tf_devices(f"tensorflow from {source}", warning="")
    found, reason = tf_tpu(signs)
    if found:
        return found
    if source == KERAS_LOADED:
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
    use_backend("tensorflow")
    try:
        import tensorflow as tf
    except ImportError as error:
        return None, first_line(error)
    if os.environ.get("TPU_NAME"):
        target, where = os.environ["TPU_NAME"], f"TPU {os.environ['TPU_NAME']}"
    elif os.environ.get("KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS"):
        target, where = None, "TPU pod endpoints"  # the resolver reads them itself
    elif os.environ.get("COLAB_TPU_ADDR"):
        target = "grpc://" + os.environ["COLAB_TPU_ADDR"]
        where = f"legacy Colab TPU at {target}"
    else:
        target, where = "local", "TPU VM (local)"
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver.connect(tpu=target)
        strategy = tf.distribute.TPUStrategy(resolver)
    # A TensorFlow without TPU support raises NotFoundError (an OpError) for `local`,
    # ValueError for a missing name, others for half-working setups; none may escape.
    except (ValueError, RuntimeError, NotImplementedError, KeyError, tf.errors.OpError) as error:
        return None, first_line(error)
    how = f"TPUStrategy, {where} ({', '.join(signs)})"
    return Accelerator(
        "tpu", "tensorflow", strategy.num_replicas_in_sync, how, strategy=strategy
    ), ""


def jax_accelerator(platform: str | None, how: str) -> tuple[Accelerator | None, str]:
    """Keras on JAX over every device of the platform (None: JAX's default), or None and why not."""
    try:
        import jax

        devices = jax.devices(platform) if platform else jax.devices()
    except (ImportError, RuntimeError, ValueError) as error:
        return None, first_line(error)
    use_backend("jax")
    hide_gpus_from_tensorflow()
    kind = devices[0].platform if devices[0].platform in ("tpu", "gpu") else "cpu"
    spread = (
        f"DataParallel over {len(devices)} {kind.upper()} devices"
        if len(devices) > 1
        else f"one {kind.upper()} device"
    )
    return Accelerator(
        kind, "jax", len(devices), f"Keras on JAX, {spread}; {how}", devices=tuple(devices)
    ), ""


def on_jax(source: str) -> Accelerator:
    found, reason = jax_accelerator(None, f"jax from {source}")
    if not found:
        raise UserError(
            f"{source} asks for jax, but JAX does not start ({reason}); install it with "
            "`pip install jax` (Kaggle's and Colab's TPU images have it)"
        )
    if found.kind == "cpu":
        hardware = tpu_signs() + device_files(GPU_DEVICE_FILES)
        if hardware:
            warning = (
                f"hardware signs ({', '.join(hardware)}) but JAX sees only the CPU; install the "
                "jax build for it (jax[tpu] or jax[cuda12]) or use the notebook's own jax"
            )
            found = dataclasses.replace(found, warning=warning)
    return found


def tf_devices(how: str, warning: str) -> Accelerator:
    """MirroredStrategy over several GPUs, the default strategy on one GPU or the CPU."""
    use_backend("tensorflow")
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if len(gpus) > 1:
        strategy = tf.distribute.MirroredStrategy()
        how = f"MirroredStrategy over {len(gpus)} GPUs"
        return Accelerator(
            "gpu", "tensorflow", strategy.num_replicas_in_sync, how, warning, strategy
        )
    strategy = tf.distribute.get_strategy()
    if gpus:
        return Accelerator("gpu", "tensorflow", 1, "default strategy, one GPU", warning, strategy)
    nvidia = device_files(GPU_DEVICE_FILES)
    if nvidia and not warning:
        warning = (
            f"GPU device files ({', '.join(nvidia)}) but TensorFlow sees no GPU (a CPU-only "
            "build, or CUDA libraries missing); training on the CPU. Use the notebook's own "
            "tensorflow, or pip install 'tensorflow[and-cuda]'"
        )
    return Accelerator(
        "cpu", "tensorflow", 1, f"default strategy on the CPU; {how}", warning, strategy
    )


def simulated(backend: str, replicas: int) -> Accelerator:
    """N replicas on the CPU, to rehearse a TPU-8 run: same global batch, same code path."""
    use_backend(backend)
    if backend == "tensorflow":
        import tensorflow as tf

        try:
            cpu = tf.config.list_physical_devices("CPU")[0]
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration()] * replicas
            )
        except RuntimeError:  # TensorFlow already started; enough devices may exist
            pass
        available = len(tf.config.list_logical_devices("CPU"))
        if available < replicas:
            raise UserError(
                f"{named('simulate_replicas')} {replicas}: TensorFlow started with {available} "
                "CPU device(s); restart the kernel and run accelerator.detect() first"
            )
        strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])
        how = f"rehearsal: MirroredStrategy over {replicas} logical CPU devices"
        return Accelerator("cpu", "tensorflow", replicas, how, strategy=strategy)
    try:
        import jax
    except ImportError as error:
        raise UserError(
            f"{named('simulate_replicas')} {replicas} on jax needs JAX, which does not import "
            f"({first_line(error)}); install it with `pip install jax`, or rehearse on "
            f"tensorflow ({named('backend')} tensorflow)"
        ) from error

    with contextlib.suppress(RuntimeError):  # JAX already started; enough devices may exist
        jax.config.update("jax_num_cpu_devices", replicas)
    devices = jax.devices("cpu")
    if len(devices) < replicas:
        raise UserError(
            f"{named('simulate_replicas')} {replicas}: JAX started with {len(devices)} CPU "
            "device(s); restart the kernel and run accelerator.detect() first"
        )
    hide_gpus_from_tensorflow()
    how = f"rehearsal: DataParallel over {len(devices)} JAX host devices"
    return Accelerator("cpu", "jax", len(devices), how, devices=tuple(devices))


def start_processes(cfg: Config) -> None:
    """Join the other processes (JAX); on TPU pods JAX finds its peers itself.

    JAX waits for every process to join, then aborts with a C++ stack trace that names no
    address; a watchdog stops first, after Config.coordinator_timeout, with the fix.
    """
    import jax

    with contextlib.suppress(AttributeError, ValueError):  # CPUs need gloo to talk
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    watchdog = threading.Timer(cfg.coordinator_timeout, stop_waiting, args=(cfg,))
    watchdog.daemon = True
    watchdog.start()
    try:
        jax.distributed.initialize(
            cfg.coordinator or None,
            num_processes=cfg.num_processes,
            process_id=cfg.process_id,
            initialization_timeout=cfg.coordinator_timeout + 60,  # the watchdog goes first
        )
    finally:
        watchdog.cancel()


def stop_waiting(cfg: Config) -> None:
    """Runs on the watchdog's thread while JAX holds the main one: print the error, exit 2."""
    where = cfg.coordinator or "the coordinator JAX found"
    if cfg.process_id == 0:
        why = (
            f"process 0 serves {where}, and not all {cfg.num_processes} processes joined; "
            "start every process with the same --coordinator and --num-processes, each with "
            "its own --process-id, and check that the other hosts can reach this port"
        )
    elif cfg.coordinator and not answers(cfg.coordinator):
        why = (
            f"nothing answers at {where}: start process 0 first with the same --coordinator, "
            "and check the host name, the port and that no firewall is in between"
        )
    else:
        why = (
            f"{where} answers, but not all {cfg.num_processes} processes joined; start every "
            "process with the same --coordinator and --num-processes, each with its own "
            "--process-id"
        )
    print(
        f"error: process {cfg.process_id} waited {cfg.coordinator_timeout} s "
        f"({named('coordinator_timeout')}) for the other processes: {why}",
        file=sys.stderr,
        flush=True,
    )
    os._exit(2)  # the main thread is inside JAX and cannot be interrupted


def answers(address: str) -> bool:
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=3).close()
        return True
    except OSError:
        return False


def hide_gpus_from_tensorflow() -> None:
    """tf.data runs beside JAX; TensorFlow must not take the GPU's memory for itself."""
    with contextlib.suppress(ImportError, RuntimeError):
        import tensorflow as tf

        tf.config.set_visible_devices([], "GPU")


def describe(found: Accelerator) -> str:
    lines = [
        f"accelerator: {found.kind} ({found.how})",
        f"backend: {found.backend}",
        f"replicas: {found.replicas}",
    ]
    if found.processes > 1:
        lines.append(f"processes: {found.processes}")
    if found.warning:
        lines.append(f"WARNING: {found.warning}")
    return "\n".join(lines)
