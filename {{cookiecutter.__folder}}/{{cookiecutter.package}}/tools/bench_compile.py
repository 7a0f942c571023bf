"""`bench-compile`: what JAX's compilation cache (Config.compile_cache) saves a k-fold run.

Under Keras on JAX, each fold of `train --fold all` builds a new model, whose training step
JAX traces and compiles again. With the cache, the second fold loads what the first compiled.
This runs two folds' first training steps, each fold a new model as train builds it, in one
process with the cache off, then in another with it on (a fresh cache folder), and prints each
fold's first step and the ratio of fold 2's to fold 1's. The step is train's: model.py's model
and optimizer on a batch of random pixels, so no data is needed (`--weights none` builds a
keras-hub backbone's architecture without downloading it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ..runtime.config import Config

FOLDS = 2
CACHES = ("off", "on")


def compare(cfg: Config) -> dict[str, list[list[float]]]:
    """Each cache setting's folds' first and second steps' seconds, each setting in a process
    of its own (JAX reads the cache folder once); prints them and their ratios."""
    root = Path(__file__).resolve().parents[2]  # the folder that holds the package
    env = {**os.environ, "KERAS_BACKEND": "jax"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    child = [sys.executable, "-m", f"{__package__}.bench_compile"]  # the end of this file
    firsts = {}
    with tempfile.TemporaryDirectory(prefix="bench-compile-") as scratch:
        for cache in CACHES:
            run = dataclasses.replace(
                cfg, backend="jax", compile_cache=cache == "on", output_dir=f"{scratch}/{cache}"
            )
            given, result = Path(scratch) / f"{cache}.json", Path(scratch) / f"{cache}-out.json"
            given.write_text(json.dumps(dataclasses.asdict(run)))
            print(f"--- compile cache {cache}: {FOLDS} folds in one process")
            subprocess.run([*child, str(given), str(result)], env=env, check=True)
            firsts[cache] = json.loads(result.read_text())
    print(f"first training step of each fold, Keras on JAX, {cfg.backbone} at {cfg.image_size}px")
    print("(beyond: the first step less the second, what tracing and compiling took)")
    print("cache  fold 1     fold 2     fold 2/fold 1  beyond: fold 1   fold 2   fold 2/fold 1")
    for cache, steps in firsts.items():
        (first, then), (second, again) = steps
        print(
            f"{cache:<5}  {first:7.2f} s  {second:7.2f} s  {second / first:13.2f}  "
            f"{first - then:15.2f} s {second - again:6.2f} s  {(second - again) / (first - then):.2f}"
        )
    return firsts


def first_steps(cfg: Config) -> list[tuple[float, float]]:
    """Each fold's first and second device calls' seconds in this process (a step each, or
    steps_per_execution): a new model, built, compiled and fit as train does it, on one
    cached batch."""
    from ..runtime.platform import accelerator

    found = accelerator.detect(cfg)  # keeps compiled programs in the output, if asked
    import keras

    from ..runtime.learning import model
    from .step_timings import backbone_for, cached_batch, fit_turn, the_run

    cfg, run, _, _ = the_run(cfg, found)
    # Two device calls: the first traces, compiles and runs; the second only runs.
    steps = 2 * run.steps_per_execution
    batch = cached_batch(cfg, run, None, found.image_dtype)
    firsts = []
    for fold in range(FOLDS):
        keras.utils.set_random_seed(cfg.seed)
        with found.scope():
            keras.mixed_precision.set_global_policy(run.precision)
            net = model.build_model(cfg, backbone_for(cfg, run.precision), found.image_dtype)
            model.compile_model(
                net, cfg, found.replicas, steps, steps_per_execution=run.steps_per_execution
            )
            ends = fit_turn(net, batch, steps)
        first, then = ends[1] - ends[0], ends[2] - ends[1]  # device calls of equal steps
        firsts.append((first, then))
        each = then / run.steps_per_execution
        print(f"fold {fold + 1}: first step {first:.2f} s, then {each:.3f} s a step")
    return firsts


def arguments(parser) -> None:
    parser.epilog = (
        "Prints each fold's first training step with JAX's compilation cache off and on. "
        "--weights none builds a keras-hub backbone without downloading it."
    )


def command(args, cfg: Config, found=None) -> int:
    compare(cfg)
    return 0


if __name__ == "__main__":  # one cache setting, in a process of its own (compare runs it)
    given, result = sys.argv[1:]
    Path(result).write_text(json.dumps(first_steps(Config(**json.loads(Path(given).read_text())))))
