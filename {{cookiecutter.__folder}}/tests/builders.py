"""What the tests build their inputs from: competitions laid out as Kaggle ships them (a
folder of images, train.csv, a sample submission), their images and CSV files, and the ids a
written CSV holds. One place, so every test's competition is made the same way."""

import base64
import csv
import hashlib
import subprocess
import sys
import sysconfig
import zipfile
from importlib.metadata import distribution
from pathlib import Path

import numpy as np
from PIL import Image

# Cassava's classes, each a colour an image is striped in; its labels are numbers too.
COLOURS = {"healthy": (40, 190, 40), "rust": (190, 90, 20), "scab": (90, 70, 60)}
NAMES = list(COLOURS)
COLOURS |= dict(zip("012", COLOURS.values(), strict=True))
# A competition of pets, one colour a class, as `mixed_competition` paints them.
PETS = {"cat": (200, 30, 30), "dog": (30, 200, 30), "owl": (30, 30, 200)}


def write_csv(path, header, rows):
    with open(path, "w", newline="") as file:
        csv.writer(file).writerows([header, *rows])


def ids(path, column: str = "id") -> list[str]:
    """A CSV file's ids, in its rows' order (`column`: the id column's name)."""
    with open(path, newline="") as file:
        return [row[column] for row in csv.DictReader(file)]


def image(path: Path, classes: list[str], rng) -> None:
    """A photo-sized JPEG striped in the colours of its classes."""
    pixels = np.zeros((40, 48, 3))
    for index, name in enumerate(classes):
        pixels[index :: len(classes)] = COLOURS[name]
    pixels = np.clip(pixels + rng.integers(-20, 20, pixels.shape), 0, 255)
    Image.fromarray(pixels.astype(np.uint8)).save(path, quality=95)


def competition(folder: Path, labels: list[str], header: list[str], sample: list[str]) -> Path:
    """train_images/ and train.csv (`header`: id and label columns; ids with .jpg as Cassava
    spells them), test_images/ and sample_submission.csv with `sample`'s columns."""
    rng = np.random.default_rng(0)
    for folder_name in ("train_images", "test_images"):
        (folder / folder_name).mkdir(parents=True)
    rows = []
    for number, label in enumerate(labels):
        name = f"{1000 + number * 7}.jpg"
        image(folder / "train_images" / name, label.split(), rng)
        rows.append((name, label))
    write_csv(folder / "train.csv", header, rows)
    tests = [f"{5000 + n * 3}.jpg" for n in range(9)]
    for number, name in enumerate(tests):
        image(folder / "test_images" / name, [NAMES[number % 3]], rng)  # by name
    order = sorted(tests, key=lambda name: -int(name[:4]))  # not sorted by id: order bugs show
    placeholder = {"labels": ["healthy"], "probabilities": ["0.25"] * (len(sample) - 1)}
    values = placeholder["probabilities" if len(sample) > 2 else "labels"]
    write_csv(folder / "sample_submission.csv", sample, [(name, *values) for name in order])
    return folder


def numbers_competition(folder: Path, columns: list[str], votes: bool = False) -> Path:
    """Images painted one random colour each, and train.csv (`image_id`, then `columns`) with
    each image's red, green and blue on scales of their own (0 to 100, 0 to 1, -500 to 500),
    or with `votes`, ten votes split between them by share; test_images/, solution.csv of the
    test images' true values, and a sample whose columns come before its id, as some do."""
    rng = np.random.default_rng(0)
    scales = [(100, 0), (1, 0), (1000, -500)]

    def painted(path: Path) -> list:
        colour = rng.uniform(0, 1, 3)
        noise = rng.integers(-8, 8, (40, 48, 3))
        Image.fromarray(np.clip(colour * 255 + noise, 0, 255).astype(np.uint8)).save(path)
        if votes:
            return (np.round(colour / colour.sum() * 10)).astype(int).tolist()
        return [
            round(value * scale + offset, 3)
            for value, (scale, offset) in zip(colour, scales, strict=True)
        ]

    for kind, count, table, suffix in (
        ("train", 90, "train", ""),
        ("test", 12, "solution", ".png"),
    ):
        (folder / f"{kind}_images").mkdir(parents=True)
        names = [f"{kind}{number:03d}" for number in range(count)]
        rows = [
            (name + suffix, *painted(folder / f"{kind}_images" / f"{name}.png")[: len(columns)])
            for name in names
        ]
        write_csv(folder / f"{table}.csv", ["image_id", *columns], rows)
    order = [f"test{number:03d}.png" for number in (5, 0, 11, 3, 8, 1, 10, 2, 7, 4, 9, 6)]
    zeros = [0] * len(columns)
    write_csv(
        folder / "sample_submission.csv", [*columns, "image_id"], [(*zeros, n) for n in order]
    )
    return folder


