"""N replicas on the CPU (Config.simulate_replicas), to rehearse a TPU-8 run on a laptop:
the same global batch and the same code path, over N logical CPU devices under
MirroredStrategy (TensorFlow) or N host devices under DataParallel (JAX)."""

from __future__ import annotations

import contextlib
import functools

from ..errors import UserError, first_line, named
from . import backend


@functools.cache
def tensorflow_strategy(replicas: int):
    """MirroredStrategy over `replicas` logical CPU devices, one for the process: a second
    strategy over the same devices numbers its all-reduces from the start again, and TensorFlow
    stops the first step of another model ("Shape mismatch in the collective instance")."""
    backend.use("tensorflow")
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
    return tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(replicas)])


def jax_devices(replicas: int) -> tuple:
    """`replicas` JAX host devices, for DataParallel."""
    backend.use("jax")
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
    backend.hide_gpus_from_tensorflow()
    return tuple(devices)


def simulated(chosen: str, replicas: int) -> dict:
    """N replicas on the CPU, to rehearse a TPU-8 run: same global batch, same code path; what
    accelerator.py's Accelerator holds of them."""
    if chosen == "tensorflow":
        strategy = tensorflow_strategy(replicas)
        how = f"rehearsal: MirroredStrategy over {replicas} logical CPU devices"
        return {"backend": "tensorflow", "replicas": replicas, "how": how, "strategy": strategy}
    devices = jax_devices(replicas)
    how = f"rehearsal: DataParallel over {len(devices)} JAX host devices"
    return {"backend": "jax", "replicas": len(devices), "how": how, "devices": devices}
