"""Which attention kernel each transformer backbone runs, decided before the model is built:
cuDNN's fused kernel where that GPU has it (an odd token count padded by one, masked), else
the plain path, with Keras told so up front, never left to a try that fails and logs a traceback
(`Failed to apply cudnn implementation of jax.nn.dot_product_attention`)."""

import keras
import numpy as np
import pytest

from {{ cookiecutter.package }}.runtime.learning import attention
from {{ cookiecutter.package }}.runtime.learning.attention import FUSED, PLAIN, Device

pytestmark = pytest.mark.quick  # pure: make test-quick runs it

CPU = Device("jax", "cpu", "cpu")
TPU = Device("jax", "tpu", "TPU v5 lite")
T4 = Device("jax", "gpu", "Tesla T4", "7.5")
A100 = Device("jax", "gpu", "NVIDIA A100-SXM4-40GB", "8.0")
H100 = Device("jax", "gpu", "NVIDIA H100 80GB HBM3", "9.0")
TF_GPU = Device("tensorflow", "")

# backbone, image size, its tokens (patches + class and register tokens), counted by hand
TOKENS = [
    ("dinov2-small", 224, 16 * 16 + 1),
    ("dinov2-small", 448, 32 * 32 + 1),
    ("dinov2-small", 518, 37 * 37 + 1),
    ("dinov3-small", 224, 14 * 14 + 5),
    ("dinov3-small", 240, 15 * 15 + 5),
    ("dinov3-small", 384, 24 * 24 + 5),
    ("dinov3-small", 512, 32 * 32 + 5),
    ("dinov3-base", 224, 14 * 14 + 5),
    ("dinov3-base", 400, 25 * 25 + 5),
]


@pytest.fixture
def keras_default_attention():
    yield
    keras.config.enable_flash_attention()  # Keras' default: its layers decide
    attention._told.clear()


@pytest.mark.parametrize(("backbone", "size", "tokens"), TOKENS)
def test_a_vits_attention_is_fused_only_on_a_recent_gpu_and_odd_counts_are_padded(
    backbone, size, tokens
):
    """cuDNN trains only even lengths (DINOv3 at 224 px: 201 tokens, the H100's tracebacks),
    so an odd count is padded by one; a T4, the CPU, a TPU and TensorFlow's backend never
    run it."""
    for device in (CPU, TPU, T4, TF_GPU):
        choice = attention.choose(backbone, size, "mixed_float16", device)
        assert not choice.fused and choice.line.startswith(PLAIN), (device, choice)
        assert f"{tokens} tokens" in choice.line
    for device in (A100, H100):
        choice = attention.choose(backbone, size, "mixed_bfloat16", device)
        assert choice.fused and choice.line.startswith(FUSED), (device, choice)
        assert f"{tokens} tokens" in choice.line
        padded = f"padded to {tokens + 1} over {tokens + 1} tokens, the padding masked"
        assert (padded in choice.line) == (tokens % 2 == 1), choice.line
    in_float32 = attention.choose(backbone, size, "float32", H100)
    assert not in_float32.fused and "not float32" in in_float32.line


def test_the_reasons_name_the_device_and_the_rule():
    assert attention.choose("dinov3-small", 224, "mixed_float16", H100).describe() == (
        f"attention: {FUSED} (DINOv3 ViT-S/16 at 224 px, 201 tokens: NVIDIA H100 80GB HBM3, "
        "sm90, float16, padded to 202 over 202 tokens, the padding masked)"
    )
    on_t4 = attention.choose("dinov3-small", 240, "mixed_float16", T4).line
    assert "Tesla T4, sm75 has no cuDNN fused attention (it needs sm80" in on_t4
    on_h100 = attention.choose("dinov3-small", 240, "mixed_float16", H100).line
    device = "NVIDIA H100 80GB HBM3, sm90"
    assert on_h100 == f"{FUSED} (DINOv3 ViT-S/16 at 240 px, 230 tokens: {device}, float16)"


def test_siglip_fuses_its_layers_and_not_its_one_query_pooling_head():
    """196 patch tokens go fused on an H100; its head's single query is padded to two."""
    choice = attention.choose("siglip-base", 224, "mixed_float16", H100)
    assert choice.fused
    assert f"its layers (196 over 196 tokens): {FUSED} (NVIDIA H100" in choice.line
    padded = "padded to 2 over 196 tokens, the padding masked"
    assert f"its pooling head (1 over 196 tokens): {FUSED}" in choice.line
    assert padded in choice.line
    on_t4 = attention.choose("siglip-base", 224, "mixed_float16", T4)
    assert not on_t4.fused and on_t4.line.startswith(f"{PLAIN} (SigLIP ViT-B/16 at 224 px")


@pytest.mark.parametrize("device", [CPU, TPU, T4, H100])
def test_swin_tries_no_kernel(device):
    """keras-hub's Swin multiplies its 7x7 windows' matrices itself (doctor says a CNN has no
    attention: test_train)."""
    for size in (224, 384):
        swin = attention.choose("swin-tiny", size, "mixed_float16", device)
        assert not swin.fused and "windows' attention (49 tokens)" in swin.line


def test_keras_is_told_before_the_model_is_built(keras_default_attention):
    """A plain choice switches Keras' flash attention off (its attention layers read the switch
    when made), and every attention asked for with no kernel named (keras-hub's DINOv3) is
    given flash_attention=False where cuDNN's cannot run, None (Keras decides) where it can,
    after padding an odd token count to an even one."""
    plain = attention.choose("dinov3-small", 224, "mixed_float16", T4)
    attention.tell_keras(plain, T4)
    assert keras.config.is_flash_attention_enabled() is False
    fused = attention.choose("dinov3-small", 240, "mixed_float16", H100)
    attention.tell_keras(fused, H100)
    assert keras.config.is_flash_attention_enabled() is None  # Keras' own default

    asked = []

    def keras_attention(query, key, value, bias=None, mask=None, flash_attention=None):
        asked.append((query.shape[1], flash_attention))
        return query

    ruled = attention.following_the_rules(keras_attention)
    for tokens in (201, 230):  # batch, tokens, heads, head width
        half = np.zeros((2, tokens, 6, 64), np.float16)
        assert ruled(half, half, half, flash_attention=None).shape == half.shape
    ruled(half, half, half, flash_attention=False)  # a layer's own choice stands
    assert asked == [(202, None), (230, None), (230, False)]
    attention.tell_keras(plain, T4)
    ruled(half, half, half)
    assert asked[-1] == (230, False)  # an even count, but a T4


def test_padding_an_odd_token_count_leaves_the_attention_unchanged(keras_default_attention):
    """DINOv3's 201 tokens at 224 px, padded to 202 for cuDNN with the padded key masked:
    Keras' own JAX attention gives the unpadded result (here on the CPU, through XLA)."""
    from keras.src.backend.jax.nn import dot_product_attention

    attention._told[:] = [H100]
    ruled = attention.following_the_rules(dot_product_attention)
    rng = np.random.default_rng(0)
    query, key, value = (rng.normal(size=(2, 201, 6, 64)).astype("float16") for _ in range(3))
    padded = np.asarray(ruled(query, key, value), "float32")
    plain = np.asarray(dot_product_attention(query, key, value, flash_attention=False))
    assert padded.shape == (2, 201, 6, 64)
    np.testing.assert_allclose(padded, plain.astype("float32"), atol=2e-3)
