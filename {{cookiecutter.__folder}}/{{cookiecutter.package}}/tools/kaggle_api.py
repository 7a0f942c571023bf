"""`kaggle ACTION`: Kaggle's own client (the kaggle package) for the steps around a run, and
signing in with it: an authenticated client, and the username `kernel` writes into a notebook's id.

Every refusal a user can fix (no credentials, the rules not accepted, a kernel not pushed yet, a
notebook whose run is not complete) ends in one line that says what to do, and a non-zero exit."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from ..runtime.config import SLUG, Config
from ..runtime.errors import UserError, briefly, first_line, named
from ..runtime.outputs import blend_record
from ..runtime.outputs.run_files import refuse_others
from ..runtime.outputs.run_record import read_record, run_records
from ..runtime.platform.files import (
    BLEND,
    FETCHED_FROM,
    MANIFEST,
    STACK,
    output_folder,
    read_json,
    write_json,
)
from ..runtime.stages.out_of_fold import read_predictions, scored
from ..runtime.stages.run import Run, started
from . import notebook, wheels

PACKAGE = __package__.partition(".")[0]  # as `python -m` names it


# The Config fields the kaggle actions read; the last three name a submission by default.
CONFIG_FIELDS = ("competition", "data_dir", "output_dir", "backbone", "epochs", "image_size")
KERNEL_DIR = "kernel"  # where `kernel` writes the training notebook
INFERENCE_DIR = "kernel-inference"  # where `kernel --inference` writes a code competition's
KERNEL_METADATA = "kernel-metadata.json"  # what `kernel` writes and the client pushes by
# What the client reads from a folder it pushes as a dataset; it names the dataset, so
# `kernel` finds there which dataset holds a records folder.
DATASET_METADATA = "dataset-metadata.json"
SUBMISSION = "submission.csv"  # what Kaggle scores: the output folder's, or a notebook's output
# The CV of the run a submission came from, as `submit` ends its description and `submissions` reads
# it back: "cv macro_f1 0.8123", or "cv: none". A blend's says so: "cv macro_f1 0.8345, blend of 3".
CV = re.compile(r"\bcv (\w+) (-?[\d.]+|nan)\b(, blend of \d+)?")
NO_CV = "cv: none"

# Every way the client signs in, newest first, as the client itself looks for them.
CREDENTIALS_HELP = (
    "run `kaggle auth login`; or create an API token on kaggle.com (Settings > API) and set "
    "KAGGLE_API_TOKEN to it or save it as ~/.kaggle/access_token; or, with a legacy API key, save "
    "kaggle.json as ~/.kaggle/kaggle.json (chmod 600) or set KAGGLE_USERNAME and KAGGLE_KEY"
)
# Where `kaggle auth login` keeps its credentials, the username among them.
LOGIN_FILE = Path("~/.kaggle/credentials.json")


def kaggle_client_class():
    """KaggleApi. Importing the kaggle package signs in and prints help to stdout when it
    cannot; that print is swallowed here, and `client` says it plainly. Before kaggle 2.2
    (Colab and Kaggle's GPU image carry 2.0.2) that import also exits without credentials
    and raises without a network; the class was loaded by then, and is taken as it is."""
    extended = "kaggle.api.kaggle_api_extended"
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            from kaggle.api.kaggle_api_extended import KaggleApi
        except (Exception, SystemExit):
            if extended not in sys.modules:  # not the sign-in: the client itself is broken
                raise
            KaggleApi = sys.modules[extended].KaggleApi
    return KaggleApi


def client():
    """An authenticated client, or a UserError that says where the credentials go. A token
    is checked with Kaggle, so this may reach the network (see `unreachable`)."""
    api = kaggle_client_class()()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            api.authenticate()
    except SystemExit:  # the client's own way of saying "no credentials"
        check_key_file(Path(api.config))
        raise UserError(f"no Kaggle credentials found: {CREDENTIALS_HELP}") from None
    return api


def check_key_file(path: Path) -> None:
    """kaggle.json, where there is one, as Kaggle's settings page gives it: the client skips
    a file it cannot read and says only that it found no credentials."""
    if not path.is_file():
        return
    fix = (
        f"create a new API token on kaggle.com (Settings > API) and save it as {path}, or "
        "remove the file and sign in another way"
    )
    held = read_json(path, fix)
    if not isinstance(held, dict) or not all(
        isinstance(held.get(field), str) and held[field] for field in ("username", "key")
    ):
        raise UserError(f'{path} holds no "username" and "key"; {fix}')


def unreachable(error: Exception, doing: str) -> UserError:
    return UserError(
        f"cannot reach Kaggle while {doing} ({briefly(error)}); check this machine's network (in a "
        "Kaggle notebook: Settings > Internet on), then run the same command again"
    )


def username() -> str:
    """The account the client signs in as, "" when it has no credentials: read from its
    configuration without a network call ($KAGGLE_USERNAME, kaggle.json, the file `kaggle
    auth login` writes); a bare API token names no one, so Kaggle is asked whose it is."""
    if os.environ.get("KAGGLE_USERNAME"):
        return os.environ["KAGGLE_USERNAME"]
    api = kaggle_client_class()()
    configured = api.read_config_environment(api.read_config_file(quiet=True))
    if configured.get("username"):
        return configured["username"]
    with contextlib.suppress(OSError, ValueError):
        if logged_in := json.loads(LOGIN_FILE.expanduser().read_text()).get("username"):
            return logged_in
    from kagglesdk import get_access_token_from_env

    if not get_access_token_from_env()[0]:
        check_key_file(Path(api.config))
        return ""
    import requests

    try:
        return client().get_config_value("username") or ""
    except (requests.ConnectionError, requests.Timeout) as error:
        doing = "asking whose API token this is (or pass --kaggle-user)"
        raise unreachable(error, doing) from error


def refusal(error: Exception, cfg: Config, doing: str) -> UserError:
    response = getattr(error, "response", None)
    status = response.status_code if response is not None else None  # a Response is falsy
    said = f"{status}: {briefly(error)}"
    if status == 403 and cfg.competition in doing:  # the competition's rules, not accepted
        return UserError(
            f"Kaggle refused {doing} ({said}); accept the competition's rules at "
            f"https://www.kaggle.com/competitions/{cfg.competition}/rules with the account of "
            f"your credentials, then run this again (and check {named('competition')})"
        )
    messages = {
        401: f"Kaggle refused the credentials while {doing} (401): {CREDENTIALS_HELP}",
        403: f"Kaggle refused {doing} ({said}); check the credentials' account",
        404: f"Kaggle found nothing while {doing} ({said}); check the name",
    }
    return UserError(messages.get(status, f"Kaggle answered an error while {doing} ({said})"))


def kernel_id(kernel_dir: str) -> str:
    path = Path(kernel_dir) / KERNEL_METADATA
    if not path.is_file():
        raise UserError(
            f"no {path}: write the kernel first with `python -m {PACKAGE} kernel` (`kernel "
            "--inference` for a code competition's inference notebook), or give --kernel-dir"
        )
    return metadata_id(path)


def metadata_id(path: Path) -> str:
    """The OWNER/SLUG id in a kernel's or a dataset's metadata file, which the Kaggle client
    pushes by: `kernel` or `kaggle dataset` wrote it, and a hand may have changed it."""
    fix = "write it again (`kernel`, or `kaggle dataset`), or fix it by hand"
    held = read_json(path, fix)
    found = held.get("id") if isinstance(held, dict) else None
    if not isinstance(found, str) or found.count("/") != 1:
        raise UserError(f'{path}: "id" is {found!r}, not OWNER/SLUG; {fix}')
    return found


def latest_run(api, kernel_dir: str) -> tuple[str, int | None, str, str]:
    """The notebook's id, its latest version (GetKernel, as `kaggle kernels pull` reads it), and
    its latest run's state and failure. The version is read first: a version pushed in between
    shows as a run not complete, never the other way round."""
    import requests
    from kagglesdk.kernels.types.kernels_api_service import ApiGetKernelRequest

    kernel = kernel_id(kernel_dir)
    request = ApiGetKernelRequest()
    request.user_name, request.kernel_slug = kernel.split("/")  # kernel_id checked the form
    try:
        with api.build_kaggle_client() as kaggle:
            found = kaggle.kernels.kernels_api_client.get_kernel(request)
    except requests.HTTPError as error:
        code = getattr(error.response, "status_code", None)
        if code not in (403, 404):
            raise
        raise UserError(
            f"Kaggle has no notebook {kernel} these credentials can read ({code}); push it "
            f"first with `kaggle push --kernel-dir {kernel_dir}`, or check the id in "
            f"{Path(kernel_dir) / KERNEL_METADATA}"
        ) from error
    version = found.metadata.current_version_number if found.metadata else None
    run = api.kernels_status(kernel)
    state = getattr(run.status, "name", str(run.status))
    return kernel, version, state, run.failure_message or ""


def download(api, run: Run) -> None:
    cfg, folder = run.cfg, output_folder(run.places.data, named("data_dir"))
    folder.mkdir(parents=True, exist_ok=True)
    # Downloaded and unpacked beside the folder's files, then moved in: a dropped connection
    # or a kill mid-way leaves no half file.
    with tempfile.TemporaryDirectory(dir=folder, prefix=".download-") as scratch:
        api.competition_download_files(cfg.competition, path=scratch, force=True, quiet=False)
        archive, unpacked = Path(scratch) / f"{cfg.competition}.zip", Path(scratch) / "unpacked"
        shutil.unpack_archive(archive, unpacked)
        archive.unlink()  # its room, for the files it held
        for entry in unpacked.iterdir():
            target = folder / entry.name
            if target.is_dir():
                shutil.rmtree(target)
            os.replace(entry, target)
    print(f"competition {cfg.competition}: unzipped into {folder}")


def push(api, kernel_dir: str) -> None:
    kernel = kernel_id(kernel_dir)
    try:
        response = api.kernels_push(kernel_dir)
    except ValueError as error:  # the client checks the metadata before sending anything
        raise UserError(
            f"{kernel_dir}/{KERNEL_METADATA}: {error}; write it again with `kernel`"
        ) from error
    if response.error:  # Kaggle answers 200 with the reason in `error`
        raise UserError(f"Kaggle refused the kernel {kernel}: {response.error}")
    print(f"pushed {kernel}, version {response.version_number}: {response.url}")
    other = f" --kernel-dir {kernel_dir}" if kernel_dir != KERNEL_DIR else ""
    print(f"follow it with `python -m {PACKAGE} kaggle status{other}`")


def status(api, kernel_dir: str) -> int:
    kernel, version, state, failure = latest_run(api, kernel_dir)
    said = ([f"version {version}"] if version is not None else []) + ([failure] if failure else [])
    print(f"{kernel}: {state}" + (f" ({', '.join(said)})" if said else ""))
    return 1 if state == "ERROR" else 0


def output(api, run: Run, kernel_dir: str) -> None:
    kernel = kernel_id(kernel_dir)
    folder = output_folder(run.places.output, named("output_dir"))
    folder.mkdir(parents=True, exist_ok=True)
    refuse_others(folder, "kaggle output")  # the download replaces files of the same names
    files, _ = api.kernels_output(kernel, path=str(folder), force=True, quiet=True)
    for name in [getattr(file, "file_name", file) for file in files or []]:
        print(f"output: {folder / name}")
    write_json(folder / FETCHED_FROM, {"id": kernel})  # the notebook a blend's notebook attaches
    print(f"log: {folder / (kernel.split('/')[-1] + '.log')}")


def blend_of(folder: Path) -> dict | None:
    """The blend.json or stack.json in `folder` (or the copy beside its notebook), else None."""
    for name in (BLEND, STACK):
        if (folder / name).is_file():
            return blend_record.read(folder / name)
    return None


# What a run recorded in model.json that decides how its validation predictions score.
SCORED_AS = ("metric", "num_classes", "multi_label", "pauc_min_tpr", "map_k", "target_weights")


def cv_of_run(run: Run) -> str:
    """The output folder's CV as a description carries it ("cv macro_f1 0.8123", or "cv: none"),
    scored as its model.json recorded (a run fetched with `kaggle output` scores as it trained)."""
    cfg, folder = run.cfg, run.places.output
    if blend := blend_of(folder):
        return blend_record.cv(blend)
    # Its validation predictions: oof.csv (a `--fold all` run), else its valid.csv, else its
    # folds' (fold<k>/valid.csv: a run of one fold of records in folds).
    found = [folder / name for name in ("oof.csv", "valid.csv") if (folder / name).is_file()]
    tables = found[:1] or sorted(folder.glob("fold*/valid.csv"))
    if not tables:
        return NO_CV
    import pandas as pd  # and scikit-learn: not for every command

    path = next(iter(run_records(folder)), None)
    recorded = read_record(path) if path else {}
    try:
        scored_as = dataclasses.replace(
            cfg, **{name: recorded[name] for name in SCORED_AS if name in recorded}
        )
    except UserError as error:  # a hand-edited model.json: name it, and the field
        raise UserError(f"{path}: {error}; train again, or put back its model.json") from None
    try:
        read = [read_predictions(path) for path in tables]
        return f"cv {scored_as.metric} {scored(scored_as, pd.concat(read, ignore_index=True)):.4f}"
    except (ValueError, KeyError, IndexError) as error:
        raise UserError(
            f"cannot score {', '.join(map(str, tables))} for the run's CV "
            f"({first_line(error)}); train again, or move it out of {folder}"
        ) from error


def described(run: Run, message: str, kernel_dir: str = "") -> str:
    """The message, then the CV of what is submitted: a blend notebook's blend, else the run."""
    cfg = run.cfg
    blend = blend_of(Path(kernel_dir)) if kernel_dir else None
    if not blend:
        message = message or f"{cfg.backbone}, {cfg.epochs} epochs, {cfg.image_size}px"
        return f"{message}; {cv_of_run(run)}"
    message = message or ("a stack" if blend_record.is_stack(blend) else "a blend")
    return f"{message}; {blend_record.cv(blend)}"


def submit(api, run: Run, message: str, kernel_dir: str | None) -> None:
    """--kernel-dir's notebook, else `kernel --inference`'s, else the output's submission.csv."""
    if kernel_dir:
        return submit_notebook(api, run, message, kernel_dir, "--kernel-dir")
    if (Path(INFERENCE_DIR) / KERNEL_METADATA).is_file():
        chosen = f"{INFERENCE_DIR}/ is here; --kernel-dir chooses another"
        return submit_notebook(api, run, message, INFERENCE_DIR, chosen)
    chosen = f"no {INFERENCE_DIR}/{KERNEL_METADATA} here, so no code submission"
    cfg, path = run.cfg, run.places.output / SUBMISSION
    if not path.is_file():
        raise UserError(
            f"no {path} to submit: run `predict`, or fetch a notebook's with `kaggle output`; "
            f"in a code competition, write the inference notebook with `kernel --inference`"
        )
    message = described(run, message)
    result = api.competition_submit(str(path), message, cfg.competition, quiet=True)
    if not str(result.message).startswith("Successfully"):
        raise UserError(f"Kaggle did not take {path}: {result.message}")
    print(f"{result.message}: {path} ({chosen}) ({message!r})")


def submit_notebook(api, run: Run, message: str, kernel_dir: str, chosen: str) -> None:
    """A code competition's submission: Kaggle reruns the notebook's latest version, whose
    run must be complete, on the hidden test set and scores the submission.csv it writes."""
    cfg = run.cfg
    kernel, version, state, failure = latest_run(api, kernel_dir)
    if state != "COMPLETE":
        latest = f"{kernel}'s latest run" + (f" (version {version})" if version else "")
        flags = f"--kernel-dir {kernel_dir}"
        todo = (
            f"wait until `python -m {PACKAGE} kaggle status {flags}` says COMPLETE, then submit"
            if state in ("QUEUED", "RUNNING")  # Kaggle may still finish it; others ended short
            else f"read its log (`kaggle output {flags}`), fix it, `kaggle push {flags}` and "
            "submit once that run is COMPLETE"
        )
        why = f": {failure}" if failure else ""
        raise UserError(
            f"{latest} is {state}{why}: a code submission needs a version whose run is COMPLETE; "
            f"{todo}"
        )
    if version is None:
        raise UserError(
            f"Kaggle named no version of {kernel}, and a code submission needs one; submit it "
            f"from https://www.kaggle.com/code/{kernel} instead"
        )
    message = described(run, message, kernel_dir)
    result = api.competition_submit_code(
        SUBMISSION, message, cfg.competition, kernel, version, quiet=True
    )
    print(
        f"{result.message or 'submitted'}: {kernel} version {version}, from {kernel_dir}/ "
        f"({chosen}); Kaggle reruns it on the hidden test set ({message!r})"
    )
    print(f"follow its score with `python -m {PACKAGE} kaggle submissions`")


def submissions(api, run: Run) -> None:
    """The competition's latest submissions, newest first: one line each."""
    cfg = run.cfg
    made = api.competition_submissions(cfg.competition, page_size=100) or []
    if not made:
        print(f"no submissions to {cfg.competition} yet")
        return
    rows = [("date", "status", "public", "private", "cv", "description")]
    for sent in made:
        description = sent.description or ""
        # The CV `submit` wrote into it ("macro_f1 0.8123", "none"); "-": sent some other way
        found = CV.search(description)
        cv = f"{found[1]} {found[2]}{found[3] or ''}" if found else "-"
        cv = "none" if not found and NO_CV in description else cv
        if sent.error_description:
            description += f" [{sent.error_description}]"
        when = sent.date.strftime("%Y-%m-%d %H:%M") if sent.date else "-"
        state = getattr(sent.status, "name", str(sent.status))
        scores = (sent.public_score or "-", sent.private_score or "-")
        rows.append((when, state, *scores, cv, description))
    widths = [max(len(row[column]) for row in rows) for column in range(5)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:5], widths, strict=True)]
        print("  ".join([*cells, row[5]]))


