#!/usr/bin/env python3
"""A hillshaded crop around the corner of four tiles of a tiled build, rivers drawn in blue.

    scripts/corner-crop.py BUILD_DIR I J CROP OUT.jpg [--height height] [--rivers rivers]

BUILD_DIR is an `orogen build --tiles` folder with 16-bit PNG tiles (the default format):
the crop is CROP samples wide, centred on the top-left corner of tile (I, J) — where tiles
(I-1, J-1), (I, J-1), (I-1, J) and (I, J) meet; the tile borders are drawn as thin red lines.
Heights are read in metres from the manifest's range; rivers are the cells whose `rivers`
mask exceeds 0.5. Needs numpy and ImageMagick's `convert`.
"""
import argparse
import json
import pathlib
import subprocess
import tempfile

import numpy as np


def read_png16(path: pathlib.Path, x0: int, y0: int, w: int, h: int) -> np.ndarray:
    """The samples of a 16-bit grey PNG in a window (values 0..65535)."""
    with tempfile.TemporaryDirectory() as tmp:
        raw = pathlib.Path(tmp) / "crop.gray"
        subprocess.run(
            ["convert", str(path), "-crop", f"{w}x{h}+{x0}+{y0}", "+repage",
             "-depth", "16", "-endian", "LSB", f"gray:{raw}"],
            check=True,
        )
        return np.fromfile(raw, dtype="<u2").reshape(h, w).astype(np.float64)


def mosaic(build: pathlib.Path, name: str, i: int, j: int, half: int, tile: int) -> np.ndarray:
    """The output `name` over the crop, assembled from the four tiles meeting there."""
    out = np.zeros((2 * half, 2 * half))
    for dj in (0, 1):
        for di in (0, 1):
            ti, tj = i - 1 + di, j - 1 + dj
            path = build / "tiles" / f"{name}_x{ti}_y{tj}.png"
            x0 = tile - half if di == 0 else 0
            y0 = tile - half if dj == 0 else 0
            out[dj * half:(dj + 1) * half, di * half:(di + 1) * half] = read_png16(
                path, x0, y0, half, half)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", type=pathlib.Path)
    ap.add_argument("i", type=int)
    ap.add_argument("j", type=int)
    ap.add_argument("crop", type=int)
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--height", default="height")
    ap.add_argument("--rivers", default="rivers")
    a = ap.parse_args()
    manifest = json.loads((a.build / "manifest.json").read_text())
    world = manifest["world"]
    n = manifest["resolution"]
    tile = manifest["tiles"][0]["window"][2]
    half = a.crop // 2
    z = mosaic(a.build, a.height, a.i, a.j, half, tile) / 65535.0
    lo, hi = world["height_min_m"], world["height_max_m"]
    z = lo + z * (hi - lo)
    cell = world["cell_size_m"]
    gy, gx = np.gradient(z, cell)
    # Light from the north-west, 45° up.
    az, alt = np.radians(315.0), np.radians(45.0)
    slope = np.arctan(np.hypot(gx, gy))
    aspect = np.arctan2(-gx, gy)
    shade = np.sin(alt) * np.cos(slope) + np.cos(alt) * np.sin(slope) * np.cos(az - aspect)
    grey = np.clip(shade, 0.0, 1.0) * 235.0 + 20.0
    rgb = np.stack([grey, grey, grey], axis=-1)
    river = mosaic(a.build, a.rivers, a.i, a.j, half, tile) / 65535.0 > 0.5
    rgb[river] = [40.0, 110.0, 230.0]
    rgb[half - 1:half + 1, :] = [220.0, 30.0, 30.0]
    rgb[:, half - 1:half + 1] = [220.0, 30.0, 30.0]
    with tempfile.TemporaryDirectory() as tmp:
        ppm = pathlib.Path(tmp) / "crop.ppm"
        with open(ppm, "wb") as f:
            f.write(f"P6 {2 * half} {2 * half} 255\n".encode())
            f.write(rgb.astype(np.uint8).tobytes())
        subprocess.run(["convert", str(ppm), "-quality", "88", str(a.out)], check=True)
    print(f"{a.out}: {2 * half}² around the corner of tile ({a.i}, {a.j}); "
          f"river cells {int(river.sum())}")


if __name__ == "__main__":
    main()
