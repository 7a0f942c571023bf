"""What a Kaggle notebook has attached (`kaggle:datasets/alice/flower-records`), found where
Kaggle mounts it: by kind (/kaggle/input/datasets/OWNER/SLUG), or flat (/kaggle/input/SLUG), else
through kagglehub's data proxy, but not in a scoring rerun, where it failed (kagglehub#258)."""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
from pathlib import Path

from ..errors import UserError, first_line

PREFIX = "kaggle:"
# Where Kaggle mounts inputs; kagglehub reads the same variable, so a test can move both.
ROOT = Path(os.environ.get("KAGGLE_CACHE_MOUNT_FOLDER") or "/kaggle/input")
WORKING = Path("/kaggle/working")  # what a notebook writes and Kaggle keeps (submission.csv)
# How each kind is referred to (the parts after the kind) and the kagglehub call that finds it.
KINDS = {
    "competitions": ("SLUG", "competition_download"),
    "datasets": ("OWNER/SLUG", "dataset_download"),
    "notebooks": ("OWNER/SLUG", "notebook_output_download"),
    "models": ("OWNER/MODEL/FRAMEWORK/VARIATION/VERSION", "model_download"),
}
PROXY_SECONDS = 60  # kagglehub would wait for ever for the folder the proxy names to appear


@dataclasses.dataclass(frozen=True)
class Found:
    folder: str
    how: str  # how it was found, as doctor says it


def in_notebook() -> bool:
    """Whether this runs in a Kaggle notebook (Kaggle sets this in every one)."""
    return bool(os.environ.get("KAGGLE_KERNEL_RUN_TYPE"))


def in_scoring_rerun() -> bool:
    """Whether Kaggle is rerunning a submitted notebook to score it (it sets this there)."""
    return bool(os.environ.get("KAGGLE_IS_COMPETITION_RERUN"))


def parse(reference: str) -> tuple[str, str, str]:
    """`kaggle:KIND/REF[/PATH]` as (kind, ref, path inside it); else an error naming the forms."""
    kind, _, rest = reference.removeprefix(PREFIX).partition("/")
    length = KINDS[kind][0].count("/") + 1 if kind in KINDS else 0
    parts = rest.split("/")
    if not length or len(parts) < length or not all(parts[:length]):
        forms = ", ".join(f"{PREFIX}{name}/{form}" for name, (form, _) in KINDS.items())
        raise UserError(f"{reference!r} is not a Kaggle input; give one of {forms}")
    return kind, "/".join(parts[:length]), "/".join(parts[length:])


def layouts(kind: str, ref: str, root: Path) -> list[Path]:
    """Where Kaggle mounts the input: by kind (since 2026), then the older flat layout."""
    flat = ref.split("/", 1)[1] if kind == "models" else ref.split("/")[-1]
    return [root / kind / ref, root / flat]


def find(reference: str, root: Path | None = None) -> Found:
    """The folder of an attached input (with `/PATH`, that path in it), and how it was found."""
    kind, ref, inside = parse(reference)
    mounted = found(kind, ref, root or ROOT)
    return Found(os.path.join(mounted.folder, inside), mounted.how) if inside else mounted


@functools.cache  # asked once a session: doctor, train and predict each resolve their data
def found(kind: str, ref: str, root: Path) -> Found:
    """Where the input is mounted, said once (a notebook's output shows where each came from)."""
    where = located(kind, ref, root)
    print(f"{PREFIX}{kind}/{ref}: {where.folder} ({where.how})")
    return where


def located(kind: str, ref: str, root: Path) -> Found:
    for folder, layout in zip(layouts(kind, ref, root), ("by kind", "flat"), strict=True):
        if folder.is_dir():
            return Found(str(folder), f"found in Kaggle's {layout} mount layout")
    asked = ""
    if in_notebook() and os.environ.get("KAGGLE_DATA_PROXY_URL"):
        if in_scoring_rerun():
            asked = "not asked in Kaggle's scoring rerun, where a call has failed reruns"
        else:
            folder, asked = from_proxy(kind, ref)
            if folder:
                return Found(folder, "Kaggle's data proxy, through kagglehub")
    held = sorted(str(path.relative_to(root)) for path in listed(root))
    shown = ", ".join(held[:20]) + (", ..." if len(held) > 20 else "") if held else "nothing"
    raise UserError(
        f"{PREFIX}{kind}/{ref} is not attached to this notebook: not at "
        f"{' or '.join(str(path) for path in layouts(kind, ref, root))}"
        + (f" (the data proxy {asked})" if asked else "")
        + f"; {root} holds {shown}. Add it in the notebook's Input panel (or kernel-metadata.json)"
    )


def from_proxy(kind: str, ref: str) -> tuple[str, str]:
    """The folder kagglehub's resolver for the kind returns, or "" and why it did not."""
    import kagglehub

    call = getattr(kagglehub, KINDS[kind][1])
    answer: dict[str, object] = {}

    def ask():
        try:
            answer["folder"] = call(ref)
        except Exception as error:  # noqa: BLE001 - a refusal, no proxy: the layouts are next
            answer["error"] = error

    asking = threading.Thread(target=ask, daemon=True)  # left behind if it never returns
    asking.start()
    asking.join(PROXY_SECONDS)
    if "folder" in answer and os.path.isdir(str(answer["folder"])):
        return str(answer["folder"]), ""
    if "error" in answer:
        return "", f"did not answer ({first_line(answer['error'])})"
    return "", f"named no folder within {PROXY_SECONDS} s"


def listed(root: Path) -> list[Path]:
    """What the mount root holds: each input, under its kind's folder where it has one."""
    if not root.is_dir():
        return []

    def inputs(path: Path) -> list[Path]:  # a kind's folder holds inputs; a flat one is one
        if path.name not in KINDS or not path.is_dir():
            return [path]
        return sorted(path.glob("*" if path.name == "competitions" else "*/*"))

    return [found for path in sorted(root.iterdir()) for found in inputs(path)]
