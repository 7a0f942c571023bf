"""`kernel`: the project as one Kaggle notebook, the same as one script, and the
kernel-metadata.json that `kaggle kernels push` reads.

The notebook (notebook.py) carries the package's runtime: hidden cells write each module next to it,
and the cells a competitor reads and edits (notebook_cells.py) run the steps in order. So what runs
on Kaggle is exactly what the tests run, with no code dataset to attach (its install cell installs
only what the machine lacks: on Kaggle's images, nothing); this module says what Kaggle attaches and
runs it on."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import nbformat

from ..runtime import config
from ..runtime.backbone_choices import from_kaggle_models, handle
from ..runtime.config import LABEL_FILES, SLUG, Config, class_names, given_fields, knobs
from ..runtime.data.kinds import Data
from ..runtime.data.manifest import read_manifest
from ..runtime.errors import UserError, named
from ..runtime.outputs import blend_record
from ..runtime.outputs.run_record import run_records, with_trained
from ..runtime.platform import files, kaggle_inputs, paths, startup_logs, versions
from ..runtime.stages.run import Run, started, with_data
from . import notebook, wheels
from .kaggle_api import CREDENTIALS_HELP, KERNEL_METADATA, metadata_id, pushed_dataset, username
from .notebook import PROJECT, TITLE

# Whether the competition this project was made for ships TFRecords (tpu-getting-started's
# tfrecords-jpeg-*/): what its notebook reads on Kaggle when no copy of the data is here.
SHIPS_RECORDS = {{ cookiecutter.__ships_records }}
# A Kaggle username, as kaggle.com/NAME spells it.
USER = re.compile(r"[a-z0-9][a-z0-9_-]*")
# What `kaggle kernels push` asks Kaggle for. TPU v5e-8 and T4 x2 are what the editor offers.
ACCELERATORS = {
    "tpu": {"enable_gpu": False, "enable_tpu": True, "machine_shape": "TpuV5E8"},
    "gpu": {"enable_gpu": True, "enable_tpu": False, "machine_shape": "NvidiaTeslaT4"},
    "cpu": {"enable_gpu": False, "enable_tpu": False},
}


def write_kernel(
    run: Run | Config, accelerator: str = "", user: str = "", output: str = "", datasets=(),
    inference: bool = False, trained_kernel: str = "", blend: str = "", slug_: str = "",
) -> Path:  # fmt: skip
    """Write the notebook, the script and kernel-metadata.json into `output`; returns it. The
    other arguments are the flags (`arguments`): `datasets` --dataset's, `slug_` --slug's."""
    inference = inference or bool(blend)
    given = started(run, on_accelerator=False, read=False)  # as the user ran it
    cfg, sources = given.cfg, given.sources
    accelerator = accelerator or ("gpu" if inference else "tpu")
    if accelerator not in ACCELERATORS:
        raise UserError(f"--accelerator {accelerator!r}: one of {', '.join(ACCELERATORS)}")
    output = output or ("kernel-inference" if inference else "kernel")
    user = user or username()  # the one the kaggle client signs in as
    check_user(user)
    for ref in datasets:
        check_ref(ref, "--dataset", "dataset")
    if slug_:
        check_ref(f"{user}/{slug_}", "--slug")
    trained = [trained_kernel or f"{user}/{kernel_slug()}"]
    runs, pushed = None, []
    if blend:
        recorded = blend_record.read(blend)
        runs, trained = blended_runs(recorded, blend)
        cfg = dataclasses.replace(cfg, data_dir="", trained_dir="")
    elif inference:
        check_ref(trained[0], "--trained-kernel")
        # The competition as its rerun mounts it (the hidden test set); the model and classes
        # from the run in the training notebook's output.
        where = f"{kaggle_inputs.PREFIX}notebooks/{trained[0]}"
        cfg = dataclasses.replace(cfg, data_dir="", trained_dir=where)
        sources = {**sources, "trained_dir": "flag"}
    else:
        cfg, pushed = with_pushed_records(cfg, given.places)
    made = Run(cfg, sources, paths.find(cfg, sources))  # the notebook's, as it runs on Kaggle
    built = [run["backbone"] for run in runs["runs"]] if runs else [cfg.backbone]
    wheels_ref, online = keras_hub_installed(built, inference)
    pushed += [wheels_ref] if wheels_ref else []
    sources = dataset_sources(cfg, user, [*pushed, *datasets])
    folder = files.output_folder(output, "kernel --kernel-dir")
    # Notebooks whose output a value reads (kaggle:notebooks/OWNER/SLUG/...: another run's
    # pseudo_labels.csv, say), which Kaggle mounts only for a notebook attached.
    read = [input_named(getattr(cfg, field.name), "notebooks") for field in knobs()]
    kernels = trained if inference else read
    described = metadata(cfg, accelerator, user, sources, kernels, slug_, inference)
    described["enable_internet"] |= online  # pip's index, for the keras-hub to install
    check_not_another_kernel(folder, described["id"])
    warn_of_local_paths(cfg)
    wheels_input = f"{kaggle_inputs.PREFIX}datasets/{wheels_ref}" if wheels_ref else ""
    reading = as_it_reads(given, inference)
    cells = notebook.cells(
        made, accelerator, names_known(made), inference, runs, wheels_input, reading
    )
    with files.written_whole(folder / f"{PROJECT}.ipynb") as temporary:
        nbformat.write(notebook.as_notebook(cells), temporary)
    with files.written_whole(folder / f"{PROJECT}.py") as temporary:
        temporary.write_text(notebook.as_script(cells))
    if blend:  # `kaggle submit` reads the blend's CV from here
        name = files.STACK if blend_record.is_stack(recorded) else files.BLEND
        files.write_json(folder / name, recorded)
    files.write_json(folder / KERNEL_METADATA, described)
    return folder


def blended_runs(blend: dict, path: str) -> tuple[dict, list[str]]:
    """blend.json (or stack.json) with each run's trained_dir (its training notebook's output,
    mounted), and those notebooks; a run not fetched from a notebook is refused, naming it."""
    kind = "stack" if blend_record.is_stack(blend) else "blend"
    for run in blend["runs"]:
        if not run.get("notebook"):
            raise UserError(
                f"--blend {path}: the run {run['folder']} came from no Kaggle notebook (no "
                f"{files.FETCHED_FROM} in it), so the {kind}'s notebook cannot attach it; train it "
                "in a notebook of its own (`kernel --slug NAME`), fetch it with `kaggle output "
                f"--kernel-dir DIR --output-dir RUN_DIR`, and {kind} again"
            )
        check_ref(run["notebook"], "--trained-kernel")
    weighed = [run for run in blend["runs"] if run.get("weight", 1) > 0]  # a stack's: all
    for run in blend["runs"]:
        if run.get("weight") == 0:  # adds nothing: predicting it would only spend the rerun's time
            print(f"leaving out {run['name']}: the blend gives it no weight")
    # What the notebook predicts each run with, as blend.json and stack.json list them.
    keys = (*blend_record.PREDICTED_WITH, "cv", "weight")
    runs = [
        {"name": run["name"], "trained_dir": f"{kaggle_inputs.PREFIX}notebooks/{run['notebook']}",
         **{key: run[key] for key in keys if key in run}}
        for run in weighed
    ]  # fmt: skip
    kept = ("metric", "classes", "options", "thresholds", "blend_cv", "stack_cv",
            "metadata_columns")  # fmt: skip
    described = {**{key: blend[key] for key in kept if key in blend}, "runs": runs}
    return described, list(dict.fromkeys(run["notebook"] for run in weighed))


def as_it_reads(run: Run, inference: bool) -> Run:
    """The run the notebook's imports are followed for (carried.py): its data read as the
    notebook will read it, where a copy of the data is here; else, for the competition this
    project was made for where it ships TFRecords and no file is named otherwise, those; else
    unread (data None), and every reader carried. An inference notebook's model is the
    trained run's, where `kaggle output` fetched it into the output folder."""
    cfg, sources, places = run.cfg, run.sources, run.places
    if inference and run_records(places.output):
        with_run = dataclasses.replace(cfg, trained_dir=str(places.output))
        cfg, sources = with_trained(with_run, sources, places.output)
        places = paths.find(cfg, sources)
    run = Run(cfg, sources, places)
    if not files.is_url(places.data) and os.path.isdir(places.data):
        try:
            with startup_logs.held_to_level():  # TensorFlow reads the data as a run does
                return with_data(run)
        except UserError:  # the notebook's own checks will say it
            return run
    typed = given_fields(cfg, sources, typed=True)
    if SHIPS_RECORDS and cfg.competition == config.COMPETITION and not (cfg.data_dir or typed):
        # its own files, none of them named otherwise: Kaggle's TFRecords, with no manifest
        kaggles = Data("records", "records", None, None, None, None, cfg.metadata_columns)
        return dataclasses.replace(run, data=kaggles)
    return run


