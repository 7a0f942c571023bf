"""`ablate`: what each part of the recipe buys on your data, before the TPU hours are spent.

Trains the recipe as configured ("default"), then the same with each part switched off, with
the parts that are off for their cost switched on, and with the whole recipe off, each on the
same folds (or, where the data has none, the same seeds), with `train` itself: the same checks
first, the same checkpoints, so a killed `ablate` started again resumes where it was. Then it
prints and plots, for each variant, the validation score (mean and spread over the runs),
its difference from the default's, and the images a second it trained at.

Give it the epochs you will train for: the parts that regularise (mixing, smoothing, decay) need
epochs to pay off, and a shorter run is biased against them."""

from __future__ import annotations

import dataclasses
import json
import statistics
from pathlib import Path

from .. import scoring
from ..backbone_choices import BACKBONES, weights
from ..config import CROP_AREA, Config, crop_area, flips
from ..errors import UserError, named, whole_number
from ..outputs.run_files import refuse_others
from ..platform.files import place, write_json
from .run import Run, start, started

# Each part of the recipe (model.py and Config's section "The recipe"): its Config field, the
# value that switches it off, and the one that switches it on where the config has it off.
PARTS = {
    "crop": ("crop_area", 1.0, CROP_AREA), "flip": ("flip", False, True),
    "mixup": ("mixup", 0.0, 0.2), "cutmix": ("cutmix", 0.0, 1.0),
    "label_smoothing": ("label_smoothing", 0.0, 0.1), "class_balance": ("class_balance", 0.0, 0.5),
    "weight_decay": ("weight_decay", 0.0, 0.05), "ema": ("ema", 0.0, 0.99),
    "stochastic_depth": ("stochastic_depth", 0.0, 0.1), "rand_augment": ("rand_augment", 0.0, 0.5),
    "backbone_learning_rate": ("backbone_learning_rate", 1.0, 0.1),
    # Not the recipe but what the head reads: the table beside each image (metadata.py).
    "metadata": ("metadata_columns", "", "auto"),
}  # fmt: skip
INPUTS = {"metadata"}  # parts "recipe off" leaves as they are
RUNS = 2


def variants(run: Run, parts: list[str] | None = None) -> dict[str, dict]:
    """The variants to train, by name: the default, each part on switched off ("no mixup"), each
    part off switched on ("+ rand_augment"), and every part off ("recipe off", where two or more
    are on); with `parts`, only those, in "recipe off" too. A part that cannot act (`acts`: no
    stochastic depth in the backbone, say) is left out."""
    from ..data import metadata  # TensorFlow: `ablate --help` loads none

    cfg = run.cfg
    if unknown := sorted(set(parts or []) - set(PARTS)):
        raise UserError(
            f"ablate --parts {','.join(unknown)}: no such part; pick from " + ",".join(PARTS)
        )
    acts = {
        "mixup": cfg.mix_probability > 0, "cutmix": cfg.mix_probability > 0,
        "stochastic_depth": bool(BACKBONES[cfg.backbone].stochastic_depth),
        "backbone_learning_rate": weights(cfg) != "none", "class_balance": not cfg.multi_label,
        "metadata": metadata.found(cfg, run.places, run.data) is not None,
    }  # fmt: skip
    decided = {"crop_area": crop_area(cfg), "flip": flips(cfg)}  # auto values, as the run has them
    chosen, everything_off, switched_off = {"default": {}}, {}, 0
    for part, (field, off, on) in PARTS.items():
        if not acts.get(part, True) or (parts and part not in parts):
            continue
        if decided.get(field, getattr(cfg, field)) != off:
            chosen[f"no {part}"] = {field: off}
            if part not in INPUTS:
                everything_off[field] = off
                switched_off += 1
        else:
            chosen[f"+ {part}"] = {field: on}
    if switched_off > 1:
        chosen["recipe off"] = everything_off
    return chosen


def ablate(run: Run | Config, runs: int = RUNS, parts: list[str] | None = None) -> list[dict]:
    """Train every variant `runs` times (folds 0 to runs-1, or seeds) in <output>/ablate/;
    print the table and write ablate.json and ablate.png there. Returns the table's rows."""
    from .train import train  # TensorFlow: `ablate --help` loads none

    run = started(run)
    cfg, writes = run.cfg, run.accelerator.writes_files
    refuse_others(run.places.output, "ablate")
    in_folds = run.data.folds > 1
    if in_folds and runs > run.data.folds:
        raise UserError(
            f"ablate --runs {runs}: the data has {run.data.folds} folds; ask for at most that"
        )
    if runs < 1:
        raise UserError(f"ablate --runs {runs}: train each variant at least once (1 or more)")
    root = run.places.output / "ablate"
    rows = []
    for name, changes in variants(run, parts).items():
        scores, speeds = [], []
        folder = root / name.replace("+ ", "with-").replace(" ", "-")
        for k in range(runs):
            each = {"fold": str(k)} if in_folds else {"seed": cfg.seed + k}
            out = folder if in_folds else folder / f"seed{k}"
            variant = dataclasses.replace(cfg, **changes, **each, output_dir=str(out))
            print(f"--- ablate: {name}, {'fold' if in_folds else 'seed'} {k}")
            history = train(start(variant, run.sources, run.accelerator))
            scores.append(history[f"final_valid_{cfg.metric}"])
            speeds.append(images_per_second(variant, history, in_folds))
        rows.append(row(name, changes, scores, speeds, rows[0]["scores"] if rows else scores))
    print(table(rows, cfg, runs, in_folds))
    if writes:
        write_json(root / "ablate.json", rows)
        picture(rows, cfg.metric, root / "ablate.png")
        print(f"table: {root / 'ablate.json'}\npicture: {root / 'ablate.png'}")
    return rows


