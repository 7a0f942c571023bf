"""`records`: a competition's images and CSV become sharded TFRecords with folds, and a
manifest. It writes into --output-dir
    train/fold0-00-<records>.tfrec ...  image (JPEG; DICOM: PNG), class, id, fold; a file a fold
    test/00-<records>.tfrec ...         image, id (the file's path under --test-images, extension
                                        included: t0.jpg, sub/t0.jpg)
    manifest.json                       shards, records per fold and class, class names, the CSV
                                        columns used, multi_label, image sizes, skipped files, the
                                        images stored reduced, how DICOM was decoded, the command

Ids stay as the competition spells them; competition_files.py finds the id and label columns
(docs/data.md). A multi-label record's "class" is a multi-hot row, and one of values or shares
a row of floats (competition_files.py). An id may name a DICOM file or a folder of one series
(dicom.py decodes them); an image past Pillow's decompression-bomb limit is stored reduced.

Every input is checked before the first shard is written (competition_files.py). Images are
decoded in parallel over the cores (`prepare`, in worker processes that load no TensorFlow, so
they start in a moment) into shards of about 150 MB, written as shards.py writes every shard;
the manifest comes last, so a killed run leaves no shard that looks whole and no manifest that
lists one. Which images go into which shard is planned first: the same command run again after
an interruption keeps the shards already whole and writes the rest (`--force` starts over). The
loader reads the manifest, so `train --data-dir <output>` needs no other file flag.

--output-dir is a folder of records' own: it must not hold, or sit inside, an input, nor hold a
file records does not write. `--force` removes only the files an earlier run names (its
manifest's or progress file's shards, and those two files), never a folder, never a guess."""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import hashlib
import io
import itertools
import json
import math
import multiprocessing
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image, ImageOps, UnidentifiedImageError

from ..runtime.config import Config, given_fields, notebook_sources, targets
from ..runtime.data import dicom
from ..runtime.data.competition_files import classes_held, refuse_missing, test_rows, training_rows
from ..runtime.errors import UserError, whole_number
from ..runtime.platform import files
from ..runtime.platform.files import IMAGE_SUFFIXES, MANIFEST, METADATA_TABLE
from ..runtime.platform.run_lock import one_run_at_a_time

if TYPE_CHECKING:
    import pandas as pd

SHARD_BYTES = 150 * 2**20  # Kaggle's advice for TPUs: shards of 100 to 200 MB
# What an unfinished run has written, shard by shard, and the plan it follows: the next run of
# the same command keeps those shards. Gone once the manifest is written.
PROGRESS = "records-progress.json"
SKIPPED_SHOWN = 5  # skipped files named on screen; the manifest lists every one
# What records writes in --output-dir, and nothing else: in train/ and test/ the shards (each
# under .partial until whole); beside them the manifest, the progress file and the metadata table
# (each under .tmp- until whole), and the lock of the run writing them.
OWN_SPLITS = ("train", "test")
OWN_SUFFIXES = (".tfrec", ".partial")
OWN_TOP = {".run.lock", *(start + name for start in ("", ".tmp-")
                          for name in (MANIFEST, PROGRESS, METADATA_TABLE))}  # fmt: skip
# How messages name the inputs of the metadata (metadata.metadata_tables).
FLAGS = {"test_csv": "records --test-csv", "metadata": "records --metadata-columns",
         "test_images": "records --test-images"}  # fmt: skip


ORIENTATION = 0x0112  # the EXIF tag cameras set instead of rotating the pixels
QUALITY = 95
# Pillow's guard against decompression bombs, as it ships. A competition's own images are the
# user's data, not an attack: one larger is read all the same, and stored reduced to fit it.
PILLOW_LIMIT = Image.MAX_IMAGE_PIXELS
Image.MAX_IMAGE_PIXELS = None


@dataclasses.dataclass(frozen=True)
class Decoding:
    """How `records` decodes each image (its flags)."""

    resize: int = 0  # stored N x N; 0: as they are
    max_pixels: int = 0  # larger images are refused; 0: none is
    window: str = "auto"  # DICOM, as dicom.pixels takes them
    slices: int = 3
    frames: str = "middle"


AS_THEY_ARE = Decoding()


