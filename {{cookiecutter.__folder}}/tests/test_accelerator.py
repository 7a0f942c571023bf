"""Accelerator detection on machines we cannot reach, through fakes: every branch, no crash.

The fakes stand in for the hardware (environment variables, device files), for TensorFlow's
TPU resolver and strategies, for JAX's device list, and for the installed packages.
"""

import fnmatch
import os
import sys
import types
from importlib.metadata import version

import pytest
import tensorflow as tf

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.errors import UserError
from {{ cookiecutter.package }}.runtime.platform import accelerator, backend
from {{ cookiecutter.package }}.runtime.stages.run import start

PACKAGE = "{{ cookiecutter.package }}"


class Device:
    """A JAX device as detect() reads it; a TPU v5e's by default."""

    def __init__(self, platform, process_index=0, device_kind="", compute_capability=""):
        self.platform = platform
        self.process_index = process_index
        self.device_kind = device_kind or ("TPU v5 lite" if platform == "tpu" else platform)
        if compute_capability:  # JAX's CUDA devices have it
            self.compute_capability = compute_capability


class Strategy:
    """Stands for TPUStrategy and MirroredStrategy: only what detect() reads."""

    def __init__(self, *args, **kwargs):
        self.num_replicas_in_sync = 8 if args and args[0] == "resolver" else 2


class Machine:
    """One fake machine: what it has, and what detect() asked of it."""

    def __init__(self, monkeypatch):
        self.monkeypatch = monkeypatch
        self.files = []
        self.gpus = 0
        self.tf_error = None  # raised by TPUClusterResolver.connect
        self.packages = {"tensorflow-cpu"}  # what Kaggle's TPU image installs
        self.jax_tpus = 0  # 0: JAX has no TPU backend
        self.jax_gpu = None  # a Device: JAX's one GPU
        self.connected_to = []
        for name in (*backend.TPU_ENV, "KERAS_BACKEND"):
            monkeypatch.delenv(name, raising=False)  # also undoes what detect() sets
        monkeypatch.setattr(backend, "in_use_by_keras", lambda: "")
        monkeypatch.setattr(backend, "chosen_at_import", "")  # a fresh process
        monkeypatch.setattr(backend, "device_files", self.device_files)
        monkeypatch.setattr(backend, "installed", lambda name: name in self.packages)
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver
        monkeypatch.setattr(resolver, "connect", self.connect)
        monkeypatch.setattr(tf.distribute, "TPUStrategy", Strategy)
        monkeypatch.setattr(tf.distribute, "MirroredStrategy", Strategy)
        real_devices = tf.config.list_physical_devices
        monkeypatch.setattr(
            tf.config,
            "list_physical_devices",
            lambda kind=None: ["gpu"] * self.gpus if kind == "GPU" else real_devices(kind),
        )
        self.jax_config = {}  # what detect() set in jax.config
        jax = types.SimpleNamespace(devices=self.jax_devices, process_index=lambda: 0)
        jax.config = types.SimpleNamespace(update=self.jax_config.__setitem__)
        monkeypatch.setitem(sys.modules, "jax", jax)

    def device_files(self, patterns):
        return [path for path in self.files if any(fnmatch.fnmatch(path, p) for p in patterns)]

    def connect(self, tpu=None):
        self.connected_to.append(tpu)
        if self.tf_error:
            raise self.tf_error
        return "resolver"

    def jax_devices(self, platform=None):
        if platform in ("tpu", None) and self.jax_tpus:
            return [Device("tpu")] * self.jax_tpus
        if platform == "tpu":
            raise RuntimeError("Backend 'tpu' failed to initialize: no libtpu.so")
        return [self.jax_gpu] if self.jax_gpu and platform in ("gpu", None) else [Device("cpu")]

    def detect(self, **fields):
        return start(Config(**fields), read=False).accelerator  # as a command finds it


@pytest.fixture
def machine(monkeypatch):
    return Machine(monkeypatch)


def keras_backend():
    return os.environ.get("KERAS_BACKEND")


def test_no_hardware_gives_the_default_strategy_on_the_cpu(machine):
    found = machine.detect()
    assert (found.kind, found.backend, found.replicas, found.warning) == (
        "cpu",
        "tensorflow",
        1,
        "",
    )
    assert found.strategy is tf.distribute.get_strategy()
    assert keras_backend() == "tensorflow" and machine.connected_to == []


