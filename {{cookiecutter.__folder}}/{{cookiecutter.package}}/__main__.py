"""The command line: `python -m {{ cookiecutter.package }} COMMAND [--field value ...]`.

COMMANDS holds every command: a new one is an entry there and its module, which owns its options
(`arguments(parser)`), the Config fields it reads (`CONFIG_FIELDS`; every field where it has none)
and its run (`command(args, run)`: the run `start` built here from the flags, which the command
completes). Only the module of the command asked for is imported, so `--help` answers at once and a
command never needs another's packages; TensorFlow loads where a module uses it."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys

from .runtime import config, errors
from .runtime.platform import accelerator, paths, startup_logs
from .runtime.stages.run import start
from .tools import demo


@dataclasses.dataclass(frozen=True)
class Command:
    module: str  # the module that owns it, under the package
    help: str  # what it does
    # It runs on the accelerator, which decides Keras' backend; Keras reads that once, when it
    # is imported, so the accelerator is found before the module, which imports Keras, is.
    on_accelerator: bool = False
    # Its module declares no options (no `arguments`, no CONFIG_FIELDS): it takes every Config
    # flag, and its module, which loads Keras, is imported only to run.
    every_flag: bool = False
    config: bool = True  # whether it takes Config flags
    # It loads TensorFlow: loaded before it runs, with TensorFlow's start-up lines held back.
    tensorflow: bool = True


COMMANDS = {
    "train": Command("runtime.stages.train", on_accelerator=True, every_flag=True,
        help="train on the training data; checkpoints, weights and curves go to the output"),
    "predict": Command("runtime.stages.predict", on_accelerator=True, every_flag=True,
        help="predict the test records and write submission.csv in the output folder"),
    "evaluate": Command("runtime.stages.evaluate", on_accelerator=True, every_flag=True,
        help="per-class scores and a confusion matrix of the trained model on validation"),
    "preview": Command("runtime.stages.preview", on_accelerator=True, every_flag=True,
        help="pictures of an augmented training batch and the learning rate over the run"),
    "ablate": Command("runtime.stages.ablate", on_accelerator=True,
        help="train the recipe with each part switched off, and show what each buys"),
    "blend": Command("runtime.stages.blend",
        help="blend --fold all runs by weights fitted on their out-of-fold predictions"),
    "audit": Command("runtime.stages.audit", help=(
        "the training labels most likely wrong, from a --fold all run's out-of-fold predictions")),
    "stack": Command("runtime.stages.stack", help=(
        "gradient-boosted trees on --fold all runs' out-of-fold predictions and the metadata")),
    "pseudo": Command("runtime.stages.pseudo", config=False, tensorflow=False,
        help="soft labels for the test images from a predicted --fold all run, to train on next"),
    "doctor": Command("runtime.stages.doctor", on_accelerator=True,
        help="check the accelerator, data and weights; exit 1 if a run would fail"),
    "score": Command("runtime.stages.score", tensorflow=False,
        help="score the output's submission.csv against the true labels (the demo's are hidden)"),
    "kernel": Command("tools.kernel", tensorflow=False,
        help="write the Kaggle notebook, the same as a script, and kernel-metadata.json"),
    "kaggle": Command("tools.kaggle_api", tensorflow=False, help=(
        "download the data, push a notebook, see its run and output, submit, list submissions")),
    "records": Command("tools.images_to_records",
        help="turn a folder of images and a CSV into sharded TFRecords with folds"),
    "demo-data": Command("tools.demo", config=False,
        help="write the offline digits demo competition to --output-dir"),
    # `bench` loads what each mode needs: `bench train` runs without TensorFlow.
    "bench": Command("tools.bench", tensorflow=False,
        help="time the input pipeline, a training step or JAX's compilation cache"),
}  # fmt: skip
# Older names, still taken: `bench-input` is `bench input`.
ALIASES = {f"bench-{mode}": ["bench", mode] for mode in ("input", "train", "compile")}
# What to install when an import fails, by the module that is missing.
INSTALL = {
    "tensorflow": "tensorflow-cpu", "keras": "keras", "jax": "jax", "sklearn": "scikit-learn",
    "pandas": "pandas", "matplotlib": "matplotlib", "nbformat": "nbformat", "kaggle": "kaggle",
    "PIL": "pillow", "tqdm": "tqdm", "tensorflow_datasets": "tensorflow-datasets",
    "pydicom": "pydicom pylibjpeg pylibjpeg-libjpeg pylibjpeg-openjpeg",
}  # fmt: skip


def owner(name: str):
    return importlib.import_module(f"{__package__}.{COMMANDS[name].module}")


class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        """A wrong flag or choice as one line, and where the usage is, not the whole usage."""
        raise errors.UserError(f"{self.prog}: {message}; `{self.prog} --help` lists the options")


# Commands that train, or look at what training would do (doctor checks every field; kernel
# writes every one into the notebook).
TRAINING = ("train", "preview", "ablate", "doctor", "kernel", "bench")
PREDICTING = ("predict", "doctor", "kernel")
# Fields only some commands read, by the commands that read them; every other field, every
# command that takes settings. A command's --help offers what it reads (no --epochs for
# predict, no --tta for train); it takes the others too, so that one set of flags serves
# several commands (`make demo FLAGS=...`).
READ_ONLY_BY = {
    **dict.fromkeys(config.TRAINING_ONLY, TRAINING),
    **dict.fromkeys(config.PREDICTION_ONLY, PREDICTING),
    "trained_dir": (*PREDICTING, "evaluate"),
}


def parser(only: str | None = None, own: bool = True, every: bool = False) -> Parser:
    """Every command with its options; with `only`, the others without theirs; without `own`,
    the Config flags alone; with `every`, the rarely set in --help too (--help-all)."""
    root = Parser(
        prog="python -m {{ cookiecutter.package }}",
        description="Train an image classifier on Kaggle TFRecords and write submission.csv.",
        epilog="`python -m {{ cookiecutter.package }} COMMAND --help` lists a command's options.",
    )
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, about in COMMANDS.items():
        command = commands.add_parser(name, help=about.help, description=about.help)
        if only and name != only:
            continue
        module = owner(name) if own and not about.every_flag else None
        if hasattr(module, "arguments"):
            module.arguments(command)
        if about.config:
            declared = getattr(module, "CONFIG_FIELDS", None)
            read = declared or [field for field in FIELD_NAMES if reads(name, field)]
            add_flags(command, declared or FIELD_NAMES, read, every)
        # The command and its positional arguments; the options are listed below it.
        positional = [action for action in command._actions if not action.option_strings]
        words = [action.metavar or action.dest for action in positional]
        command.usage = " ".join(["%(prog)s", *words, "[options]"])
    return root


FIELD_NAMES = [field.name for field in config.knobs()]


def reads(command: str, field: str) -> bool:
    return command in READ_ONLY_BY.get(field, (command,))


def add_flags(parser: argparse.ArgumentParser, fields, shown, every: bool = False) -> None:
    """One flag per field named, grouped as Config's sections (as the notebook's config cell), out
    of --help unless `shown` (a rare one: and `every`); one left out keeps its default."""
    rare = [name for name in shown if config.FIELDS[name].metadata["rare"]]
    if rare and not every:  # beside -h
        parser.add_argument(
            HELP_ALL, action="store_true", help=f"this help with {len(rare)} rarely set fields too"
        )
    parser.add_argument(
        "--preset", choices=sorted(demo.PRESETS), help="start from a named set of values"
    )
    for title, section in config.sections().items():
        chosen = [field for field in section if field.name in fields]
        visible = [field for field in chosen  # a rarely set one: with `every` alone
                   if field.name in shown and (every or not field.metadata["rare"])]  # fmt: skip
        group = parser.add_argument_group(title) if chosen else None
        for field in chosen:
            add_flag(group, field, field in visible)


HELP_ALL = "--help-all"  # --help, with the rarely set fields (Config's `rare`) too
METAVARS = {int: "N", float: "X", str: "VALUE"}  # short: one line a flag


def add_flag(group, field: dataclasses.Field, shown: bool) -> None:
    kind = config.types()[field.name]
    value, about = config.default(field), field.metadata["help"]
    # The help says what an empty value or an unset one means; otherwise, the default.
    about += "" if value == "" or "default:" in about else f" (default: {value})"
    about = about if shown else argparse.SUPPRESS
    if kind in (bool, config.Switch):  # a switch left unset stays "auto"
        how = {"action": argparse.BooleanOptionalAction}
    else:
        how = {"type": kind, "metavar": METAVARS[kind]}
    group.add_argument(config.flag(field.name), default=argparse.SUPPRESS, help=about, **how)


def from_flags(args: argparse.Namespace) -> tuple[config.Config, config.Sources]:
    """The command's config, and where each value came from: a flag, or the preset named."""
    flags = {name: value for name, value in vars(args).items() if name in FIELD_NAMES}
    if name := getattr(args, "preset", None):
        return demo.from_preset(name, flags, "flag")
    return config.Config(**flags), dict.fromkeys(flags, "flag")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    every = HELP_ALL in argv
    argv = ["--help" if word == HELP_ALL else word for word in argv]
    asked = next((word for word in argv if word in COMMANDS or word in ALIASES), None)
    if asked in ALIASES:  # an older name, as the words it stands for
        at = argv.index(asked)
        argv[at : at + 1] = ALIASES[asked]
        asked = argv[at]
    try:
        found = None
        with startup_logs.held_to_level():  # TensorFlow loads and the accelerator is found
            if asked and COMMANDS[asked].on_accelerator and not {"-h", "--help"} & set(argv):
                flags, _ = parser(asked, own=False).parse_known_args(argv)
                cfg, sources = from_flags(flags)
                found = accelerator.detect(cfg, paths.find(cfg, sources).output)
            args = parser(asked, every=every).parse_args(argv)
            if COMMANDS[args.command].tensorflow:
                import tensorflow  # noqa: F401 (here, where its start-up lines are held)
        run = None  # the run where the command takes settings: built here, once
        if COMMANDS[args.command].config:
            run = start(*from_flags(args), found, on_accelerator=False, read=False)
        return owner(args.command).command(args, run)
    except errors.UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        top = (error.name or "").split(".")[0]
        if top not in INSTALL:
            raise
        print(
            f"error: `{asked}` needs {top}, which is not installed here; install it "
            f"with: {sys.executable} -m pip install {INSTALL[top]}"
            + (" (Colab's TPU runtime ships none)" if top == "tensorflow" else ""),
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:  # Ctrl-C: every file is written whole, so nothing is half-done
        again = (
            "run the same command again to resume after the last finished epoch "
            "(--no-resume starts over)"
            if asked == "train"
            else "nothing was left half-written; run the same command again"
        )
        print(f"\ninterrupted: {again}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
