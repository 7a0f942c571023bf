"""The labels of the records one process of several trains on in one epoch.

Usage: python -m tests.process_share DATA_DIR PROCESSES PROCESS OUTPUT.json. The records'
labels are their numbers, so the labels a process's training batches carry name the records
it read. test_replicas.py runs one of these per process, as a multi-host run does.
"""

import json
import sys

from {{ cookiecutter.package }} import dataset, records
from {{ cookiecutter.package }}.config import Config, data_path

GLOBAL_BATCH = 16


def main(data_dir: str, processes: int, process: int, output: str) -> None:
    cfg = Config(
        data_dir=data_dir, train_files="*.tfrec", image_size=32, shuffle_buffer=64,
        num_processes=processes, process_id=process, coordinator="localhost:1234",
    )  # fmt: skip
    files = records.find(data_path(cfg, cfg.train_files), "train_files")
    steps = records.count(files) // GLOBAL_BATCH  # one epoch, as plan.py counts it
    batches = dataset.for_training(files, cfg, GLOBAL_BATCH).take(steps)
    labels = [int(label) for _, batch in batches for label in batch.numpy()]
    with open(output, "w") as file:
        json.dump(labels, file)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