def pushed_dataset(folder: str) -> str:
    """The Kaggle dataset (owner/slug) that `kaggle dataset` pushed this folder as, or ""."""
    path = Path(folder) / DATASET_METADATA
    return metadata_id(path) if path.is_file() else ""


def push_dataset(api, run: Run, slug: str) -> None:
    """The records folder as a private dataset: created, or a new version when it exists.
    Its train/ and test/ folders go up as zip files, which Kaggle unpacks in place."""
    folder = Path(run.places.data)
    if not (folder / MANIFEST).is_file():
        raise UserError(
            f"{folder} ({named('data_dir')}) holds no records that `records` wrote (no "
            f"{MANIFEST}); write them with `python -m {PACKAGE} records ... --output-dir DIR`, "
            "then push them with --data-dir DIR"
        )
    ref = dataset_ref(api, folder, slug, "records")
    made = pushed_folder(api, folder, ref, "records")
    name = ref.split("/")[1]
    print(f"pushed {folder} as the private Kaggle dataset {ref}: {made.url}")
    print(f"`kernel --data-dir {folder}` attaches it; the notebook reads /kaggle/input/{name}")


def dataset_ref(api, folder: Path, slug: str, kind: str) -> str:
    """The dataset (owner/slug) to push `folder` as: --slug's, else the one it was pushed as
    before, else <package>-KIND; a slug Kaggle would refuse is refused here."""
    owner = api.config_values["username"]
    default = f"{owner}/{PACKAGE.replace('_', '-')}-{kind}"
    ref = f"{owner}/{slug}" if slug else pushed_dataset(str(folder)) or default
    name = ref.split("/")[1]
    if not (6 <= len(name) <= 50 and SLUG.fullmatch(name)):
        raise UserError(
            f"--slug {name!r}: a Kaggle dataset slug is 6 to 50 lowercase letters, digits and "
            "single dashes"
        )
    return ref


