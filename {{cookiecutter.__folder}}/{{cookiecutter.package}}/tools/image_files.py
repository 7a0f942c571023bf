"""One image file made ready for a TFRecord: decoded once, upright, RGB, JPEG.

Kept free of TensorFlow so the writer's worker processes start in a moment.
"""

from __future__ import annotations

import dataclasses
import io

from PIL import Image, ImageOps, UnidentifiedImageError

ORIENTATION = 0x0112  # the EXIF tag cameras set instead of rotating the pixels
QUALITY = 95


@dataclasses.dataclass(frozen=True)
class Prepared:
    jpeg: bytes = b""  # what the record stores; empty when the file is unusable
    width: int = 0
    height: int = 0
    problem: str = ""  # why the file is unusable


def prepare(path: str, resize: int = 0) -> Prepared:
    """The JPEG bytes to store for the image at `path`, resized to resize x resize if asked.

    JPEG bytes pass through unchanged when they already decode upright as RGB or grayscale
    (the loader decodes grayscale as RGB); PNG and other formats, CMYK, alpha, EXIF-rotated
    photos and resized images are re-encoded.
    """
    try:
        with open(path, "rb") as file:
            raw = file.read()
        with Image.open(io.BytesIO(raw)) as image:
            image.load()  # decodes every pixel: a truncated file fails here, not mid-epoch
            rotated = image.getexif().get(ORIENTATION, 1) not in (1, None)
            resized = bool(resize) and image.size != (resize, resize)
            if image.format == "JPEG" and image.mode in ("RGB", "L") and not (rotated or resized):
                return Prepared(raw, *image.size)
            upright = ImageOps.exif_transpose(image) if rotated else image
            rgb = upright.convert("RGB")
            if resize:
                rgb = rgb.resize((resize, resize), Image.Resampling.BICUBIC)
            encoded = io.BytesIO()
            rgb.save(encoded, "JPEG", quality=QUALITY)
            return Prepared(encoded.getvalue(), *rgb.size)
    except UnidentifiedImageError:
        return Prepared(problem="not an image Pillow can read")
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as error:
        return Prepared(problem=f"does not decode ({type(error).__name__}: {error})")


def prepare_all(job: tuple[str, int]) -> Prepared:
    """`prepare` for a pool's map: one (path, resize) tuple."""
    return prepare(*job)