def check_ref(ref: str, flag: str, kind: str = "notebook") -> None:
    """An OWNER/SLUG Kaggle could never have, refused here rather than by Kaggle after a push."""
    owner, _, name = ref.partition("/")
    address, example, shortest = {
        "notebook": ("code", "alice/flower-classification; a slug of 5 characters or more", 5),
        "dataset": ("datasets", "alice/flower-records", 1),
    }[kind]
    if not (USER.fullmatch(owner) and SLUG.fullmatch(name) and len(name) >= shortest):
        raise UserError(
            f"{flag} {ref!r}: not OWNER/SLUG as the {kind}'s address spells it "
            f"(kaggle.com/{address}/OWNER/SLUG, such as {example})"
        )


def check_user(user: str) -> None:
    if not user:
        raise UserError(
            "no Kaggle username for the kernel's id: pass --kaggle-user NAME, or give the "
            f"kaggle client your credentials ({CREDENTIALS_HELP})"
        )
    if not USER.fullmatch(user):
        raise UserError(
            f"--kaggle-user {user!r}: not a Kaggle username (lower-case letters, digits, - and "
            "_, as your profile's address kaggle.com/NAME spells it); give yours as it is there"
        )


def check_not_another_kernel(folder: Path, kernel: str) -> None:
    """A folder holding another kernel is refused: `kaggle push` would replace that notebook."""
    held = folder / KERNEL_METADATA
    if not held.is_file():
        return
    try:
        other = metadata_id(held)
    except UserError as error:  # a file no notebook of ours wrote, or one a hand broke
        raise UserError(f"kernel --kernel-dir {folder}: {error}; or give another folder") from None
    if other != kernel:
        raise UserError(
            f"kernel --kernel-dir {folder} holds another kernel ({other}, in {held.name}), which "
            f"this one ({kernel}) would replace; give another folder, or remove that one first"
        )