def pushed_folder(api, folder: Path, ref: str, what: str):
    """The folder pushed as the private dataset `ref`, new or a new version, its
    dataset-metadata.json written. Nothing is made when a file's upload fails, and that file
    is left as it was when the push fails, so that `kernel` attaches only what is there."""
    import requests

    name = ref.split("/")[1]
    metadata = folder / DATASET_METADATA
    before = metadata.read_bytes() if metadata.is_file() else None
    write_json(metadata, {"title": name.replace("-", " ").title(), "id": ref,
                          "licenses": [{"name": "CC0-1.0"}]})  # fmt: skip
    try:
        raise_on_a_failed_upload(api)
        try:
            api.dataset_status(ref)
        except requests.HTTPError as error:  # 404: not made yet
            if getattr(error.response, "status_code", None) != 404:
                raise
            made = api.dataset_create_new(str(folder), public=False, quiet=False, dir_mode="zip")
        else:
            notes = f"{what} from {folder}"
            made = api.dataset_create_version(str(folder), notes, quiet=False, dir_mode="zip")
        if (made.status or "").lower() != "ok" or made.error:
            raise UserError(f"Kaggle refused the dataset {ref}: {made.error or made.status}")
        return made
    except BaseException as error:
        if before is None:  # not pushed: `kernel` must not attach a dataset that is not there
            metadata.unlink()
        else:
            metadata.write_bytes(before)
        if not (isinstance(error, ValueError) and str(error).startswith(UPLOAD_FAILED)):
            raise
        # A folder goes up zipped (train/ as train.zip): the folder is what the user knows.
        name = str(error).removeprefix(UPLOAD_FAILED)
        path = folder / name
        if not path.exists() and (folder / Path(name).stem).is_dir():
            path = folder / Path(name).stem
        raise UserError(
            f"the upload of {path} to Kaggle failed, so nothing was created there; run `kaggle "
            "dataset` again"
        ) from None


