"""The labels of the records one process of several trains on in one epoch.

Usage: python -m tests.process_share PROCESSES PROCESS OUTPUT.json DATA_DIR... The records'
labels are their numbers, so the labels a process's training batches carry name the records
it read; OUTPUT.json maps each DATA_DIR to them. test_replicas.py runs one of these per
process, as a multi-host run does.
"""

import json
import sys

from {{ cookiecutter.package }}.runtime.config import Config
from {{ cookiecutter.package }}.runtime.data import pipeline, records
from {{ cookiecutter.package }}.runtime.platform.paths import data_path

GLOBAL_BATCH = 16


def labels_read(data_dir: str, processes: int, process: int) -> list[int]:
    cfg = Config(
        data_dir=data_dir, train_files="*.tfrec", image_size=32, shuffle_buffer=64,
        num_processes=processes, process_id=process, coordinator="localhost:1234",
    )  # fmt: skip
    files = records.find(data_path(cfg, cfg.train_files), "train_files")
    steps = records.count(files) // GLOBAL_BATCH  # one epoch, as plan.py counts it
    batches = pipeline.for_training(files, cfg, GLOBAL_BATCH).take(steps)
    return [int(label) for _, batch in batches for label in batch.numpy()]


if __name__ == "__main__":
    processes, process, output, *folders = sys.argv[1:]
    read = {folder: labels_read(folder, int(processes), int(process)) for folder in folders}
    with open(output, "w") as file:
        json.dump(read, file)
