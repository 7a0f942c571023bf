"""Check the accelerator, the data, the output, the weights and the checkpoint before
spending hours of quota: the checks train and predict run first (preflight.py), all printed."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from ..backbone_choices import BACKBONES
from ..config import Config
from ..errors import UserError
from ..platform import accelerator as accelerators
from .run import Run, started, with_data

if TYPE_CHECKING:
    from . import preflight


def doctor(run: Run | Config, require: str = "", full_scan: bool = False) -> list[str]:
    """Print what a run would use; return the problems that would stop train or predict (none:
    ready). `require` ("tpu" or "gpu") makes a missing accelerator a problem: a notebook pushed to a
    TPU machine then stops at once, not after hours on the host's CPU. `full_scan` decodes every
    image too. Data that does not read is one problem of many."""
    from . import preflight, training_checks  # TensorFlow: `doctor --help` loads none

    run = started(run, read=False)
    cfg, accelerator = run.cfg, run.accelerator
    problems = []
    try:
        accelerators.require(accelerator, require)
    except UserError as error:
        problems.append(str(error))
        print(f"accelerator: PROBLEM: {error}")
    global_batch = accelerator.global_batch(cfg.batch_size)
    print(f"global batch: {global_batch} ({cfg.batch_size} per replica x {accelerator.replicas})")
    if run.data is None:  # with what the records' manifest or the TFDS set says
        with contextlib.suppress(UserError):  # the preflight's check of the manifest says it
            run = with_data(run)
    print(run.places.describe())
    dicom = ((run.data.manifest if run.data else None) or {}).get("dicom")  # as `records` made it
    if dicom:
        print(f"DICOM: --window {dicom['window']} --slices {dicom['slices']} (records' manifest)")
    checked = preflight.check(run, "doctor", print, training_checks.CHECKS)
    print(attention_line(run, checked))
    problems += checked.problems
    if full_scan:
        problems += scan_images(checked)
    print(f"problems: {len(problems)} (above)" if problems else "problems: none, ready to train")
    return problems


def attention_line(run: Run, checked: preflight.Preflight) -> str:
    """Which attention kernel the backbone's layers run on this device, and why."""
    cfg, accelerator = run.cfg, run.accelerator
    if not BACKBONES[cfg.backbone].attention:  # a convolutional network: no kernel to pick
        return f"attention: none ({BACKBONES[cfg.backbone].title} has no attention layers)"
    from ..learning import attention  # here: a notebook of a CNN carries none

    planned = checked.plan.value if checked.plan else None
    precision = planned.precision if planned else accelerator.precision(cfg.precision)
    first = accelerator.devices[0] if accelerator.devices else None
    device = attention.Device.of(accelerator.backend, first)
    return attention.choose(cfg.backbone, cfg.image_size, precision, device).describe()


def scan_images(checked: preflight.Preflight) -> list[str]:
    """Decode every image of every split found; print each shard's problems and notes."""
    problems = []
    for split, read, shards in checked.scanned():
        if shards is None:
            print("scan: none; TFDS checked the set's images when it prepared it")
            return []
        bad = [shard for shard in shards if shard.problems]
        problems += [shard.describe() for shard in bad]
        counted = f"{read.records} records in {len(read.files)} files, {len(bad)} with problems"
        print(f"scan {split}: {counted}")
        for shard in bad:
            print(f"  PROBLEM: {shard.describe()}")
        for shard in shards:
            for note, count in shard.notes.items():
                print(f"  note: {shard.path}: {count} of {shard.records} records are {note}")
    return problems


def arguments(parser) -> None:
    scan = "decode every image of every split and list every bad record per shard"
    parser.add_argument("--scan", action="store_true", help=scan)
    require = "exit 1 unless this accelerator would be used"
    parser.add_argument("--require", choices=("tpu", "gpu"), help=require)


def command(args, run: Run) -> int:
    return 1 if doctor(run, args.require, args.scan) else 0