def push_wheels(api, needed: dict[str, str], slug: str) -> None:
    """The wheels of `needed` (wheels.lacked's) downloaded into wheels/ and pushed as a dataset."""
    folder = Path(wheels.FOLDER)
    wheels.ours(folder, (DATASET_METADATA,))  # refused before anything is downloaded
    ref = dataset_ref(api, folder, slug, "wheels")
    downloaded = wheels.download(list(needed), folder, (DATASET_METADATA,))
    python = notebook.image_python()
    for need, why in needed.items():
        print(f"{why}: downloaded {need} for Python {python} into {folder}/")
    made = pushed_folder(api, folder, ref, "wheels")
    names = ", ".join(path.name for path in downloaded)
    print(f"pushed {folder}/ ({names}) as the private Kaggle dataset {ref}: {made.url}")
    print("`kernel` attaches it to the notebooks, which install from it with the internet off")


# What kaggle 2.2.5 on raises for a file it could not upload, then creating nothing (documented);
# older clients (Colab's and Kaggle's GPU image carry 2.0.2) printed it and left the file out.
UPLOAD_FAILED = "Upload unsuccessful: "
RAISES_ON_A_FAILED_UPLOAD = (2, 2, 5)


def client_version() -> tuple[int, ...]:
    from importlib.metadata import version

    return tuple(int(part) for part in re.findall(r"\d+", version("kaggle"))[:3])


