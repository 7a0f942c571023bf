"""The command line: `python -m {{ cookiecutter.package }} COMMAND [--field value ...]`.

Each command imports what it needs only when it runs, so `--help` answers at once.
"""

from __future__ import annotations

import argparse
import sys

from . import config

COMMANDS = {
    "train": "train on the training records; checkpoints, weights and curves go to the output",
    "predict": "predict the test records and write submission.csv in the output folder",
    "evaluate": "per-class scores and a confusion matrix of the trained model on validation",
    "preview": "pictures of an augmented training batch and the learning rate over the run",
    "doctor": "check the accelerator, data and weights; exit 1 if a run would fail",
    "kernel": "write the Kaggle notebook, the same as a script, and kernel-metadata.json",
    "kaggle": "download the data, push the notebook, see its status and output, submit",
    "records": "turn a folder of images and a CSV into sharded TFRecords with folds",
    "demo-data": "write the offline digits demo competition to --output",
    "score": "score the output's submission.csv against the demo's hidden labels",
    "bench-input": "images per second of the input pipeline against decoding alone and the textbook",
}
KAGGLE_ACTIONS = {
    "download": "the competition's files into the data folder, unzipped",
    "push": "the kernel folder to Kaggle, where it runs",
    "status": "of the pushed notebook",
    "output": "of the pushed notebook (submission.csv, the log) into the output folder",
    "submit": "the output's submission.csv to the competition",
    "dataset": "the records folder (--data-dir) as a private Kaggle dataset, new or a new version",
}
# What to install when an import fails, by the module that is missing.
INSTALL = {
    "tensorflow": "tensorflow-cpu",
    "keras": "keras",
    "jax": "jax",
    "sklearn": "scikit-learn",
    "pandas": "pandas",
    "matplotlib": "matplotlib",
    "nbformat": "nbformat",
    "kaggle": "kaggle",
    "PIL": "pillow",
    "tqdm": "tqdm",
    "tensorflow_datasets": "tensorflow-datasets",
}


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="python -m {{ cookiecutter.package }}",
        description="Train an image classifier on Kaggle TFRecords and write submission.csv.",
        epilog="`python -m {{ cookiecutter.package }} COMMAND --help` lists a command's options.",
    )
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help in COMMANDS.items():
        command = commands.add_parser(name, help=help, description=help)
        if name == "demo-data":
            command.add_argument(
                "--output", default="data/demo", help="folder to write (default: data/demo)"
            )
            command.add_argument(
                "--seed", type=int, default=0, help="split and id seed (default: 0)"
            )
            continue
        if name == "score":
            command.add_argument(
                "--solution", default="", help="true labels (default: <data-dir>/solution.csv)"
            )
        if name == "doctor":
            command.add_argument(
                "--scan",
                action="store_true",
                help="decode every image of every split and list every bad record per shard",
            )
            command.add_argument(
                "--require",
                choices=("tpu", "gpu"),
                help="exit 1 unless this accelerator would be used",
            )
        if name == "bench-input":
            command.add_argument(
                "--synthetic",
                action="store_true",
                help="measure on photo-like JPEGs it writes at --image-size, not the records",
            )
            command.add_argument(
                "--images", type=int, default=2048, help="images a pass (default: 2048)"
            )
            command.add_argument(
                "--repeats", type=int, default=5, help="passes of each pipeline (default: 5)"
            )
        if name == "kernel":
            command.add_argument(
                "--accelerator",
                choices=("tpu", "gpu", "cpu"),
                default="tpu",
                help="what Kaggle runs it on: TPU v5e-8, T4 x2 GPUs, or the CPU (default: tpu)",
            )
            command.add_argument(
                "--kaggle-user",
                default="",
                help="owner of the kernel (default: the kaggle config's)",
            )
            command.add_argument(
                "--dataset",
                action="append",
                default=[],
                metavar="OWNER/SLUG",
                help="a Kaggle dataset to attach (repeatable)",
            )
            command.add_argument(
                "--output", default="kernel", help="folder to write (default: kernel)"
            )
        if name == "records":
            command.add_argument("--images", required=True, help="folder of training images")
            command.add_argument(
                "--csv", required=True, help="one row per training image: id and label columns"
            )
            command.add_argument("--output", required=True, help="folder to write (empty)")
            command.add_argument(
                "--group-column", default="", help="keep each group in one fold (e.g. patient)"
            )
            command.add_argument(
                "--resize", type=int, default=0, help="store N x N images (default: as they are)"
            )
            command.add_argument(
                "--test-images", default="", help="folder of test images (ids: file names)"
            )
        if name == "kaggle":
            command.add_argument(
                "action",
                choices=list(KAGGLE_ACTIONS),
                help=", ".join(f"{action}: {help}" for action, help in KAGGLE_ACTIONS.items()),
            )
            command.add_argument(
                "--kernel-dir", default="kernel", help="the folder `kernel` wrote (default: kernel)"
            )
            command.add_argument(
                "--message", default="", help="submit: the submission's description"
            )
            command.add_argument(
                "--slug",
                default="",
                help="dataset: its slug (default: the one pushed before, else <package>-records)",
            )
        config.add_flags(command)
    return root


