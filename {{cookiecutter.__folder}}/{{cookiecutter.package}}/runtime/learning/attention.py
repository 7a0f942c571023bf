"""Which attention kernel a transformer backbone runs, decided before the model is built.

Keras 3 on JAX, asked for attention with no kernel named (what keras-hub's DINOv2, DINOv3 and
SigLIP layers do), tries cuDNN's fused attention wherever its own check passes; that check is
made for inference, and a training step on a length cuDNN cannot train on fails at each trace
with `ERROR:absl:Failed to apply cudnn implementation of jax.nn.dot_product_attention` and a
traceback, then runs XLA's plain attention. Here the same rules are applied up front, from the
device, the precision and the token counts the image size gives: the fused kernel where cuDNN
takes it, else the plain path, with Keras told so before the first layer is made. The rules,
as JAX 0.10-0.11 (jax/_src/cudnn/fused_attention_stablehlo.py) and Keras 3.13-3.15
(keras/src/backend/jax/nn.py) apply them:
- Keras on JAX on an NVIDIA GPU of compute capability 8.0 (A100) or later; a T4 (7.5) has
  none, TensorFlow's backend never fuses, and on TPUs XLA's own attention runs;
- float16 or bfloat16 queries;
- a head width that is a multiple of 8, at most 128 (256 from compute capability 9.0, H100);
- training: an even count of query and key tokens (JAX passes an empty bias, and cuDNN's
  backward pass with a bias takes only even lengths: DINOv3 at 224 px attends over 201). An
  odd count is padded by one token here, the padding masked out of every query's keys and
  cut from the output, so the fused kernel still runs (JAX 0.10's own check then passes;
  not yet timed on a GPU).
"""

from __future__ import annotations

import dataclasses
import functools

from ..backbone_choices import BACKBONES

FUSED, PLAIN = "cuDNN's fused attention", "plain attention"


@dataclasses.dataclass(frozen=True)
class Device:
    """What the choice needs of the device: the Keras backend, JAX's platform ("gpu", "tpu",
    "cpu"), its name and its CUDA compute capability ("9.0"; "" for none)."""

    backend: str
    platform: str
    name: str = ""
    capability: str = ""

    @classmethod
    def of(cls, backend: str, device=None) -> Device:
        """From a JAX device (None under TensorFlow, which never fuses)."""
        if device is None:
            return cls(backend, "")
        capability = getattr(device, "compute_capability", "") or ""
        return cls(backend, device.platform, device.device_kind, capability)

    @property
    def sm(self) -> tuple[int, int]:
        return tuple(int(part) for part in (self.capability or "0.0").split(".")[:2])

    def __str__(self) -> str:
        sm = f", sm{''.join(self.capability.split('.')[:2])}" if self.capability else ""
        return f"{self.name or self.platform}{sm}"


@dataclasses.dataclass(frozen=True)
class Choice:
    fused: bool  # cuDNN's fused kernel for at least one of the backbone's attentions
    line: str  # what runs and why, as doctor says it

    def describe(self) -> str:
        return f"attention: {self.line}"


def kernel(device: Device, queries: int, keys: int, head_dim: int, dtype: str) -> tuple[bool, str]:
    """Whether cuDNN's fused kernel trains this attention on `device`, and why not where not."""
    if device.backend != "jax":
        return False, f"Keras on {device.backend} has no fused kernel to pick"
    if device.platform != "gpu":
        return False, f"the {device.platform.upper()} runs XLA's own"
    if device.sm < (8, 0):
        return False, f"{device} has no cuDNN fused attention (it needs sm80, an A100, or later)"
    if dtype not in ("float16", "bfloat16"):
        return False, f"cuDNN's fused kernel takes float16 or bfloat16, not {dtype}"
    widest = 256 if device.sm >= (9, 0) else 128
    if head_dim % 8 or head_dim > widest:
        return False, f"heads {head_dim} wide (cuDNN: a multiple of 8 up to {widest})"
    if queries % 2 or keys % 2:  # what `evened` does to them
        padded = f"{queries + queries % 2} over {keys + keys % 2}"
        return True, f"{device}, {dtype}, padded to {padded} tokens, the padding masked"
    return True, f"{device}, {dtype}"