@dataclasses.dataclass(frozen=True)
class Prepared:
    encoded: bytes = b""  # what the record stores; empty when the file is unusable
    width: int = 0
    height: int = 0
    problem: str = ""  # why the file is unusable
    original: tuple = ()  # (width, height) of an image stored reduced


# The CSV's columns and the folds.
CONFIG_FIELDS = ("id_column", "label_column", "multi_label", "keep_label_spellings", "folds",
                 "fold_seed", "metric", "sample_submission")  # fmt: skip


def write_records(
    cfg: Config, images: str, csv: str, output: str, group_column: str = "",
    decoding: Decoding = AS_THEY_ARE, test_images: str = "", command: str = "",
    force: bool = False, test_csv: str = "", metadata_columns: str = "auto",
    slice_column: str = "", given: frozenset[str] | None = None,
) -> dict:  # fmt: skip
    """Write the records and the manifest (`command`: what made them) into `output`; returns the
    manifest. `slice_column`: the CSV's column naming the slice each series is centred on; `given`:
    the fields the user gave (the CSV's columns are found where they did not), by default `cfg`'s
    that are not defaults."""
    from ..runtime.data.metadata import metadata_tables

    output = files.output_folder(output, "records --output-dir", buckets=True)
    check_folders(output, images, csv, test_images)
    given = given_fields(cfg, notebook_sources(cfg)) if given is None else given
    rows, found = training_rows(cfg, images, csv, group_column, dicom=True, given=given)
    if slice_column:
        refuse_missing(found["columns"], csv, slice_column, "records --slice-column")
        rows["at"] = found["columns"][slice_column].to_numpy()
    tests = test_rows(test_images, found["series_depth"])
    dicom_read = None
    if any(Path(path).suffix.lower() not in IMAGE_SUFFIXES for path in [*rows.path, *tests.path]):
        import pydicom  # noqa: F401 (missing, it is named with the install before any shard)

        dicom_read = {
            "window": decoding.window, "slices": decoding.slices, "frames": decoding.frames,
            "slice_column": slice_column, "series_depth": found["series_depth"],
        }  # fmt: skip
    table, columns = metadata_tables(
        rows, found, test_csv, tests["id"].tolist(), metadata_columns, group_column, FLAGS
    )
    planned = plan(rows, tests, cfg.folds)
    manifest = {
        "command": command, "csv": csv, "images": images, "test_images": test_images,
        "id_column": found["id_column"], "label_column": found["label_column"],
        "group_column": group_column, "classes": found["classes"],
        "multi_label": found["multi_label"], "num_classes": found["num_classes"],
        "targets": targets(cfg),  # classes; or values or shares, which this metric scores
        "metric": cfg.metric, "folds": cfg.folds, "fold_seed": cfg.fold_seed,
        "resize": decoding.resize, "max_image_pixels": decoding.max_pixels, "dicom": dicom_read,
        "metadata": {**columns, "file": METADATA_TABLE if table is not None else None},
    }  # fmt: skip
    with one_run_at_a_time(output, "records --output-dir"):  # two writers would mix their shards
        shards = write_plan(output, planned, decoding, command, force)
        train = [shard for shard in shards if shard["file"] and "fold" in shard]
        test = [shard for shard in shards if shard["file"] and "fold" not in shard]
        manifest |= {
            "train": {**summary(train), "per_fold": per_fold(shards)},
            "test": summary(test),
            "image_sizes": size_range([size for shard in shards for size in shard["sizes"]]),
            "skipped": found["skipped"] + [file for shard in shards for file in shard["skipped"]],
            "reduced": [file for shard in shards for file in shard["reduced"]],
        }
        if table is not None:  # before the manifest, which names it
            with files.written_whole(output / METADATA_TABLE) as temporary:
                table.to_csv(temporary, index=False)
        files.write_json(output / MANIFEST, manifest)
        (output / PROGRESS).unlink()
    return manifest


