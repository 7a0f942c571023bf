"""Check the accelerator, the data, the output, the weights and the checkpoint before
spending hours of quota: the checks train and predict run first (preflight.py), all printed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..backbone_choices import BACKBONES
from ..config import Config, places_of
from ..errors import UserError
from ..platform import accelerator, paths
from ..platform.accelerator import Accelerator

if TYPE_CHECKING:
    from . import preflight


def doctor(
    cfg: Config, found: Accelerator | None = None, require: str = "", full_scan: bool = False
) -> list[str]:
    """Print what a run would use; return the problems that would stop train or predict (none:
    ready). `require` ("tpu" or "gpu") makes a missing accelerator a problem: a notebook pushed to a
    TPU machine then stops at once instead of training for hours on the host's CPU. `full_scan`
    decodes every image of every split too, and lists every problem per shard."""
    from ..data import source
    from . import preflight, training_checks

    cfg = paths.placed(cfg)  # where it reads and writes, found once
    found = found or accelerator.detect(cfg)
    problems = []
    try:
        accelerator.require(found, require)
    except UserError as error:
        problems.append(str(error))
        print(f"accelerator: PROBLEM: {error}")
    global_batch = found.global_batch(cfg.batch_size)
    print(f"global batch: {global_batch} ({cfg.batch_size} per replica x {found.replicas})")
    manifest = None
    try:  # with what the records' manifest or the TFDS set says
        cfg, manifest = source.resolved(cfg)
    except UserError:
        pass  # the preflight's check of the manifest says it, among every other problem
    print(places_of(cfg).describe())
    dicom = (manifest or {}).get("dicom")  # how `records` made the images a run sees
    if dicom:
        print(f"DICOM: --window {dicom['window']} --slices {dicom['slices']} (records' manifest)")
    checked = preflight.check(cfg, found, "doctor", print, training_checks.CHECKS)
    print(attention_line(cfg, found, checked))
    problems += checked.problems
    if full_scan:
        problems += scan_images(checked)
    print(f"problems: {len(problems)} (above)" if problems else "problems: none, ready to train")
    return problems


def attention_line(cfg: Config, found: Accelerator, checked: preflight.Preflight) -> str:
    """Which attention kernel the backbone's layers run on this device, and why."""
    if not BACKBONES[cfg.backbone].attention:  # a convolutional network: no kernel to pick
        return f"attention: none ({BACKBONES[cfg.backbone].title} has no attention layers)"
    from ..learning import attention

    planned = checked.plan.value if checked.plan else None
    precision = planned.precision if planned else found.precision(cfg.precision)
    device = attention.Device.of(found.backend, found.devices[0] if found.devices else None)
    return attention.choose(cfg.backbone, cfg.image_size, precision, device).describe()


def scan_images(checked: preflight.Preflight) -> list[str]:
    """Decode every image of every split found; print each shard's problems and notes."""
    from ..data import source
    from . import preflight

    problems = []
    for split, found in checked.splits.items():
        field, labeled = preflight.SPLITS[split]
        shards = source.of(checked.cfg, field).scanned(checked.cfg, found.files, labeled)
        if shards is None:
            print("scan: none; TFDS checked the set's images when it prepared it")
            return []
        bad = [shard for shard in shards if shard.problems]
        problems += [shard.describe() for shard in bad]
        said = f"{found.records} records in {len(found.files)} files, {len(bad)} with problems"
        print(f"scan {split}: {said}")
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


def command(args, cfg: Config, found=None) -> int:
    return 1 if doctor(cfg, found, args.require, args.scan) else 0
