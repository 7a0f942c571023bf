"""The command line: `python -m {{ cookiecutter.package }} COMMAND [--field value ...]`.

Each command imports what it needs only when it runs, so `--help` answers at once.
"""

from __future__ import annotations

import argparse
import sys

from . import config

COMMANDS = {
    "train": "train on the training records; checkpoints and weights go to --output-dir",
    "predict": "predict the test records and write <output-dir>/submission.csv",
    "doctor": "check the accelerator, data and weights; exit 1 if a run would fail",
    "demo-data": "write the offline digits demo competition to --output",
    "score": "score <output-dir>/submission.csv against the demo's hidden labels",
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
                "--require",
                choices=("tpu", "gpu"),
                help="exit 1 unless this accelerator would be used",
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
    if args.command in ("train", "predict", "doctor"):
        # Before anything imports Keras: the accelerator decides the Keras backend.
        from .accelerator import detect

        found = detect(cfg)
    if args.command == "train":
        from .train import train

        train(cfg, found)
    elif args.command == "predict":
        from .predict import predict

        predict(cfg, found)
    elif args.command == "doctor":
        from .doctor import doctor

        return 1 if doctor(cfg, found, args.require) else 0
    elif args.command == "score":
        from pathlib import Path

        from .scoring import check_rows_match, score_files

        submission = str(Path(cfg.output_dir) / "submission.csv")
        solution = args.solution or config.data_path(cfg, "solution.csv")
        scores = score_files(submission, solution, cfg.id_column, cfg.label_column)
        sample = config.data_path(cfg, cfg.sample_submission) if cfg.sample_submission else ""
        if sample and Path(sample).is_file():
            count = check_rows_match(submission, sample, cfg.id_column)
            print(f"rows: {count}, ids match {sample} row for row")
        print(f"macro_f1: {scores['macro_f1']:.4f}")
        print(f"submission: {Path(submission).resolve()}")
        print(f"accuracy: {scores['accuracy']:.4f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return run(args)
    except config.UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