def check_folders(output: Path, images: str, csv: str, test_images: str) -> None:
    """Refuse, before anything is written, an --output-dir that holds or sits inside an input
    (a rerun with --force would delete it), one holding a file records does not write, and
    test images that are the training images."""
    inputs = {"--images": images, "--csv": csv, "--test-images": test_images}
    for flag, path in inputs.items():
        if path and not files.is_url(output) and overlap(output, Path(path)):
            elsewhere = Path(path).resolve().parent / "records"
            clear = not any(p and overlap(elsewhere, Path(p)) for p in inputs.values())
            suggestion = f", such as {elsewhere}" if clear else ""
            raise UserError(
                f"records --output-dir {output} and {flag} {path} overlap: records writes, and "
                "with --force removes, what --output-dir holds; give an --output-dir apart from "
                f"the inputs{suggestion}"
            )
    if test_images and Path(images).resolve().is_relative_to(Path(test_images).resolve()):
        raise UserError(
            f"records --test-images {test_images} holds --images {images}: the training images "
            "would become the test set; give the competition's folder of test images"
        )
    foreign = []  # what records never writes there
    for path in sorted(output.iterdir()) if output.is_dir() else []:
        if path.name in OWN_SPLITS and path.is_dir():
            foreign += [inner for inner in sorted(path.iterdir())
                        if not (inner.is_file() and inner.suffix in OWN_SUFFIXES)]  # fmt: skip
        elif not (path.name in OWN_TOP and path.is_file()):
            foreign.append(path)
    names = [str(path.relative_to(output)) for path in foreign]
    files.refuse_foreign("records --output-dir", output, "records", names)


def overlap(one: Path, other: Path) -> bool:
    """Whether either is the other or under it, links followed."""
    one, other = one.resolve(), other.resolve()
    return one.is_relative_to(other) or other.is_relative_to(one)


def removed_for_force(output: Path) -> None:
    """--force: remove what an earlier run named as its own, and the shards half-written, naming
    each; refuse, removing nothing, where --output-dir holds shards no earlier run names."""
    named = []
    for written in (MANIFEST, PROGRESS):
        path = output / written
        if not path.is_file():
            continue
        try:
            listed = json.loads(path.read_text())
            shards = (
                [shard["file"] for split in OWN_SPLITS for shard in listed[split]["shards"]]
                if written == MANIFEST
                else [shard["file"] for shard in listed["shards"].values()]
            )
        except (ValueError, KeyError, TypeError) as error:
            raise UserError(
                f"records --output-dir {output}: {path} is not as records writes it "
                f"({type(error).__name__}: {error}), so what it names cannot be told; give an "
                "empty folder"
            ) from None
        named += [output / file for file in shards if file] + [path]
    partial = [path for split in OWN_SPLITS for path in (output / split).glob("*.partial")]
    known = sorted({path for path in named + partial if path.is_file()})
    unknown = sorted(
        path for split in OWN_SPLITS for path in (output / split).glob("*.tfrec")
        if path not in known
    )  # fmt: skip
    if unknown:
        raise UserError(
            f"records --output-dir {output} holds shards no {MANIFEST} or {PROGRESS} there names "
            f"({unknown[0]}, ...); --force removes only what records wrote: give an empty folder"
        )
    for path in known:
        path.unlink()
    if known:
        shown = ", ".join(str(path.relative_to(output)) for path in known[:SKIPPED_SHOWN])
        more = f", ... ({len(known)} in all)" if len(known) > SKIPPED_SHOWN else ""
        print(f"--force: removed what records wrote in {output} before: {shown}{more}")


def write_plan(
    output: Path, planned: dict[str, list[dict]], decoding: Decoding, command: str, force: bool
) -> list[dict]:
    """Every planned shard, the whole ones an interrupted run left kept; what each holds."""
    said = [planned, dataclasses.asdict(decoding)]
    key = hashlib.sha256(json.dumps(said, default=str).encode()).hexdigest()
    if force:
        removed_for_force(output)
    done = {} if force else resumable(output, key, command)
    from tqdm.auto import tqdm

    # Processes that decode images, one per core; spawned: TensorFlow's threads make forking unsafe
    spawn = multiprocessing.get_context("spawn")
    pool = concurrent.futures.ProcessPoolExecutor(max_workers=os.cpu_count(), mp_context=spawn)
    images = sum(len(part) for part in planned.values())
    try:
        with tqdm(total=images, unit="image") as bar:
            for number, (name, part) in enumerate(planned.items(), 1):
                bar.set_description(f"shard {number}/{len(planned)} {name}")
                if name not in done:
                    done[name] = write_planned(pool, output, name, part, decoding)
                    progress = {"plan": key, "command": command, "shards": done}
                    files.write_json(output / PROGRESS, progress)
                bar.update(len(part))
    except BaseException:  # an interruption: the images not yet started are dropped at once
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return [done[name] for name in planned]


