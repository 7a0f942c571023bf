"""One image file (or DICOM series) made ready for a TFRecord: decoded once, upright, RGB.

Kept free of TensorFlow so the writer's worker processes start in a moment.
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
from pathlib import Path

from PIL import Image, ImageOps, UnidentifiedImageError

from ..runtime.data import dicom

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


def prepare(path: str, decoding: Decoding = AS_THEY_ARE, at: str = "") -> Prepared:
    """The bytes to store for the image at `path`, a DICOM file or series folder (`at`: the
    slice its CSV row names), resized to resize x resize if asked.

    JPEG bytes pass through unchanged when they already decode upright as RGB or grayscale
    (the loader decodes grayscale as RGB); PNG and other formats, CMYK, alpha, EXIF-rotated,
    reduced and resized photos are re-encoded as JPEG; DICOM as PNG, whose grey levels are
    the window's exactly, each slice its own channel (JPEG's colour would blend them).
    """
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
    """The refusal of an image over --max-image-pixels."""
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