@pytest.mark.parametrize(
    ("env", "target", "where"),
    [
        ({"TPU_NAME": "node-1"}, "node-1", "TPU node-1"),
        ({"KUBE_GOOGLE_CLOUD_TPU_ENDPOINTS": "grpc://10.0.0.3:8470"}, None, "pod endpoints"),
        ({"COLAB_TPU_ADDR": "10.0.0.2:8470"}, "grpc://10.0.0.2:8470", "legacy Colab"),
    ],
)
def test_a_tpu_tensorflow_can_reach_gets_tpu_strategy(machine, monkeypatch, env, target, where):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    found = machine.detect()
    assert (found.kind, found.backend, found.replicas) == ("tpu", "tensorflow", 8)
    assert machine.connected_to == [target] and where in found.how
    assert found.image_dtype == "bfloat16"  # TPUs under TensorFlow take no uint8
    assert keras_backend() == "tensorflow"


def test_a_tpu_vm_with_tensorflow_tpu_connects_locally(machine, monkeypatch):
    monkeypatch.setenv("TPU_PROCESS_ADDRESSES", "local")
    machine.packages.add("tensorflow-tpu")
    found = machine.detect()
    assert (found.kind, found.backend) == ("tpu", "tensorflow") and machine.connected_to == [
        "local"
    ]


@pytest.mark.parametrize(
    "signs",
    [{"ISTPUVM": "1", "TPU_PROCESS_ADDRESSES": "local"}, {"/dev/vfio/0": ""}, {"/dev/accel0": ""}],
    ids=["kaggle-env", "vfio-v5e", "accel-v4"],
)
def test_kaggle_tpu_image_trains_keras_on_jax_over_every_tpu_device(machine, monkeypatch, signs):
    """Kaggle's TPU image: CPU-only TensorFlow, jax[tpu]. TensorFlow is not even imported."""
    for name, value in signs.items():
        if name.startswith("/dev/"):
            machine.files.append(name)
        else:
            monkeypatch.setenv(name, value)
    machine.jax_tpus = 8
    found = machine.detect()
    assert (found.kind, found.backend, found.replicas) == ("tpu", "jax", 8)
    assert "DataParallel over 8 TPU devices" in found.how and "no tensorflow-tpu" in found.how
    assert machine.connected_to == [] and found.warning == ""
    assert keras_backend() == "jax" and found.image_dtype == "uint8"
    said = accelerator.describe(found).splitlines()
    assert "devices: 8 TPU v5 lite" in said
    # Every fold, evaluate and predict load the steps the first fold compiled.
    assert machine.jax_config == {"jax_compilation_cache_dir": "output/jax-cache"}
    machine.jax_config.clear()
    machine.detect(compile_cache=False)
    assert machine.jax_config == {}
    (versions,) = [line for line in said if line.startswith("versions: ")]
    assert f"keras {version('keras')} on jax {version('jax')}, keras-hub " in versions


@pytest.mark.parametrize("chips", ["/dev/vfio/{}", "/dev/accel{}"], ids=["v5e", "v4"])
def test_a_tpu_vm_whose_jax_sees_fewer_devices_than_it_has_chips_stops(machine, chips):
    """Users of Kaggle's v5e-8 met notebooks that saw 1 of its 8 chips: a run at an eighth of
    the speed. The chips are the VM's device files, not a constant."""
    machine.files += [chips.format(number) for number in range(8)]
    machine.jax_tpus = 1
    with pytest.raises(UserError) as caught:
        machine.detect()
    said = str(caught.value)
    assert said.startswith("JAX sees 1 TPU device (TPU v5 lite) but this TPU VM has 8 chips (")
    assert chips.format(7) in said and "restart the session" in said
    machine.jax_tpus = 8  # every chip: no complaint
    assert machine.detect().replicas == 8


