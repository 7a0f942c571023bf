"""One image file (or DICOM series) made ready for a TFRecord: decoded once, upright, RGB.

Kept free of TensorFlow so the writer's worker processes start in a moment.
"""

from __future__ import annotations

import dataclasses
import io
import os
from pathlib import Path

from PIL import Image, ImageOps, UnidentifiedImageError

from ..runtime.data import dicom

ORIENTATION = 0x0112  # the EXIF tag cameras set instead of rotating the pixels
QUALITY = 95


@dataclasses.dataclass(frozen=True)
class Decoding:
    """How `records` decodes each image (its flags)."""

    resize: int = 0  # stored N x N; 0: as they are
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


def prepare(path: str, decoding: Decoding = AS_THEY_ARE, at: str = "") -> Prepared:
    """The bytes to store for the image at `path`, a DICOM file or series folder (`at`: the
    slice its CSV row names), resized to resize x resize if asked.

    JPEG bytes pass through unchanged when they already decode upright as RGB or grayscale
    (the loader decodes grayscale as RGB); PNG and other formats, CMYK, alpha, EXIF-rotated
    and resized photos are re-encoded as JPEG; DICOM as PNG, whose grey levels are
    the window's exactly, each slice its own channel (JPEG's colour would blend them).
    """
    try:
        if os.path.isdir(path) or dicom.is_dicom(Path(path)):
            pixels = dicom.pixels(path, decoding.window, decoding.slices, decoding.frames, at)
            image = Image.fromarray(pixels[..., 0] if pixels.shape[-1] == 1 else pixels)
            return stored(image, decoding, "PNG")
        with open(path, "rb") as file:
            raw = file.read()
        with Image.open(io.BytesIO(raw)) as image:
            image.load()  # decodes every pixel: a truncated file fails here, not mid-epoch
            rotated = image.getexif().get(ORIENTATION, 1) not in (1, None)
            resized = bool(decoding.resize) and image.size != (decoding.resize,) * 2
            as_is = image.format == "JPEG" and image.mode in ("RGB", "L")
            if as_is and not (rotated or resized):
                return Prepared(raw, *image.size)
            upright = ImageOps.exif_transpose(image) if rotated else image
            return stored(upright.convert("RGB"), decoding, "JPEG")
    except dicom.Unreadable as error:
        return Prepared(problem=str(error))
    except UnidentifiedImageError:
        return Prepared(problem="not an image Pillow can read")
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as error:
        return Prepared(problem=f"does not decode ({type(error).__name__}: {error})")


def stored(image: Image.Image, decoding: Decoding, kind: str) -> Prepared:
    if decoding.resize:
        image = image.resize((decoding.resize,) * 2, Image.Resampling.BICUBIC)
    encoded = io.BytesIO()
    image.save(encoded, kind, **({"quality": QUALITY} if kind == "JPEG" else {}))
    return Prepared(encoded.getvalue(), *image.size)


def prepare_all(job: tuple) -> Prepared:
    """`prepare` for a pool's map: one (path, decoding, at) tuple."""
    return prepare(*job)
