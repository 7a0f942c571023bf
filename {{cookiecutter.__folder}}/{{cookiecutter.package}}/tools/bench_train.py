"""`bench-train`: what one training step costs on the accelerator `doctor` finds, against the
same model fed a cached batch, the backbone under a plain head, and for EfficientNets
keras-hub's network as it ships and keras.applications' (step_timings.py measures; this is
its command line, which loads no TensorFlow until it runs).
"""

from __future__ import annotations

from ..runtime.config import Config
from ..runtime.errors import UserError, count_flag

VARIANTS = ("CACHED", "OURS", "UNMIXED", "BARE", "STOCK", "APPS")


def arguments(parser) -> None:
    count_flag(parser, "bench-train", "--timed-steps", 5, "steps of each variant timed a turn")
    count_flag(parser, "bench-train", "--repeats", 3, "turns of each variant")
    parser.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help=f"those to time, comma-separated (default: {','.join(VARIANTS)})",
    )


def chosen(flag: str) -> tuple[str, ...]:
    """The variants --variants names, in VARIANTS' order."""
    asked = set(flag.split(","))
    unknown = asked - set(VARIANTS)
    if unknown:
        raise UserError(
            f"--variants {','.join(sorted(unknown))}: no such variant; pick from "
            + ",".join(VARIANTS)
        )
    return tuple(name for name in VARIANTS if name in asked)


def command(args, cfg: Config, found=None) -> int:
    from .step_timings import bench

    bench(cfg, chosen(args.variants), found, args.timed_steps, args.repeats)
    return 0
