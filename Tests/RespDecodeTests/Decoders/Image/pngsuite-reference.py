#!/usr/bin/env python3
"""Writes PngSuiteReference.tsv: for every PngSuite file that must decode, its RGBA8 byte count, mean colour and
dHash as defined in Sources/RespDecode/Decoders/Image/PixelSummary.swift, computed from pixels decoded by Pillow
(not by libpng, which respdecode uses), so the conformance test compares two independent decoders.

RGBA8 as respdecode defines it: samples as stored (no gamma, no background), 16-bit samples reduced to their high
byte, tRNS turned into alpha by comparing the full-precision samples.

Usage: python3 pngsuite-reference.py ../../../../../shared/corpora/png/PngSuite > PngSuiteReference.tsv
Needs Pillow and numpy (pip install pillow numpy).
"""
import os
import sys

import numpy as np
from PIL import Image


def rgba8(path):
    im = Image.open(path)
    im.load()
    trns = im.info.get("transparency")
    if im.mode in ("I;16", "I;16B", "I"):
        # 16-bit gray: Pillow keeps the full sample; take the high byte, and the alpha from the 16-bit tRNS value.
        raw = np.asarray(im).astype(np.int64)
        gray = (raw >> 8).astype(np.uint8)
        alpha = np.full(raw.shape, 255, np.uint8)
        if isinstance(trns, int):
            alpha[raw == trns] = 0
        return np.dstack([gray, gray, gray, alpha])
    if im.mode in ("1", "L") and isinstance(trns, int):
        # Low-bit gray: Pillow scales the samples to 8 bits but compares them with the unscaled tRNS value; the PNG
        # rule compares samples at the image's bit depth (IHDR byte 24), i.e. the scaled sample with the scaled value.
        with open(path, "rb") as f:
            bits = f.read(25)[24]
        gray = np.asarray(im.convert("L"))
        target = trns * 255 // ((1 << bits) - 1) if bits < 8 else trns
        alpha = np.where(gray == target, 0, 255).astype(np.uint8)
        return np.dstack([gray, gray, gray, alpha])
    if im.mode == "RGB" and isinstance(trns, tuple) and max(trns) > 255:
        raise SystemExit(f"{path}: 16-bit RGB tRNS needs the 16-bit samples, which Pillow does not keep")
    return np.asarray(im.convert("RGBA"))


def summary(px):
    h, w, _ = px.shape
    px = px.astype(np.int64)
    n = w * h
    mean = [int((int(px[..., c].sum()) * 2 + n) // (2 * n)) for c in range(4)]
    luma = 299 * px[..., 0] + 587 * px[..., 1] + 114 * px[..., 2]

    def bounds(size, cells):
        out = []
        for k in range(cells):
            lo = k * size // cells
            out.append((lo, max((k + 1) * size // cells, lo + 1)))
        return out

    cols, rows = bounds(w, 9), bounds(h, 8)
    cell = [[(int(luma[r0:r1, c0:c1].sum()), (r1 - r0) * (c1 - c0)) for (c0, c1) in cols] for (r0, r1) in rows]
    bits = 0
    for i in range(8):
        for j in range(8):
            (sa, na), (sb, nb) = cell[i][j + 1], cell[i][j]
            bits = (bits << 1) | (1 if sa * nb > sb * na else 0)
    return n * 4, mean, f"{bits:016x}"


def main():
    folder = sys.argv[1]
    print("# file\twidth\theight\tbytes\tmeanColor\tdhash  (made by pngsuite-reference.py with Pillow "
          + Image.__version__ + ")")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".png") or name.startswith("x"):
            continue
        path = os.path.join(folder, name)
        try:
            px = rgba8(path)
        except SystemExit as skip:
            print(f"# skipped {name}: {skip.code.split(': ', 1)[1]}")
            continue
        size, mean, dhash = summary(px)
        print(f"{name}\t{px.shape[1]}\t{px.shape[0]}\t{size}\t{','.join(map(str, mean))}\t{dhash}")


main()