def keras_hub_installed(backbones: list[str], inference: bool) -> tuple[str, bool]:
    """How the notebook installs a keras-hub that builds `backbones` where Kaggle's image lacks one:
    from the wheels `kaggle wheels` pushed (the dataset to attach, owner/slug), offline; else a
    training notebook from pip's index, with the internet on (True). An inference notebook, which a
    code competition reruns offline, is refused without the wheels, and any notebook on an image
    whose Keras no keras-hub with the backbone runs on. ("", False): nothing to install."""
    needed = wheels.lacked(backbones)
    if not needed:
        return "", False
    ref = pushed_dataset(wheels.FOLDER) if wheels.holds(list(needed)) else ""
    said = "; ".join(f"{why}: {need}" for need, why in needed.items())
    if ref:
        print(f"attaching the wheels dataset {ref} ({said}): the notebook installs from it")
        return ref, False
    lacking = next(name for name in backbones if wheels.lacked([name]))
    push = f"`kaggle wheels --backbone {lacking}`"
    if inference:
        raise UserError(
            f"{said}, and a code competition reruns this notebook offline: push the wheels "
            f"first with {push} in this folder, then write the notebook again; or train a "
            f"backbone the image has ({', '.join(versions.buildable(notebook.image_packages()))})"
        )
    print(f"the notebook installs {said} with its internet on ({push} first attaches wheels)")
    return "", True