def plan(rows: pd.DataFrame, tests: pd.DataFrame, folds: int) -> dict[str, list[dict]]:
    """Which images each shard holds, by shard name ("train/fold0-00", "test/00"): each
    fold's images (and the test images) in turn, about SHARD_BYTES of source images a shard."""
    parts = [(f"train/fold{fold}-", rows[rows["fold"] == fold]) for fold in range(max(folds, 1))]
    planned = {}
    for prefix, part in [*parts, ("test/", tests)]:
        if part.empty:
            continue
        source_bytes = sum(map(size_of, part["path"]))
        per_shard = max(1, round(SHARD_BYTES / max(1, source_bytes / len(part))))
        chosen = part.to_dict("records")
        for index, start in enumerate(range(0, len(chosen), per_shard)):
            planned[f"{prefix}{index:02d}"] = chosen[start : start + per_shard]
    return planned


def size_of(path: str) -> int:
    """What an image weighs as a shard plans it: a series, three of its slices."""
    if os.path.isdir(path):
        return 3 * max(file.stat().st_size for file in Path(path).rglob("*") if file.is_file())
    return os.path.getsize(path)


def resumable(output: Path, key: str, command: str) -> dict[str, dict]:
    """The shards an interrupted run of this plan left whole, by name; nothing when starting
    afresh. Refuses a folder holding finished records, or another run's (--force's to remove)."""
    progress = output / PROGRESS
    if (output / MANIFEST).exists():
        raise UserError(
            f"records --output-dir {output} already holds finished records ({MANIFEST}); give an "
            "empty folder, or add --force to write them again"
        )
    if not progress.exists():
        if held := sorted(output.glob("*/*.tfrec")):
            raise UserError(
                f"records --output-dir {output} already holds records this command did not start "
                f"({held[0]}, ...); give an empty folder"
            )
        return {}
    started = json.loads(progress.read_text())
    if started["plan"] != key:
        raise UserError(
            f"records --output-dir {output} holds an unfinished run of other inputs ({PROGRESS}: "
            f"{started['command'] or 'no command recorded'}); run that command again to finish "
            "it, give an empty folder, or add --force to start over"
        )
    whole = {
        name: shard
        for name, shard in started["shards"].items()
        if shard["file"] is None or (output / shard["file"]).is_file()
    }
    if whole:
        kept = f"{len(whole)} whole shard" + ("s" if len(whole) > 1 else "")
        print(f"resuming: {kept} in {output} kept; writing the rest")
    return whole


def write_planned(pool, output: Path, name: str, part: list[dict], decoding: Decoding) -> dict:
    """One planned shard, written whole: its file (None when every image was skipped), its
    record count and what the manifest needs of it."""
    from .shards import write_shard

    split, stem = name.split("/")
    folder = output / split
    if not files.is_url(folder):  # a bucket has no folders: an object's name holds its path
        folder.mkdir(parents=True, exist_ok=True)
    paths, ats = [row["path"] for row in part], [row.get("at", "") for row in part]
    prepared = pool.map(prepare, paths, itertools.repeat(decoding), ats, chunksize=16)
    skipped, sizes, classes, reduced = [], [], collections.Counter(), []

    def kept_records():
        for row, image in zip(part, prepared, strict=True):
            if image.problem:
                skipped.append({"file": row["path"], "reason": image.problem})
                continue
            sizes.append((image.width, image.height))
            if image.original:
                stored = [image.width, image.height]
                reduced.append({"file": row["path"], "size": [*image.original], "stored": stored})
            if "number" in row:
                classes.update(str(number) for number in classes_held(row["number"]))
            yield example(row, image)

    path, count = write_shard(folder, stem, kept_records())
    fold = {"fold": int(part[0]["fold"])} if "fold" in part[0] else {}
    return {
        "file": str(path.relative_to(output)) if path else None, "records": count, **fold,
        "classes": dict(classes), "sizes": list(size_range(sizes).values()),
        "skipped": skipped, "reduced": reduced,
    }  # fmt: skip


def example(row: dict, image: Prepared) -> bytes:
    """The record: the features the loader reads by default (image, class, id) and the fold."""
    from .shards import serialized

    values = {"image": image.encoded, "id": str(row["id"])}
    if "number" in row:
        values["fold"] = int(row["fold"])
        number = row["number"]
        values["class"] = number if isinstance(number, list) else int(number)
    return serialized(values)