def attentions(backbone: str, image_size: int) -> list[tuple[str, int, int, int]]:
    """Each attention the backbone runs through Keras' dot_product_attention at this size:
    (what it is, query tokens, key tokens, head width); [] for none."""
    choice = BACKBONES[backbone]
    spec = choice.attention
    if spec is None or spec.window:
        return []
    patches = (image_size // choice.patch_size) ** 2
    tokens = patches + spec.extra_tokens
    found = [("its layers", tokens, tokens, spec.head_dim)]
    if spec.probe:  # a pooling head: one learned query over the patches
        found.append(("its pooling head", 1, tokens, spec.head_dim))
    return found


def choose(backbone: str, image_size: int, precision: str, device: Device) -> Choice:
    """The attention a run of `backbone` at `image_size` px under the dtype policy
    `precision` takes on `device`, and why, in one line."""
    choice = BACKBONES[backbone]
    spec = choice.attention
    if spec.window:
        return Choice(
            False,
            f"{PLAIN}: keras-hub's {choice.title} computes its windows' attention "
            f"({spec.window} tokens) with its own matrix products, so no kernel is tried",
        )
    dtype = precision.split("_")[-1]
    verdicts = [
        (what, queries, tokens, *kernel(device, queries, tokens, width, dtype))
        for what, queries, tokens, width in attentions(backbone, image_size)
    ]
    at = f"{choice.title} at {image_size} px"
    if len({verdict[3:] for verdict in verdicts}) == 1:  # one verdict for all
        _, _, tokens, fused, why = verdicts[0]
        return Choice(fused, f"{FUSED if fused else PLAIN} ({at}, {tokens} tokens: {why})")
    parts = [
        f"{what} ({queries} over {tokens} tokens): {FUSED if fused else PLAIN} ({why})"
        for what, queries, tokens, fused, why in verdicts
    ]
    return Choice(any(verdict[3] for verdict in verdicts), f"{at}: " + "; ".join(parts))


def prepare(backbone: str, image_size: int, precision: str) -> Choice:
    """Choose the attention for this process's device and tell Keras, before the backbone's
    layers are made."""
    import keras

    device = Device(keras.backend.backend(), "")
    if device.backend == "jax":
        import jax

        device = Device.of("jax", jax.devices()[0])
    choice = choose(backbone, image_size, precision, device)
    tell_keras(choice, device)
    return choice


# The device the rules apply to in this process, once tell_keras has been called.
_told: list[Device] = []


def tell_keras(choice: Choice, device: Device) -> None:
    """Before the model is built: Keras' attention layers read the global switch when made
    (keras.config.disable_flash_attention, Keras 3.8 and later), and on JAX every attention
    asked for with no kernel named (keras-hub's DINOv3 names none and reads no switch) gets
    the plain path wherever `kernel` says cuDNN's would fail."""
    import keras

    switch = "enable_flash_attention" if choice.fused else "disable_flash_attention"
    if hasattr(keras.config, switch):
        getattr(keras.config, switch)()
    _told[:] = [device]
    if keras.backend.backend() == "jax":
        from keras.src import backend  # Keras 3.13-3.15: ops.nn calls backend.nn's function

        original = backend.nn.dot_product_attention
        if not hasattr(original, "rules_applied"):
            backend.nn.dot_product_attention = following_the_rules(original)


def following_the_rules(original):
    """`original` (Keras' backend dot_product_attention), given flash_attention=False where
    `kernel` says cuDNN's fused attention cannot train these shapes on the device told; left
    to Keras (None) where it can."""

    @functools.wraps(original)
    def dot_product_attention(query, key, value, *args, flash_attention=None, **kwargs):
        if flash_attention is None and _told:
            import keras

            dtype = keras.backend.standardize_dtype(query.dtype)
            fused, _ = kernel(_told[0], query.shape[1], key.shape[1], query.shape[-1], dtype)
            flash_attention = None if fused else False
            if fused and (query.shape[1] % 2 or key.shape[1] % 2):
                masked = kwargs.get("bias") is not None or kwargs.get("mask") is not None
                if args or masked or kwargs.get("is_causal"):
                    flash_attention = False  # a mask of its own: not padded here
                else:
                    return evened(original, query, key, value, **kwargs)
        return original(query, key, value, *args, flash_attention=flash_attention, **kwargs)

    dot_product_attention.rules_applied = True
    return dot_product_attention


def evened(original, query, key, value, **kwargs):
    """`original`'s attention over tokens padded to even counts, which cuDNN's fused kernel
    trains on: the padded key masked out of every query's attention, the padded query's row
    cut from the output, so the result is the unpadded attention's."""
    import jax.numpy as jnp

    queries, keys = query.shape[1], key.shape[1]

    def even(tokens):  # (batch, tokens, heads, width)
        return jnp.pad(tokens, [(0, 0), (0, tokens.shape[1] % 2), (0, 0), (0, 0)])

    query, key, value = even(query), even(key), even(value)
    seen = jnp.arange(key.shape[1]) < keys
    kwargs["mask"] = jnp.broadcast_to(seen, (1, 1, query.shape[1], key.shape[1]))
    return original(query, key, value, flash_attention=None, **kwargs)[:, :queries]
