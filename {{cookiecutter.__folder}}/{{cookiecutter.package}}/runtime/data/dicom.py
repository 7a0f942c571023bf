"""DICOM files and series as a radiologist's viewer shows them, 8 bits a channel.

A grey image's stored values are rescaled first (Rescale Slope and Intercept: Hounsfield
units for CT), then windowed (the file's own Window Center and Width, by its VOI LUT
Function, or its VOI LUT, else its range; or a window given), then cut to 8 bits, never
before: 12- and 16-bit data keep their contrast. MONOCHROME1 (white is zero) is inverted. A
series (a folder of single-frame slices, or a multi-frame file's frames) gives `slices` of its
slices, sorted by position and stacked as channels. pydicom is imported where a file is read,
so nothing else pays for it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from ..errors import UserError, first_line
from ..platform.files import DICOM_SUFFIXES

# Named windows, (centre, width) in Hounsfield units, as viewers preset them for CT.
WINDOWS = {"lung": (-600, 1500), "soft-tissue": (40, 400), "bone": (400, 1800), "brain": (40, 80)}
# What decodes the compressed transfer syntaxes (JPEG Lossless, JPEG-LS, JPEG 2000).
DECODERS = "pylibjpeg pylibjpeg-libjpeg pylibjpeg-openjpeg"
LEAVE_OUT = "leave it out of the CSV and the folder"


class Unreadable(Exception):
    """A DICOM file or series that gives no image; the message says why and what to do."""


def is_dicom(path: Path) -> bool:
    """By content: the 'DICM' a DICOM file holds after its 128-byte preamble; a .dcm without
    one is tried all the same, and named if pydicom cannot read it."""
    if path.suffix.lower() in DICOM_SUFFIXES:
        return True
    with open(path, "rb") as file:
        return file.read(132)[128:] == b"DICM"


def window(text: str, flag: str = "records --window") -> str:
    """--window checked before any work: auto, a name in WINDOWS, or CENTER,WIDTH."""
    try:
        centre_width(text)
    except ValueError:
        raise UserError(
            f"{flag} {text}: not a window; give auto (the file's own), CENTER,WIDTH "
            f"such as 40,400, or one of {', '.join(WINDOWS)}"
        ) from None
    return text


def centre_width(text: str) -> tuple[float, float] | None:
    """The window --window names (None: auto); ValueError when it names none."""
    if text == "auto" or text in WINDOWS:
        return WINDOWS.get(text)
    centre, width = map(float, text.split(","))
    if not width > 0:
        raise ValueError(text)
    return centre, width


def pixels(path: str, window: str = "auto", slices: int = 3, frames: str = "middle", at: str = ""):
    """uint8 pixels, height x width x channels: 1 (grey), 3 (colour, or three slices). `path`
    is a file, or a folder of one series; `at`, the slice to centre on (its Instance Number or
    file name; a multi-frame file's frame from 1), else they are evenly spaced."""
    if os.path.isdir(path):
        found = series(path)
        named = [i for i, ds in enumerate(found) if at in names(ds)]
        if at and not named:
            raise Unreadable(f"no slice has Instance Number or file name {at!r} (its CSV row)")
        planes = [slice_of(found[index].filename) for index in picked(len(found), slices, named)]
    else:
        ds = read(path)
        stored = decoded(ds)
        colour = ds.get("SamplesPerPixel", 1) > 1 or "PALETTE" in ds.PhotometricInterpretation
        count = int(ds.get("NumberOfFrames", 1) or 1)
        every = frames == "slices" and not colour
        named = [int(at) - 1] if at.isdigit() else []  # a frame from 1, as the CSV names it
        chosen = picked(count, slices, named) if every else [count // 2]
        held = [stored[index] for index in chosen] if count > 1 else [stored]
        if colour:
            return coloured(ds, held[0])
        planes = [(ds, frame) for frame in held]
    return np.stack(grey(planes, window), axis=-1)


def names(ds) -> tuple[str, str, str]:
    """What a CSV may call a slice: its Instance Number, its file's name or stem."""
    return str(ds.get("InstanceNumber", "")), Path(ds.filename).name, Path(ds.filename).stem


def picked(count: int, slices: int, at: list[int]) -> list[int]:
    """Which of `count` slices: `slices` centred on `at`'s one, else the middles of `slices`
    equal parts (the middle one alone for 1); repeated at the edges when there are too few."""
    if at:
        first = at[0] - slices // 2
        return [min(max(index, 0), count - 1) for index in range(first, first + slices)]
    return [min(count - 1, int((part + 0.5) * count / slices)) for part in range(slices)]


def slice_of(path: str) -> tuple:
    """One slice of a series read and decoded; its problem names it."""
    try:
        ds = read(path)
        return ds, decoded(ds)
    except Unreadable as error:
        raise Unreadable(f"slice {Path(path).name}: {error}") from error


def read(path: str, pixels: bool = True):
    """The file's dataset (without its pixels: the header alone); Unreadable when pydicom
    cannot read it or it holds no image."""
    import pydicom

    try:
        ds = pydicom.dcmread(path, stop_before_pixels=not pixels)
    except Exception as error:  # pydicom raises many kinds on a bad file
        raise Unreadable(
            f"not a DICOM file pydicom can read ({first_line(error)}); {LEAVE_OUT}"
        ) from error
    if pixels and ("PixelData" not in ds or "Rows" not in ds):
        # pydicom reads a file cut short in its compressed pixels as an empty dataset.
        if "Rows" in pydicom.dcmread(path, stop_before_pixels=True):  # an image's header
            raise Unreadable(
                "its pixel data is missing or cut short; it is damaged: download it again"
            )
        raise Unreadable(f"a DICOM file without pixel data (a report, not an image); {LEAVE_OUT}")
    return ds


def decoded(ds):
    """The stored values of every frame; Unreadable, naming the fix, when the file's transfer
    syntax needs a decoder that is not installed."""
    decodable(ds)
    try:
        return ds.pixel_array
    except Exception as error:  # as many kinds, from each decoder
        raise Unreadable(
            f"its pixels do not decode ({first_line(error)}); it is damaged or cut short: download "
            "it again"
        ) from error


def decodable(ds) -> None:
    """Unreadable, naming the fix, where the file's transfer syntax needs a decoder that is not
    installed: known from its header alone."""
    from pydicom.pixels import get_decoder

    syntax = ds.file_meta.get("TransferSyntaxUID")
    if syntax and syntax.is_compressed and not get_decoder(syntax).is_available:
        raise Unreadable(
            f"its transfer syntax, {syntax.name}, needs a decoder that is not installed: "
            f"{Path(sys.executable).name} -m pip install {DECODERS}"
        )


def grey(planes: list, window: str) -> list:
    """Each (dataset, stored values) as 8-bit grey: rescaled, windowed (the first plane's own
    window for auto, else the range of them all), MONOCHROME1 inverted."""
    from pydicom.pixels import apply_modality_lut, apply_voi_lut

    values = [apply_modality_lut(stored, ds).astype(np.float64) for ds, stored in planes]
    first = planes[0][0]
    function = "LINEAR"  # how the window maps values to grey: a given window, as viewers draw it
    if centre_width(window):
        centre, width = centre_width(window)
    elif "WindowCenter" in first and "WindowWidth" in first:
        own = [first[name] for name in ("WindowCenter", "WindowWidth")]
        centre, width = (float(item.value if item.VM == 1 else item.value[0]) for item in own)
        function = str(first.get("VOILUTFunction") or "LINEAR").strip().upper()
    elif "VOILUTSequence" in first:  # a table in place of a window: it spans its bit depth
        values = [apply_voi_lut(value, ds) for value, (ds, _) in zip(values, planes, strict=True)]
        depth = 2 ** int(first.VOILUTSequence[0].LUTDescriptor[2])
        centre, width = depth / 2, depth
    else:
        low, high = min(value.min() for value in values), max(value.max() for value in values)
        centre, width = (low + high + 1) / 2, high - low + 1
    inverted = first.PhotometricInterpretation == "MONOCHROME1"  # white is zero
    scaled = [windowed(value, centre, width, function) for value in values]
    return [np.round((1 - part if inverted else part) * 255).astype(np.uint8) for part in scaled]


def windowed(values, centre: float, width: float, function: str):
    """Values as 0..1 through a window, by the file's VOI LUT Function (DICOM PS3.3 C.11.2.1.2
    and C.11.2.1.3): SIGMOID (many mammograms), LINEAR_EXACT, else LINEAR, where centre - 0.5
    is mid-grey."""
    if function == "SIGMOID":
        return 1 / (1 + np.exp(-4 * (values - centre) / max(width, 1e-6)))
    if function == "LINEAR_EXACT":
        return np.clip((values - centre) / max(width, 1e-6) + 0.5, 0, 1)
    return np.clip((values - centre + 0.5) / max(width - 1, 1) + 0.5, 0, 1)


def coloured(ds, stored):
    """RGB, 8 bits: a palette's colours looked up; 16 and 32 bits cut to their top 8."""
    from pydicom.pixels import apply_color_lut

    if "PALETTE" in ds.PhotometricInterpretation:
        stored = apply_color_lut(stored, ds)
    return np.right_shift(stored, 8 * stored.dtype.itemsize - 8).astype(np.uint8)


def series(folder: str) -> list:
    """The headers of a series' slices (every DICOM file under the folder), sorted by their
    position along the slices' normal, else by Instance Number; Unreadable when they are
    several series, or differ in size."""
    headers = []
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file() and is_dicom(path):
            try:
                headers.append(read(str(path), pixels=False))
            except Unreadable as error:
                raise Unreadable(f"slice {path.name}: {error}") from error
    if len({ds.get("SeriesInstanceUID") for ds in headers}) > 1:
        raise Unreadable(
            "holds several series (Series Instance UIDs); give each series its CSV row, by the "
            "folder that holds it alone"
        )
    sizes = {(ds.get("Rows"), ds.get("Columns")): Path(ds.filename).name for ds in headers}
    if len(sizes) > 1:
        shown = ", ".join(f"{rows} x {columns} ({name})" for (rows, columns), name in sizes.items())
        raise Unreadable(f"its slices differ in size: {shown}; leave the odd ones out of it")

    def position(ds) -> tuple[float, float]:
        facing, at = ds.get("ImageOrientationPatient"), ds.get("ImagePositionPatient")
        along = float(np.dot(np.cross(facing[:3], facing[3:]), at)) if facing and at else 0.0
        return along, float(ds.get("InstanceNumber") or 0)

    return sorted(headers, key=position)