def prepare(path: str, decoding: Decoding = AS_THEY_ARE, at: str = "") -> Prepared:
    """The bytes to store for the image at `path`, a DICOM file or series folder (`at`: the
    slice its CSV row names), resized to resize x resize if asked.

    JPEG bytes pass through unchanged when they already decode upright as RGB or grayscale (the
    loader decodes grayscale as RGB); PNG and other formats, CMYK, alpha, EXIF-rotated, reduced and
    resized photos are re-encoded as JPEG; DICOM as PNG, whose grey levels are the window's exactly,
    each slice its own channel (JPEG's colour would blend them)."""
    try:
        if os.path.isdir(path) or dicom.is_dicom(Path(path)):
            pixels = dicom.pixels(path, decoding.window, decoding.slices, decoding.frames, at)
            image = Image.fromarray(pixels[..., 0] if pixels.shape[-1] == 1 else pixels)
            return too_large(image.size, decoding) or stored(image, decoding, "PNG")
        raw = Path(path).read_bytes()
        with Image.open(io.BytesIO(raw)) as image:
            size = image.size
            if refused := too_large(size, decoding):
                return refused
            factor = math.ceil(math.sqrt(math.prod(size) / PILLOW_LIMIT))
            if factor > 1:  # a JPEG decodes at 1/2, 1/4 or 1/8 of its size (its draft), whole
                image.draft(image.mode, (size[0] // factor, size[1] // factor))
                rest = math.ceil(math.sqrt(math.prod(image.size) / PILLOW_LIMIT))
                if rest > 1:  # the others are reduced; palette and 1-bit ones as RGB
                    image = image.convert("RGB") if image.mode in ("P", "1", "I;16") else image
                    image = image.reduce(rest)
            image.load()  # decodes every pixel: a truncated file fails here, not mid-epoch
            rotated = image.getexif().get(ORIENTATION, 1) not in (1, None)
            resized = bool(decoding.resize) and image.size != (decoding.resize,) * 2
            as_is = image.format == "JPEG" and image.mode in ("RGB", "L") and factor == 1
            if as_is and not (rotated or resized):
                return Prepared(raw, *image.size)
            upright = ImageOps.exif_transpose(image) if rotated else image
            return stored(upright.convert("RGB"), decoding, "JPEG", size if factor > 1 else ())
    except dicom.Unreadable as error:
        return Prepared(problem=str(error))
    except UnidentifiedImageError:
        return Prepared(problem="not an image Pillow can read")
    except (OSError, ValueError, SyntaxError) as error:
        return Prepared(problem=f"does not decode ({type(error).__name__}: {error})")


def too_large(size: tuple[int, int], decoding: Decoding) -> Prepared | None:
    if decoding.max_pixels and math.prod(size) > decoding.max_pixels:
        return Prepared(
            problem=f"{size[0]:,} x {size[1]:,} pixels, more than --max-image-pixels "
            f"{decoding.max_pixels:,}; raise it to read the image"
        )
    return None


def stored(image: Image.Image, decoding: Decoding, kind: str, original: tuple = ()) -> Prepared:
    if decoding.resize:
        image = image.resize((decoding.resize,) * 2, Image.Resampling.BICUBIC)
    encoded = io.BytesIO()
    image.save(encoded, kind, **({"quality": QUALITY} if kind == "JPEG" else {}))
    return Prepared(encoded.getvalue(), *image.size, original=original)


def summary(shards: list[dict]) -> dict:
    keys = ("file", "records", "fold")
    listed = [{key: shard[key] for key in keys if key in shard} for shard in shards]
    return {"records": sum(shard["records"] for shard in shards), "shards": listed}


def per_fold(shards: list[dict]) -> dict:
    """Records per fold, and within each the records holding each class: what the folds hold."""
    folds = collections.defaultdict(collections.Counter)
    for shard in shards:
        if "fold" in shard and shard["records"]:
            folds[shard["fold"]]["records"] += shard["records"]
            folds[shard["fold"]].update(shard["classes"])
    return {
        str(fold): {
            "records": counts.pop("records"),
            "classes": dict(sorted(counts.items(), key=lambda item: int(item[0]))),
        }
        for fold, counts in sorted(folds.items())
    }


def size_range(sizes: list) -> dict:
    """The smallest and largest (width, height) by area, the first of equals."""
    if not sizes:
        return {}
    return {"smallest": list(min(sizes, key=math.prod)), "largest": list(max(sizes, key=math.prod))}


def arguments(parser) -> None:
    parser.add_argument("--images", required=True, help="folder of training images")
    csv = "one row per training image: id and label columns"
    parser.add_argument("--csv", required=True, help=csv)
    parser.add_argument(  # --output: its name before
        "--output-dir", "--output", dest="output", required=True,
        help="folder to write (empty, or an interrupted run's)",
    )  # fmt: skip
    group = "keep each group in one fold (e.g. patient)"
    parser.add_argument("--group-column", default="", help=group)
    parser.add_argument(
        "--resize", type=whole_number("records --resize", 32, zero="as they are"), default=0,
        help="store N x N images (default: as they are)",
    )  # fmt: skip
    parser.add_argument("--test-images", default="", help="folder of test images (ids: file names)")
    force = "write the records again over what --output-dir holds"
    parser.add_argument("--force", action="store_true", help=force)
    test_csv = "the test images' table of metadata (ids and columns)"
    parser.add_argument("--test-csv", default="", help=test_csv)
    columns = "columns kept beside each image; auto: those both tables hold; '': none"
    parser.add_argument("--metadata-columns", default="auto", help=columns)
    parser.add_argument(
        "--max-image-pixels", type=whole_number("records --max-image-pixels", 1, zero="no limit"),
        default=0, metavar="N",
        help="refuse images of more pixels (default: read any; those past Pillow's limit reduced)",
    )  # fmt: skip
    dicom_flags = parser.add_argument_group("DICOM")
    dicom_flags.add_argument(
        "--window", type=dicom.window, default="auto",
        help=f"auto (the file's own, else its range), CENTER,WIDTH or {', '.join(dicom.WINDOWS)}",
    )  # fmt: skip
    dicom_flags.add_argument(
        "--slices", type=int, choices=(1, 3), default=3,
        help="of a series (a folder of slices), stacked as channels, evenly spaced (default: 3)",
    )  # fmt: skip
    centre = "the CSV column naming the slice to centre on (Instance Number or file name)"
    dicom_flags.add_argument("--slice-column", default="", metavar="COLUMN", help=centre)
    dicom_flags.add_argument(
        "--frames", choices=("middle", "slices"), default="middle",
        help="of a multi-frame file: its middle one, or --slices of them as a series' slices",
    )  # fmt: skip


def command(args, run) -> int:
    decoding = Decoding(args.resize, args.max_image_pixels, args.window, args.slices, args.frames)
    made = write_records(
        run.cfg, args.images, args.csv, args.output, args.group_column, decoding,
        args.test_images, command=" ".join(["python -m {{ cookiecutter.package }}", *sys.argv[1:]]),
        force=args.force, test_csv=args.test_csv, metadata_columns=args.metadata_columns,
        slice_column=args.slice_column, given=given_fields(run.cfg, run.sources),
    )  # fmt: skip
    print(
        f"records in {args.output}: train {made['train']['records']} in {made['folds']} "
        f"folds, test {made['test']['records']}, skipped {len(made['skipped'])}"
    )
    skipped = [f"skipped {entry['file']}: {entry['reason']}" for entry in made["skipped"]]
    reduced = [
        "reduced {}: {:,} x {:,} pixels, past Pillow's decompression-bomb limit; stored "
        "{:,} x {:,}".format(entry["file"], *entry["size"], *entry["stored"])
        for entry in made["reduced"]
    ]
    for said in (skipped, reduced):  # the first few of each, and how many more
        for line in said[:SKIPPED_SHOWN]:
            print(f"  {line}")
        if len(said) > SKIPPED_SHOWN:
            print(f"  ... and {len(said) - SKIPPED_SHOWN} more (every one in {MANIFEST})")
    from ..runtime.data.metadata import left_out_line

    said = made["metadata"]
    if said["columns"]:
        print(f"metadata: {', '.join(said['columns'])} ({METADATA_TABLE})")
    if said["left_out"]:
        print(f"metadata left out: {left_out_line(said['left_out'])}")
    return 0