def warn_of_local_paths(cfg: Config) -> None:
    """Of folders written into the notebook that exist here only: on Kaggle, data is under
    /kaggle/input and output goes to /kaggle/working, where Kaggle takes submission.csv from."""
    lines, data = [], cfg.data_dir
    kaggle = (f"{kaggle_inputs.ROOT}/", "tfds:", kaggle_inputs.PREFIX)
    if data and not (data.startswith(kaggle) or "://" in data):
        lines.append(
            f"{named('data_dir')} {data!r} is a folder on this machine, which a notebook on "
            f"Kaggle cannot read: leave it out (the notebook reads the competition "
            f"{cfg.competition} where Kaggle mounts it), give {kaggle_inputs.PREFIX}datasets/OWNER/"
            "SLUG, or push your records first with `kaggle dataset` so that kernel attaches them"
        )
    for name in LABEL_FILES:
        value = getattr(cfg, name)
        if value and not (value.startswith(kaggle) or "://" in value):
            lines.append(
                f"{named(name)} {value!r} is a file on this machine, which a notebook on Kaggle "
                f"cannot read: give the notebook that wrote it, as {kaggle_inputs.PREFIX}"
                f"notebooks/OWNER/SLUG/{Path(value).name} (kernel attaches it), or a dataset's"
            )
    out = cfg.output_dir
    if out and not Path(out).is_relative_to(kaggle_inputs.WORKING):
        lines.append(
            f"{named('output_dir')} {out!r} is not under {kaggle_inputs.WORKING}, where a Kaggle "
            f"notebook writes and the competition takes submission.csv from: leave it out"
        )
    for line in lines:
        print(f"warning: {line}")


def names_known(run: Run) -> list[str] | None:
    """The class names for the title: the config's, else a local data folder's manifest's, read
    by the manifest's own reader, which needs no TensorFlow: writing a notebook loads none."""
    if run.cfg.class_names:
        return class_names(run.cfg)
    try:
        path = run.places.in_data(files.MANIFEST)  # a Kaggle input not mounted here: UserError
        manifest = read_manifest(Path(path).read_bytes(), path) if "://" not in path else {}
    except (UserError, OSError):  # for the title only
        return None
    return manifest.get("classes") or None


def slug(text: str) -> str:
    """As Kaggle makes a kernel's slug from its title: lowercase words joined by '-'."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def kernel_slug(inference: bool = False) -> str:
    """The training notebook's slug, as Kaggle makes it from the title; the inference
    notebook's is the same with -inference."""
    name = slug(PROJECT)
    if len(name) < 5:  # Kaggle refuses shorter kernel slugs
        name += "-notebook"
    return name + ("-inference" if inference else "")


def metadata(
    cfg: Config, accelerator: str, user: str, datasets: list[str], kernels: list[str] = (),
    name: str = "", inference: bool = False,
) -> dict:  # fmt: skip
    name = name or kernel_slug(inference)
    # Kaggle derives the slug from the title: a title that slugifies elsewhere makes a new kernel.
    title = TITLE + (" inference" if inference else "")
    title = title if slug(title) == name else name.replace("-", " ").title()
    return {
        "id": f"{user}/{name}", "title": title, "code_file": f"{PROJECT}.ipynb",
        "language": "python", "kernel_type": "notebook", "is_private": True,
        # The client's default is true; competitions run offline, TFDS sets download.
        "enable_internet": cfg.data_dir.startswith("tfds:"),
        **ACCELERATORS[accelerator],
        "competition_sources": [cfg.competition], "dataset_sources": datasets,
        "kernel_sources": list(dict.fromkeys(filter(None, kernels))),
        # The backbone's keras-hub preset on Kaggle Models, so that it loads with the internet
        # off; its config.json is the architecture, needed with weights none too (a preset
        # folder in Config.weights comes from a dataset). The inference notebook builds the
        # backbone from the architecture the trained run saved: it attaches no model.
        "model_sources": [handle(cfg)] if not inference and from_kaggle_models(cfg) else [],
    }  # fmt: skip