def images_per_second(run: Config, history: dict, in_folds: bool) -> float | None:
    """Training images a second, from the epochs' training seconds (the first left out: it
    compiles) and the batches an epoch the checkpoint records."""
    folder = place(run.output_dir) / (f"fold{run.fold}" if in_folds else "")
    try:
        made = json.loads((folder / "checkpoints" / "checkpoint.json").read_text())["made_by"]
    except (OSError, ValueError, KeyError):
        return None
    seconds = history.get("train_seconds", [])[1:] or history.get("train_seconds", [])
    images = made["global_batch"] * made["steps_per_epoch"]
    return images / statistics.median(seconds) if seconds else None


def row(name: str, changes: dict, scores: list[float], speeds: list, default: list) -> dict:
    """A variant's scores (mean, spread), images a second, and difference from the `default`'s run
    by run, with its standard error: within twice it is noise, not a finding (docs/recipe.md)."""
    speeds = [speed for speed in speeds if speed]
    differences = [score - base for score, base in zip(scores, default, strict=True)]
    spread = statistics.stdev(differences) if len(differences) > 1 else 0.0
    return {
        "variant": name, "changes": changes, "scores": scores, "mean": statistics.fmean(scores),
        "spread": statistics.stdev(scores) if len(scores) > 1 else 0.0,
        "images_per_second": statistics.fmean(speeds) if speeds else None,
        "difference": statistics.fmean(differences),
        "standard_error": spread / len(differences) ** 0.5,
    }  # fmt: skip


def picture(rows: list[dict], metric: str, path: Path) -> Path:
    """ablate.png: each variant's score against the default's, with its spread over runs."""
    from matplotlib.figure import Figure

    from ..outputs.plots import save  # matplotlib: `ablate --help` loads none

    figure = Figure(figsize=(8, 0.5 * len(rows) + 1.5), layout="constrained")
    axes = figure.add_subplot()
    names, means, spreads = (
        [each[key] for each in rows[::-1]] for key in ("variant", "mean", "spread")
    )
    axes.barh(names, means, xerr=spreads, color="tab:blue", alpha=0.7, capsize=3)
    axes.axvline(rows[0]["mean"], color="black", linestyle="--", label="default")
    low = min(m - s for m, s in zip(means, spreads, strict=True))
    high = max(m + s for m, s in zip(means, spreads, strict=True))
    margin = max(high - low, 0.01) * 0.2
    axes.set_xlim(low - margin, high + margin)  # differences of a point or two must show
    axes.set(xlabel=f"validation {metric}", title="What each part of the recipe buys")
    axes.legend()
    return save(figure, path)


def table(rows: list[dict], cfg: Config, runs: int, in_folds: bool) -> str:
    over = f"{runs} {'folds' if in_folds else 'seeds'}"
    lines = [
        (
            f"ablate: validation {scoring.metric_named(cfg.metric, False)}, mean and standard "
            f"deviation over {over}, {cfg.epochs} epochs each; the difference from the default "
            f"{over[2:]} by {over[2:-1]}, with its standard error (* beyond twice it)"
        ),
        f"{'variant':<22} {cfg.metric:>8} {'sd':>7} {'vs default':>11} {'se':>7}  "
        + f"{'images/s':>9}  changes",
    ]
    for each in rows:
        speed = f"{each['images_per_second']:9.0f}" if each["images_per_second"] else f"{'-':>9}"
        beyond = abs(each["difference"]) > 2 * each["standard_error"] and runs > 1
        compared = f"{each['difference']:+11.4f} {each['standard_error']:7.4f}" + "*" * beyond
        if each["variant"] == "default":
            compared = f"{'':>19}"
        changes = ", ".join(f"{k}={v}" for k, v in each["changes"].items())
        line = f"{each['variant']:<22} {each['mean']:8.4f} {each['spread']:7.4f} {compared:<20}"
        lines.append(f"{line}{speed}  {changes}".rstrip())
    return "\n".join(lines)


def arguments(parser) -> None:
    runs = (
        "runs of each variant: folds 0 to N-1, or seeds where the data has no folds "
        f"(default {RUNS})"
    )
    parser.add_argument("--runs", type=whole_number("ablate --runs", 1), default=RUNS, help=runs)
    parts = "only these parts, comma-separated: " + ",".join(PARTS)
    parser.add_argument("--parts", default="", help=parts)
    parser.epilog = (
        f"Trains each variant in <{named('output_dir')}>/ablate/<variant>/ with train's "
        "checks and checkpoints (started again, it resumes). Give it the --epochs you will "
        "train for: a shorter run is biased against the parts that regularise."
    )


def command(args, run: Run) -> int:
    parts = [part.strip() for part in args.parts.split(",") if part.strip()] or None
    ablate(run, args.runs, parts)
    return 0