def raise_on_a_failed_upload(api) -> None:
    """Make a client older than 2.2.5 raise for a failed upload as the newer ones do, so a
    dataset never lacks a shard. This reaches inside the client (`_upload_file`, which
    returned None there); tests/test_kaggle.py checks that inside for the installed version."""
    if client_version() >= RAISES_ON_A_FAILED_UPLOAD:
        return
    upload = api._upload_file

    def every_file(file_name, *args, **kwargs):
        uploaded = upload(file_name, *args, **kwargs)
        if uploaded is None:
            raise ValueError(UPLOAD_FAILED + file_name)
        return uploaded

    api._upload_file = every_file


def act(
    action: str, run: Run | Config, kernel_dir: str | None = None, message: str = "", slug: str = ""
) -> int:
    """`submit` sends `kernel_dir`'s notebook where given; the others default to kernel/."""
    run = started(run, on_accelerator=False, read=False)
    cfg, folder, needed = run.cfg, kernel_dir or KERNEL_DIR, {}
    if action in ("push", "status", "output") and (Path(folder) / KERNEL_METADATA).is_file():
        kernel_id(folder)  # a file here, perhaps edited by hand: checked before signing in
    if action == "wheels":  # decided before signing in: with nothing lacking, nothing to push
        needed = wheels.lacked([cfg.backbone])
        if not needed:
            print(f"{wheels.ON_KAGGLE} builds {cfg.backbone}: no wheels to push, and `kernel` "
                  "attaches none")  # fmt: skip
            return 0
    doing, call = {  # as an error says it, and the call
        "download": (f"downloading {cfg.competition}", lambda api: download(api, run)),
        "push": (f"pushing {folder}", lambda api: push(api, folder)),
        "status": ("reading the kernel's status", lambda api: status(api, folder)),
        "output": ("fetching the kernel's output", lambda api: output(api, run, folder)),
        "submit": (f"submitting to {cfg.competition}",
                   lambda api: submit(api, run, message, kernel_dir)),
        "submissions": (f"listing the submissions to {cfg.competition}",
                        lambda api: submissions(api, run)),
        "dataset": ("pushing the records as a dataset", lambda api: push_dataset(api, run, slug)),
        "wheels": ("pushing the wheels as a dataset", lambda api: push_wheels(api, needed, slug)),
    }[action]  # fmt: skip
    import requests

    try:
        return call(client()) or 0  # a token is checked with Kaggle: no network fails there
    except requests.HTTPError as error:
        raise refusal(error, cfg, doing) from error
    except (requests.ConnectionError, requests.Timeout) as error:
        raise unreachable(error, doing) from error
    except ValueError as error:  # what the client raises for a kernel it may not read
        if "Cannot access kernel" not in str(error) and "Permission" not in str(error):
            raise
        raise UserError(
            f"Kaggle gives no access to the kernel while {doing} ({error}); push it first "
            "with `kaggle push`, or check the id in kernel-metadata.json"
        ) from error


