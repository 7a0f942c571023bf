"""The project's training step against the same architecture in timm, in one run on one
device: what a competitor would get from PyTorch instead.

    python benchmarks/step_against_timm.py PROJECT --backbone dinov3-small \\
        --image-size 224 --batch-size 128 --steps 25

PROJECT is a rendered project (its package is imported). Ours: `bench train`'s CACHED
variant (model.py's model and compile_model, one cached batch fed as arrays, the precision
and attention train would use on this device), through tools/bench_train.py. timm's: its
model of the same architecture (BACKBONES below), AdamW, bfloat16 autocast, channels_last,
the batch resident on the device, eager and under torch.compile. Each prints images a second;
the last lines are ours over each of timm's. Needs torch and timm where it runs (the project
itself never imports them); on a GPU machine without TensorFlow, Keras runs on JAX.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

# Keras on JAX beside PyTorch on one GPU: JAX must not take 75% of its memory up front.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

# The timm model of each backbone's architecture (a ViT of the same size where timm has no
# model of DINOv3's: its registers and rotary positions cost little of the step).
TIMM = {
    "efficientnet-b0": "efficientnet_b0",
    "efficientnet-b3": "efficientnet_b3",
    "efficientnetv2-s": "efficientnetv2_rw_s",
    "resnet-vd-50": "resnet50d",
    "dinov2-small": "vit_small_patch14_dinov2",
    "dinov3-small": "vit_small_patch16_dinov3",
    "dinov3-base": "vit_base_patch16_dinov3",
    "swin-tiny": "swin_tiny_patch4_window7_224",
    "siglip-base": "vit_base_patch16_siglip_224",
    "hgnetv2-b4": "hgnetv2_b4",
}
FALLBACK = {"vit_small_patch16_dinov3": "vit_small_patch16_224"}
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def timm_step(arch: str, size: int, batch: int, compiled: bool, warm: int, steps: int):
    """Median seconds a training step of timm's `arch`, and the device's name."""
    import timm
    import torch
    import torch.nn.functional as F

    if arch not in timm.list_models(arch) and arch in FALLBACK:
        arch = FALLBACK[arch]
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    sized = {"img_size": size} if "vit" in arch or "swin" in arch else {}
    model = timm.create_model(arch, num_classes=10, **sized)
    model = model.to(device, memory_format=torch.channels_last).train()
    fused = {"fused": True} if device == "cuda" else {}
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05, **fused)
    mean = torch.tensor(MEAN, device=device).view(1, 3, 1, 1) * 255
    std = torch.tensor(STD, device=device).view(1, 3, 1, 1) * 255
    images = torch.randint(0, 256, (batch, 3, size, size), dtype=torch.uint8, device=device)
    labels = torch.randint(0, 10, (batch,), device=device)
    forward = torch.compile(model) if compiled else model

    def step():
        x = ((images.float() - mean) / std).contiguous(memory_format=torch.channels_last)
        with torch.autocast(device, dtype=torch.bfloat16):
            loss = F.cross_entropy(forward(x), labels, label_smoothing=0.1)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    def synchronize():
        if device == "cuda":
            torch.cuda.synchronize()

    for _ in range(1 + warm):  # the first compiles
        step()
    synchronize()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        synchronize()
        times.append(time.perf_counter() - start)
    name = torch.cuda.get_device_name(0) if device == "cuda" else "CPU"
    return (
        statistics.median(times),
        f"{name}, torch {torch.__version__}, timm {timm.__version__}",
        arch,
    )


def ours(project: Path, backbone: str, size: int, batch: int, steps: int) -> tuple[float, str]:
    """Median seconds a step of bench train's CACHED variant, and what ran it."""
    package = next(path.parent.name for path in project.glob("*/__main__.py"))
    sys.path.insert(0, str(project))
    config = importlib.import_module(f"{package}.runtime.config")
    bench = importlib.import_module(f"{package}.tools.bench_train")
    cfg = config.Config(
        backbone=backbone,
        image_size=size,
        batch_size=batch,
        weights="none",  # its architecture, nothing downloaded: speed needs no weights
        num_classes=10,
        output_dir=tempfile.mkdtemp(prefix="step-against-timm-"),
    )
    start = importlib.import_module(f"{package}.runtime.stages.run").start
    run = start(cfg, read=False)  # the accelerator found once, handed to the bench
    found = run.accelerator
    if found.replicas > 1:  # one device, as timm's side has it
        cfg = dataclasses.replace(cfg, batch_size=max(1, batch // found.replicas))
        run = start(cfg, accelerator=found, read=False)
    medians = bench.step_seconds(run, ("CACHED",), steps=steps, repeats=1)
    return medians["CACHED"], f"Keras on {found.backend}, {found.replicas} replica(s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path, help="a rendered project's folder")
    parser.add_argument("--backbone", default="efficientnet-b0", choices=sorted(TIMM))
    parser.add_argument("--image-size", type=int, default=224)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--steps", type=int, default=25, help="timed steps of each (median)")
    parser.add_argument("--warm", type=int, default=5, help="untimed steps after the first")
    args = parser.parse_args()
    size, batch = args.image_size, args.batch_size
    rates = {}
    for compiled in (False, True):
        seconds, where, arch = timm_step(
            TIMM[args.backbone], size, batch, compiled, args.warm, args.steps
        )
        if not where.startswith("CPU"):
            import torch

            torch.cuda.empty_cache()  # what timm's model held, for Keras, which runs next
        label = f"timm {arch} {'compiled' if compiled else 'eager'}"
        rates[label] = batch / seconds
        print(f"{label}: {rates[label]:,.1f} images/s ({where}, bf16 autocast)", flush=True)
    seconds, how = ours(args.project, args.backbone, size, batch, args.steps)
    mine = batch / seconds
    print(f"ours {args.backbone} at {size} px, batch {batch}: {mine:,.1f} images/s ({how})")
    for label, rate in rates.items():
        print(f"ours/{label}: {mine / rate:.2f}")


if __name__ == "__main__":
    main()
