"""One training step on a fixed global batch of 32 demo images, on N replicas.

Usage: python -m tests.one_step DATA_DIR REPLICAS OUTPUT.npz [--one ONE.npz] [--coordinator
HOST:PORT --num-processes REPLICAS --process-id I] [--preset FOLDER] (the backend from
$KERAS_BACKEND; with --preset, on an efficientnet-b0 from that keras-hub preset folder, else on
small-cnn). Writes the loss and every weight before and after the step. With --one, the same
step on one replica of this same process too (the default strategy, or JAX's first device),
written to ONE.npz: the reference the N replicas must match. With a coordinator, REPLICAS JAX
processes of one CPU device each take the step together, and process I writes OUTPUT-I.npz.
test_replicas.py runs it in fresh processes: the backend and the device count are fixed once
a process starts.

The config is what a user would write: a per-replica batch of 32 / N and a per-replica
learning rate of 8e-3 / N, so the global batch (32) and the scaled rate (8e-3) are the same
for every N. Equal results then prove the global batch, the loss averaging over it, the
learning-rate scaling and the synchronized batch statistics.
"""

import argparse
import dataclasses
from pathlib import Path

import numpy as np

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.platform import accelerator
from {{ cookiecutter.package }}.runtime.stages.run import Run, start, started
from {{ cookiecutter.package }}.tools.demo import from_preset

GLOBAL_BATCH = 32


def settings(data_dir, output, replicas, preset="", coordinator="", num_processes=1, process_id=0):
    """The demo preset, as a user sets it for this many replicas; its output folder (under
    JAX, the compiled programs) where OUTPUT goes, not the project's."""
    backbone = {"backbone": "efficientnet-b0", "weights": preset} if preset else {}
    return from_preset(
        "demo",
        {
            **backbone,
            "data_dir": data_dir,
            "output_dir": str(Path(output).parent),
            "batch_size": GLOBAL_BATCH // replicas,
            "learning_rate": 8e-3 / replicas,
            "warmup_epochs": 0,
            "dropout": 0.0,  # dropout masks differ from one device layout to another
            "crop_area": 1.0,  # and so do random crops and flips
            "flip": False,
            "mix_probability": 0.0,  # and mixes: each device pairs the images of its share
            "simulate_replicas": replicas if replicas > 1 and num_processes == 1 else 0,
            "coordinator": coordinator,
            "num_processes": num_processes,
            "process_id": process_id,
        },
    )


def on_one_replica(found: accelerator.Accelerator) -> accelerator.Accelerator:
    """One replica of the devices this process started with."""
    if found.backend == "tensorflow":
        import tensorflow as tf

        return dataclasses.replace(found, replicas=1, strategy=tf.distribute.get_strategy())
    return dataclasses.replace(found, replicas=1, devices=found.devices[:1])


def global_batch(run: Run):
    """The first GLOBAL_BATCH training images and labels, as one dataset element."""
    import tensorflow as tf

    from {{ cookiecutter.package }}.runtime.data import pipeline, records

    run, cfg = started(run), run.cfg  # its data read
    files = records.find(run.places.in_data(cfg.train_files), "train_files")
    read = pipeline.for_inference(run.data, files, cfg, GLOBAL_BATCH, labeled=True)
    images, labels, _ = next(iter(read))
    return tf.data.Dataset.from_tensors((images, labels))


def step(cfg: Config, found: accelerator.Accelerator, batch, output: str) -> None:
    """One step of a fresh model on the global batch; writes OUTPUT."""
    import keras

    from {{ cookiecutter.package }}.runtime.learning import backbones, model, recipe

    keras.utils.set_random_seed(cfg.seed)
    with found.scope():
        net = model.build_model(cfg, backbones.load(cfg))
        before = {f"before_w{i}": np.asarray(w) for i, w in enumerate(net.get_weights())}
        # SGD with the project's scaled schedule: Adam divides each gradient by its own size,
        # which would hide a wrong loss scale.
        rate = recipe.learning_rate_schedule(cfg, found.replicas, steps_per_epoch=1)
        net.compile(optimizer=keras.optimizers.SGD(rate), loss="sparse_categorical_crossentropy")
        fitted = net.fit(batch, epochs=1, steps_per_epoch=1, verbose=0, shuffle=False)
    loss = fitted.history["loss"][0]
    weights = {f"w{i}": np.asarray(w) for i, w in enumerate(net.get_weights())}
    if found.processes > 1:
        output = output.removesuffix(".npz") + f"-{cfg.process_id}.npz"
    np.savez(
        output,
        loss=loss,
        replicas=found.replicas,
        processes=found.processes,
        backend=found.backend,
        **weights,
        **before,
    )


def main(data_dir, replicas, output, one="", preset="", **processes) -> None:
    run = start(*settings(data_dir, output, replicas, preset, **processes), read=False)
    found = run.accelerator  # before Keras is imported
    batch = global_batch(run)  # read once: the same images for every replica count
    step(run.cfg, found, batch, output)
    if one:
        step(settings(data_dir, one, 1, preset)[0], on_one_replica(found), batch, one)


if __name__ == "__main__":
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("data_dir")
    arguments.add_argument("replicas", type=int)
    arguments.add_argument("output")
    arguments.add_argument("--one", default="", help="also the step on one replica, to ONE.npz")
    arguments.add_argument("--coordinator", default="")
    arguments.add_argument("--num-processes", type=int, default=1)
    arguments.add_argument("--process-id", type=int, default=0)
    arguments.add_argument("--preset", default="", help="a keras-hub preset folder")
    main(**vars(arguments.parse_args()))