ACTIONS = {
    "download": "the competition's files into the data folder, unzipped",
    "push": "the kernel folder to Kaggle, where it runs",
    "status": "of a pushed notebook's latest run, with its version (--kernel-dir: which)",
    "output": "of the pushed notebook (submission.csv, the log) into the output folder",
    "submit": f"the inference notebook (--kernel-dir, else {INFERENCE_DIR}/), else the output's "
              "submission.csv, with the output's CV in the description",
    "submissions": "the competition's submissions: scores beside the CV each was sent with",
    "dataset": "the records folder (--data-dir) as a private Kaggle dataset, new or a new version",
    "wheels": "what the backbone (--backbone) needs beyond Kaggle's image, as a private dataset "
              "of wheels that `kernel` attaches (nothing where the image has it all)",
}  # fmt: skip


def arguments(parser) -> None:
    parser.add_argument("action", choices=list(ACTIONS), metavar="ACTION", help="one of below")
    width = max(map(len, ACTIONS)) + 2
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # the lines as written
    parser.epilog = "actions:\n" + "\n".join(
        f"  {action:<{width}}{help}" for action, help in ACTIONS.items()
    )
    parser.add_argument(
        "--kernel-dir", help=f"the notebook's folder: `kernel` writes {KERNEL_DIR} (the default), "
        f"`kernel --inference` writes {INFERENCE_DIR}; submit sends this notebook, by default "
        f"{INFERENCE_DIR} when it is there, else the output's submission.csv as a file",
    )  # fmt: skip
    message = "submit: the submission's description, to which the output's CV is added"
    parser.add_argument("--message", default="", help=message)
    parser.add_argument(
        "--slug", default="",
        help="dataset, wheels: its slug (default: the one pushed before, else "
        "<package>-records, <package>-wheels)",
    )  # fmt: skip


def command(args, run: Run) -> int:
    return act(args.action, run, args.kernel_dir, args.message, args.slug)
