"""How sharp, large and glare-free are the faces the holder match reads? The pairs photos against made-up bad ones.

    .venv/bin/python -m assurance.research.holder_match.portrait_quality /work/shared/data/faces-pairs

Prints the distribution of portrait_quality (size, sharpness, glare of the face dlib's chip is cut from) over
every photo of the folder that shows one face, and over the tests' passport page (the astronaut's portrait)
photographed well, blurred, small and under a light's reflection: where a limit would send a portrait back
before a match is spent on it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter


@dataclass(frozen=True)
class PortraitQuality:
    """What a face gives the matcher to work with."""

    width: float  # the face's width in the picture's own pixels
    sharpness: float  # variance of the Laplacian of dlib's 150x150 grey chip of the face
    glare: float  # share of the chip's central pixels that are blown out (all channels 250 or more)


def portrait_quality(face, picture_size: tuple[int, int]) -> PortraitQuality:
    from scipy.ndimage import laplace

    chip = face.identity_chip.astype(np.float64)
    centre = chip[30:120, 30:120]
    return PortraitQuality(
        width=face.width * max(picture_size) / max(face.image_size),
        sharpness=float(laplace(chip.mean(axis=2)).var()),
        glare=float((centre.min(axis=2) >= 250).mean()),
    )


def measured(picture: Image.Image, max_side: int) -> PortraitQuality | None:
    from checks.faces import dominant_face, face_engine

    face, rival = dominant_face(face_engine().faces(picture, max_side=max_side, identity_chips=True))
    return None if face is None or rival else portrait_quality(face, picture.size)


def main() -> None:
    from checks.face_match import DOCUMENT_MAX_SIDE, compare, live_descriptor, portrait_descriptor
    from checks.images import open_image
    from tests.support.documents import encode, mrz_card, td3_lines
    from tests.support.faces import astronaut_portrait, challenge_frames

    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    folder = Path(parser.parse_args().directory)
    rows = []
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() in (".jpg", ".jpeg", ".png"):
            with Image.open(path) as picture:
                found = measured(picture.convert("RGB"), 800)
            if found is not None:
                rows.append((found.width, found.sharpness, found.glare))
    values = np.array(rows)
    print(f"{len(values)} photos with one face")
    for column, name in enumerate(("width px", "sharpness", "glare")):
        low = np.percentile(values[:, column], [0, 1, 5, 50, 95, 99, 100])
        print(f"  {name}: min, 1st, 5th, median, 95th, 99th percentile, max: " + ", ".join(f"{v:.3g}" for v in low))
    page = mrz_card(td3_lines(), portrait=astronaut_portrait()[0])
    glare = page.copy()
    box = page.width // 2
    ImageDraw.Draw(glare).ellipse((60, 120, 60 + box // 2, 120 + box // 2), fill=(255, 255, 255))
    variants = {
        "passport page": page,
        **{f"blurred (Gaussian radius {r})": page.filter(ImageFilter.GaussianBlur(r)) for r in (2, 3, 4, 5, 6, 7)},
        **{
            f"photographed from afar (1/{n} of the size)": page.resize((page.width // n, page.height // n))
            for n in (2, 3)
        },
        "a reflection over the portrait": glare,
    }
    # The astronaut's own head turns, as the holder match reads them: does the portrait still match? Each page
    # as an upload arrives, a JPEG (its blocks add to the sharpness measured).
    live = live_descriptor([data for step, data in challenge_frames(["left", "right", "center"]) if step == "center"])
    for name, picture in variants.items():
        picture = open_image(encode(picture))
        portrait = portrait_descriptor([picture])
        match = "no portrait found" if portrait is None else compare(live, portrait)
        print(f"{name} ({picture.width}x{picture.height}): {measured(picture, DOCUMENT_MAX_SIDE)}; {match}")


if __name__ == "__main__":
    main()