def mixed_competition(folder: Path, counts: dict[str, int], group_size: int = 0) -> Path:
    """Images of one colour per class (JPEG, PNG, grayscale and CMYK among them), train.csv
    with image_id, label (class names) and patient, and a test folder with a sample."""
    rng = np.random.default_rng(0)
    (folder / "train").mkdir(parents=True)
    (folder / "test").mkdir()
    rows = []
    labels = [name for name, count in counts.items() for _ in range(count)]
    for number, label in enumerate(labels):
        pixels = np.clip(np.add(PETS[label], rng.integers(-20, 20, (40, 48, 3))), 0, 255)
        image = Image.fromarray(pixels.astype(np.uint8))
        name = f"img{number:03d}"
        kind = number % 4
        if kind == 1:
            image.save(folder / "train" / f"{name}.png")
        elif kind == 2:
            image.convert("CMYK").save(folder / "train" / f"{name}.jpg", quality=95)
        else:
            image.save(folder / "train" / f"{name}.jpg", quality=95)
        group = f"patient{number // group_size}" if group_size else ""
        rows.append((name, label, group))
    write_csv(folder / "train.csv", ["image_id", "label", "patient"], rows)
    for number in range(6):
        Image.fromarray(np.full((40, 48, 3), 128, np.uint8)).save(
            folder / "test" / f"t{number}.jpg"
        )
    write_csv(
        folder / "sample_submission.csv",
        ["image_id", "label"],
        [(f"t{n}.jpg", "cat") for n in range(6)],
    )
    return folder


def wheel_of_installed(name: str, folder: Path) -> Path:
    """The installed distribution `name` (pure Python, as keras-hub is) packed into folder as
    the wheel pip installed it from: its files as its RECORD lists them, less what installing
    added (bytecode, INSTALLER, REQUESTED), under the wheel's own name and tag, with a RECORD of
    what is packed. pip takes it as the registry's: a wheel offline, no registry asked."""
    dist = distribution(name)
    (tag,) = [
        line.split(": ")[1] for line in dist.read_text("WHEEL").splitlines() if "Tag:" in line
    ]
    added = ("INSTALLER", "REQUESTED", "RECORD", "direct_url.json")
    files = [f for f in dist.files if "__pycache__" not in f.parts and f.name not in added]
    info = next(f.parts[0] for f in dist.files if f.parts[0].endswith(".dist-info"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{dist.metadata['Name'].replace('-', '_')}-{dist.version}-{tag}.whl"
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for file in files:
            data = Path(file.locate()).read_bytes()
            wheel.writestr(file.as_posix(), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{file.as_posix()},sha256={digest.decode()},{len(data)}")
        wheel.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return path


def python_without(folder: Path, *names: str) -> Path:
    """A venv at folder whose site-packages holds this one's (each entry a link), pip
    included, but the distributions `names` (their import folders and .dist-info): an image
    that lacks them, into which pip really installs. Its python, returned, is this one's."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", folder], check=True)
    ours = Path(sysconfig.get_paths()["purelib"])
    theirs = Path(
        subprocess.run(
            [folder / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    left_out = set()
    for name in names:
        dist = distribution(name)
        left_out |= {file.parts[0] for file in dist.files if len(file.parts) > 1}
    for entry in ours.iterdir():
        if entry.name not in left_out:
            (theirs / entry.name).symlink_to(entry)
    return folder / "bin" / "python"