@pytest.mark.parametrize(
    "error",
    [
        ValueError("Please provide a TPU Name to connect to."),
        tf.errors.NotFoundError(None, None, "TPUs not found in the cluster"),
        RuntimeError("TPU system already initialized"),
        NotImplementedError("TPU not supported on this platform"),
        KeyError("tpu_worker"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_a_tpu_tensorflow_cannot_use_falls_back_to_the_cpu_loudly(machine, monkeypatch, error):
    monkeypatch.setenv("TPU_NAME", "node-1")
    machine.tf_error = error
    found = machine.detect()
    assert (found.kind, found.backend, found.replicas) == ("cpu", "tensorflow", 1)
    assert type(error).__name__ in found.warning and "TPU_NAME" in found.warning
    assert "training on the CPU" in found.warning
    assert "WARNING: TPU signs (TPU_NAME)" in accelerator.describe(found)


@pytest.mark.parametrize("jax_state", ["no-tpu-backend", "not-installed"])
def test_a_tpu_neither_framework_can_drive_warns_with_the_fix(machine, monkeypatch, jax_state):
    monkeypatch.setenv("ISTPUVM", "1")
    if jax_state == "not-installed":
        monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` raises ImportError
    found = machine.detect()
    assert (found.kind, found.backend) == ("cpu", "tensorflow")
    reason = "failed to initialize" if jax_state == "no-tpu-backend" else "import of jax"
    assert reason in found.warning and "no tensorflow-tpu installed" in found.warning
    assert "pick a TPU accelerator" in found.warning and "no pip install" in found.warning


def test_several_gpus_get_mirrored_strategy_and_one_gpu_the_default(machine):
    machine.gpus = 2
    two = machine.detect()
    assert (two.kind, two.backend, two.replicas) == ("gpu", "tensorflow", 2)
    assert "MirroredStrategy over 2 GPUs" in two.how
    machine.gpus = 1
    one = machine.detect()
    assert (one.kind, one.replicas, one.strategy) == ("gpu", 1, tf.distribute.get_strategy())


def test_a_gpu_is_named_with_its_compute_capability(machine, monkeypatch):
    """What the attention kernel and the precision are chosen by: "Tesla T4, sm75"."""
    machine.gpus = 1
    details = {"device_name": "Tesla T4", "compute_capability": (7, 5)}
    monkeypatch.setattr(tf.config.experimental, "get_device_details", lambda gpu: details)
    assert machine.detect().how == "default strategy, one GPU (Tesla T4, sm75)"
    machine.gpus = 0
    machine.jax_gpu = Device("gpu", device_kind="NVIDIA H100 80GB HBM3", compute_capability="9.0")
    found = machine.detect(backend="jax")
    assert accelerator.devices_of(found) == "1 NVIDIA H100 80GB HBM3 (sm90)"


def test_without_tensorflow_keras_runs_on_jax(machine, monkeypatch):
    """A GPU machine with JAX alone, and Colab's TPU runtime: no TensorFlow to fall back on."""
    machine.packages = {"jax"}
    machine.jax_gpu = Device("gpu", device_kind="NVIDIA H100 80GB HBM3", compute_capability="9.0")
    found = machine.detect()
    assert (found.kind, found.backend, found.replicas) == ("gpu", "jax", 1)
    assert "no TensorFlow installed" in found.how and keras_backend() == "jax"
    machine.jax_gpu = None
    monkeypatch.setenv("ISTPUVM", "1")
    machine.jax_tpus = 1  # Colab's TPU v5e-1
    monkeypatch.delenv("KERAS_BACKEND")  # as a fresh process has it
    assert machine.detect().kind == "tpu"
    monkeypatch.delenv("KERAS_BACKEND")
    monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` raises ImportError
    with pytest.raises(UserError, match="no TensorFlow installed and JAX does not start"):
        machine.detect()


def test_a_gpu_tensorflow_cannot_see_is_a_warning(machine):
    machine.files.append("/dev/nvidia0")
    found = machine.detect()
    assert found.kind == "cpu" and "GPU device files (/dev/nvidia0)" in found.warning


def test_a_chosen_backend_wins_and_jax_is_not_tried_by_tensorflow(machine, monkeypatch):
    """With jax chosen on a TPU machine TensorFlow never touches the TPU: the two must not
    both initialise it in one process."""
    monkeypatch.setenv("TPU_NAME", "node-1")
    machine.jax_tpus = 4
    found = machine.detect(backend="jax")
    assert (found.kind, found.backend, found.replicas) == ("tpu", "jax", 4)
    assert machine.connected_to == [] and "jax from Config.backend / --backend" in found.how
    monkeypatch.setenv("KERAS_BACKEND", "tensorflow")
    machine.tf_error = tf.errors.NotFoundError(None, None, "no TPU")
    found = machine.detect()  # $KERAS_BACKEND, as Kaggle's images set it
    assert (found.kind, found.backend) == ("cpu", "tensorflow")
    assert "Keras on JAX can: set $KERAS_BACKEND to jax" in found.warning


def test_jax_on_a_machine_whose_jax_sees_only_the_cpu_warns(machine):
    machine.files.append("/dev/accel0")
    found = machine.detect(backend="jax")
    assert (found.kind, found.backend, found.replicas) == ("cpu", "jax", 1)
    assert "JAX sees only the CPU" in found.warning and "jax[tpu]" in found.warning


def test_backends_this_project_cannot_run_on_are_refused(machine, monkeypatch):
    monkeypatch.setenv("KERAS_BACKEND", "torch")
    with pytest.raises(UserError, match=r"\$KERAS_BACKEND='torch': .* tensorflow or jax"):
        machine.detect()


def test_a_backend_keras_already_fixed_cannot_change(machine, monkeypatch):
    monkeypatch.setattr(backend, "in_use_by_keras", lambda: "tensorflow")
    with pytest.raises(UserError, match="already loaded with the tensorflow backend .*restart"):
        machine.detect(backend="jax")
    assert machine.detect().backend == "tensorflow"  # no choice: the one in use


def test_keras_loaded_before_detection_on_a_tpu_it_cannot_drive_says_restart(machine, monkeypatch):
    """A notebook that imported tensorflow before the accelerator cell, on Kaggle's TPU image:
    refused with the fix, instead of hours on the CPU."""
    monkeypatch.setenv("ISTPUVM", "1")
    machine.jax_tpus = 8
    machine.tf_error = tf.errors.NotFoundError(None, None, "TPUs not found in the cluster")
    monkeypatch.setattr(backend, "in_use_by_keras", lambda: "tensorflow")
    with pytest.raises(UserError) as caught:
        machine.detect()
    assert "Restart the kernel and run the accelerator cell" in str(caught.value)
    assert "before anything imports tensorflow or keras" in str(caught.value)


@pytest.mark.parametrize(
    ("env", "packages", "chosen"),
    [
        ({}, {"tensorflow-cpu", "jax"}, "tensorflow"),
        ({"ISTPUVM": "1"}, {"tensorflow-cpu", "jax"}, "jax"),  # Kaggle's TPU image
        ({"ISTPUVM": "1"}, {"tensorflow-tpu", "jax"}, "tensorflow"),
        ({"ISTPUVM": "1"}, {"tensorflow-cpu"}, "tensorflow"),  # no JAX to run on
        ({}, {"jax"}, "jax"),  # a GPU machine with JAX alone
    ],
    ids=["no-tpu", "kaggle-tpu", "tensorflow-tpu", "no-jax", "jax-alone"],
)
def test_importing_the_package_picks_the_backend_the_hardware_needs(
    machine, monkeypatch, env, packages, chosen
):
    """So `from package.train import train` before detect() still trains on Kaggle's TPU."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    machine.packages = packages
    monkeypatch.delitem(sys.modules, "keras", raising=False)
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    backend.choose()
    assert keras_backend() == chosen == backend.chosen_at_import
    monkeypatch.setenv("KERAS_BACKEND", "torch")  # a user's own choice is never replaced
    backend.choose()
    assert keras_backend() == "torch"


def test_require_stops_a_run_on_the_wrong_accelerator_with_the_fix():
    cpu = accelerator.Accelerator("cpu", "jax", 1, "one CPU device")
    accelerator.require(cpu, "")  # nothing required
    with pytest.raises(UserError, match="needs a TPU but would use the cpu .*Accelerator"):
        accelerator.require(cpu, "tpu")


def test_several_processes_need_jax(machine):
    with pytest.raises(UserError, match="MultiWorkerMirroredStrategy .*; set Config.backend"):
        machine.detect(backend="tensorflow", num_processes=2)


def test_a_jax_rehearsal_without_jax_says_how_to_install_it(machine, monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` raises ImportError
    with pytest.raises(UserError, match="simulate-replicas 8 on jax needs JAX.*pip install jax"):
        machine.detect(backend="jax", simulate_replicas=8)


@pytest.mark.accelerator
@pytest.mark.slow
def test_the_machines_accelerator_is_found_and_doctor_is_ready_on_it(
    demo_dir, tmp_path, run_python
):
    """On a TPU or GPU machine (a Kaggle notebook's, a cloud VM), as a fresh process sees it:
    detection finds the accelerator, and the demo passes every check with it required."""
    flags = ["--preset", "demo", "--data-dir", str(demo_dir), "--output-dir", str(tmp_path)]
    for kind in ("tpu", "gpu"):
        done = run_python("-m", PACKAGE, "doctor", *flags, "--require", kind, backend="")
        if done.returncode == 0:
            break
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"accelerator: {kind}" in done.stdout
    assert "problems: none, ready to train" in done.stdout
