"""`bench input|train|compile`: what the input pipeline, a training step and JAX's compilation
cache cost here, against what they could be (docs/speed.md), the variants taking turns in one
process (a noisy neighbour slows each alike). Each mode's module is imported as it runs, so
`--help` loads no TensorFlow or Keras, and `bench train` runs where Keras runs on JAX alone."""

from __future__ import annotations

import argparse
import importlib
import statistics

from ..runtime.errors import UserError, count_flag, whole_number
from ..runtime.platform import startup_logs
from ..runtime.stages.run import Run, started

MODES = {
    "input": "images a second of the input pipeline against decoding alone and the textbook",
    "train": "a training step's seconds, and without the input pipeline, our layers or keras-hub",
    "compile": "two folds' first training steps under JAX, with its compilation cache off and on",
}
REPEATS = {"input": 5, "train": 3}  # where --repeats is not given
STEP_VARIANTS = ("CACHED", "OURS", "UNMIXED", "BARE", "STOCK", "APPS")


def arguments(parser) -> None:
    parser.add_argument("mode", choices=list(MODES), metavar="MODE", help="one of below")
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # the lines as written
    parser.epilog = "modes:\n" + "\n".join(f"  {mode:<9}{about}" for mode, about in MODES.items())
    parser.epilog += "\ntrain, compile: --weights none builds a backbone without downloading it"
    defaults = ", ".join(f"{times} for {mode}" for mode, times in REPEATS.items())
    parser.add_argument(
        "--repeats", type=whole_number("bench --repeats", 1),
        help=f"input: passes of each pipeline; train: turns of each variant (default: {defaults})",
    )  # fmt: skip
    given = parser.add_argument_group("bench input")
    given.add_argument(
        "--synthetic", action="store_true",
        help="measure on photo-like JPEGs it writes at --image-size, not the records",
    )  # fmt: skip
    given.add_argument(
        "--image-folder", default="",
        help="measure on the image files under this folder (nested too), and on records of them",
    )  # fmt: skip
    count_flag(given, "bench input", "--images-per-pass", 2048, "images a pass")
    steps = parser.add_argument_group("bench train")
    count_flag(steps, "bench train", "--timed-steps", 5, "steps of each variant timed a turn")
    steps.add_argument(
        "--variants", type=chosen, default=",".join(STEP_VARIANTS),
        help=f"those to time, comma-separated (default: {','.join(STEP_VARIANTS)})",
    )  # fmt: skip


def command(args, run: Run) -> int:
    module = "input" if args.mode == "input" else "train"  # compile's steps are train's
    with startup_logs.held_to_level():  # TensorFlow's start-up lines, held back
        if args.mode == "train":  # found before Keras loads: it picks the backend
            run = started(run, read=False)
        mode = importlib.import_module(f"{__package__}.bench_{module}")
    mode.command(args, run)
    return 0


def chosen(flag: str) -> tuple[str, ...]:
    """The variants --variants names, in STEP_VARIANTS' order (an argparse type)."""
    unknown = set(flag.split(",")) - set(STEP_VARIANTS)
    if unknown:
        raise UserError(
            f"--variants {','.join(sorted(unknown))}: no such variant; pick from "
            + ",".join(STEP_VARIANTS)
        )
    return tuple(name for name in STEP_VARIANTS if name in flag.split(","))


def take_turns(measure, names, repeats: int, shown) -> dict:
    """The median of each variant's figures, `measure(name, turn)` giving a turn's, the variants
    taking turns `repeats` times; each pass's line shows each one's turn, as `shown` writes it."""
    figures: dict[str, list[float]] = {name: [] for name in names}
    for turn in range(repeats):
        now = {name: list(measure(name, turn)) for name in names}
        for name in names:
            figures[name] += now[name]
        said = (f"{name} {shown(statistics.median(now[name]))}" for name in names)
        print(f"pass {turn + 1}/{repeats}: " + ", ".join(said))
    return {name: statistics.median(values) for name, values in figures.items()}


def report(medians: dict, figure, ratios) -> None:
    """Each variant's median as `figure` writes it, then each ratio of two measured."""
    for name, value in medians.items():
        print(f"{name:<8} {figure(value)}")
    for over, under, meaning in ratios:
        if over in medians and under in medians:
            about = f" ({meaning})" if meaning else ""
            print(f"{over}/{under} {medians[over] / medians[under]:.2f}{about}")