def run(args: argparse.Namespace) -> int:
    if args.command == "demo-data":
        from .demo import write_competition

        counts = write_competition(args.output, seed=args.seed)
        print(
            f"demo competition in {args.output}: "
            + ", ".join(f"{k} {v}" for k, v in counts.items())
        )
        return 0
    cfg = config.from_flags(args)
    if args.command == "records":
        from .image_records import write_records

        made = write_records(
            cfg, args.images, args.csv, args.output, args.group_column, args.resize,
            args.test_images, command=" ".join(["python -m {{ cookiecutter.package }}", *sys.argv[1:]]),
        )  # fmt: skip
        print(
            f"records in {args.output}: train {made['train']['records']} in {made['folds']} "
            f"folds, test {made['test']['records']}, skipped {len(made['skipped'])} (listed in "
            f"{args.output}/manifest.json)"
        )
        return 0
    if args.command == "kernel":
        from .kernel import write_kernel

        folder = write_kernel(cfg, args.accelerator, args.kaggle_user, args.output, args.dataset)
        print(f"kernel: {folder}/ (push it with `python -m {{ cookiecutter.package }} kaggle push`)")
        return 0
    if args.command == "kaggle":
        from . import kaggle_api

        return kaggle_api.run(args.action, cfg, args.kernel_dir, args.message, args.slug)
    if args.command == "score":
        return score(cfg, args.solution)
    if args.command == "bench-input":
        from .bench_input import bench

        bench(cfg, args.synthetic, args.images, args.repeats)
        return 0
    # Before anything imports Keras: the accelerator decides the Keras backend.
    from .accelerator import detect

    found = detect(cfg)
    if args.command == "train":
        from .train import train

        train(cfg, found)
    elif args.command == "predict":
        from .predict import predict

        predict(cfg, found)
    elif args.command == "evaluate":
        from .evaluate import evaluate

        picture = evaluate(cfg, found)
        if picture:
            print(f"picture: {picture}")
    elif args.command == "preview":
        from . import preview

        print(f"picture: {preview.augmented_batch(cfg, found)}")
        print(f"picture: {preview.learning_rate(cfg, found)}")
    elif args.command == "doctor":
        from .doctor import doctor

        return 1 if doctor(cfg, found, args.require, args.scan) else 0
    return 0


def score(cfg: config.Config, solution: str) -> int:
    from pathlib import Path

    from .scoring import check_rows_match, score_files

    submission = str(config.output_path(cfg, "submission.csv"))
    solution = solution or config.data_path(cfg, "solution.csv")
    scores = score_files(submission, solution, cfg.id_column, cfg.label_column)
    sample = config.field_path(cfg, "sample_submission") if cfg.sample_submission else ""
    if sample and Path(sample).is_file():
        count = check_rows_match(submission, sample, cfg.id_column)
        print(f"rows: {count}, ids match {sample} row for row")
    print(f"submission: {Path(submission).resolve()}")
    for metric, value in scores.items():
        print(f"{metric}: {value:.4f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return run(args)
    except config.UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        top = (error.name or "").split(".")[0]
        if top not in INSTALL:
            raise
        print(
            f"error: `{args.command}` needs {top}, which is not installed here; install it "
            f"with: {sys.executable} -m pip install {INSTALL[top]}"
            + (" (Colab's TPU runtime ships none)" if top == "tensorflow" else ""),
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:  # Ctrl-C: every file is written whole, so nothing is half-done
        again = (
            "run the same command again to resume after the last finished epoch "
            "(--no-resume starts over)"
            if args.command == "train"
            else "nothing was left half-written; run the same command again"
        )
        print(f"\ninterrupted: {again}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