def with_pushed_records(cfg: Config, places: paths.Places) -> tuple[Config, list[str]]:
    """A records folder pushed with `kaggle dataset` is read from Kaggle's input in the
    notebook, and the competition's sample submission from the competition's folder there."""
    folder = places.data
    ref = "" if "://" in folder or folder.startswith("tfds:") else pushed_dataset(folder)
    if not ref:
        return cfg, []
    where = f"{kaggle_inputs.PREFIX}datasets/{ref}"
    print(f"attaching the dataset {ref} (pushed from {folder}): the notebook reads {where}")
    sample = cfg.sample_submission
    if sample and not sample.startswith("/") and "://" not in sample:
        sample = f"{kaggle_inputs.PREFIX}competitions/{cfg.competition}/{sample}"
    return dataclasses.replace(cfg, data_dir=where, sample_submission=sample), [ref]


def dataset_sources(cfg: Config, user: str, datasets) -> list[str]:
    """The datasets to attach: those given, and one for each Config path under Kaggle's input
    folder that is not the competition's (an attached weights file, say), as the user's own."""
    attached = list(datasets)
    for field in knobs():
        value = getattr(cfg, field.name)
        if (ref := input_named(value, "datasets")) and ref not in attached:
            attached.append(ref)
        if not isinstance(value, str) or not value.startswith(f"{kaggle_inputs.ROOT}/"):
            continue
        name = Path(value).relative_to(kaggle_inputs.ROOT).parts[0]
        if name != cfg.competition and not any(d.split("/")[-1] == name for d in attached):
            attached.append(f"{user}/{name}")
            print(
                f"attaching the dataset {user}/{name} for {named(field.name)} (another owner's? "
                "pass --dataset OWNER/SLUG)"
            )
    return attached


def input_named(value, kind: str) -> str:
    """OWNER/SLUG of a Config value kaggle:KIND/OWNER/SLUG/... of this `kind`; "" for others."""
    mounted = f"{kaggle_inputs.PREFIX}{kind}/"
    if not (isinstance(value, str) and value.startswith(mounted)):
        return ""
    return "/".join(value.removeprefix(mounted).split("/")[:2])


def arguments(parser) -> None:
    parser.add_argument(
        "--inference", action="store_true",
        help="the notebook a code competition reruns on its hidden test set: it predicts with "
        "the training notebook's output and trains nothing (default folder: kernel-inference)",
    )  # fmt: skip
    parser.add_argument(
        "--trained-kernel", default="", metavar="OWNER/SLUG",
        help="with --inference: the training notebook whose output it predicts with "
        "(default: the one `kernel` writes for this project)",
    )  # fmt: skip
    parser.add_argument(
        "--blend", default="", metavar="BLEND_OR_STACK_JSON",
        help="the inference notebook of a blend or a stack: it predicts with every run "
        "blend.json or stack.json names, each from the output of the notebook that trained it, "
        "and blends them, or fits the stack's trees again and stacks them (implies --inference)",
    )  # fmt: skip
    parser.add_argument(
        "--slug", default="", help="the notebook's slug on Kaggle (default: the project's, with "
        "-inference for --inference): give each run you will blend a notebook of its own",
    )  # fmt: skip
    parser.add_argument(
        "--accelerator", choices=tuple(ACCELERATORS), default="",
        help="what Kaggle runs it on: TPU v5e-8, T4 x2 GPUs, or the CPU (default: tpu; with "
        "--inference, gpu: code competitions rerun without TPUs)",
    )  # fmt: skip
    user = "owner of the kernel (default: the kaggle config's)"
    parser.add_argument("--kaggle-user", default="", help=user)
    parser.add_argument(
        "--dataset", action="append", default=[], metavar="OWNER/SLUG",
        help="a Kaggle dataset to attach (repeatable)",
    )  # fmt: skip
    folder = "folder to write (default: kernel, or kernel-inference)"
    # --output: its name before; kaggle's actions call it --kernel-dir
    parser.add_argument("--kernel-dir", "--output", dest="output", default="", help=folder)


def command(args, run: Run) -> int:
    folder = write_kernel(
        run, args.accelerator, args.kaggle_user, args.output, args.dataset, args.inference,
        args.trained_kernel, args.blend, args.slug,
    )  # fmt: skip
    push = "kaggle push" + (f" --kernel-dir {folder}" if str(folder) != "kernel" else "")
    print(f"kernel: {folder}/ (push it with `python -m {notebook.PACKAGE.name} {push}`)")
    return 0
