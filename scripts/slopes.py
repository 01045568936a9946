#!/usr/bin/env python3
"""The slope distribution of a build's height output (issue 59): p10, p50, p90 and the shares
below 12° and above 40°.

    scripts/slopes.py BUILD_DIR [--output height]

BUILD_DIR is an `orogen build` folder: a whole-map build with `--format f32` (reads
`<output>.f32`), or a tiled build with its 16-bit PNG tiles (`tiles/<output>_x{i}_y{j}.png`,
heights from the world's height range: a step of range/65535, 0.055 m on the flagship, which
adds ≈ 0.6° of noise to a 1 m cell's slope). Slopes are central differences over the real
cell size (one-sided at the map's and each tile's edges). Needs numpy, and ImageMagick's
`convert` for tiles.
"""
import argparse
import json
import pathlib
import subprocess
import tempfile

import numpy as np


def slopes_deg(z: np.ndarray, cell: float) -> np.ndarray:
    gy, gx = np.gradient(z, cell)
    return np.degrees(np.arctan(np.hypot(gx, gy))).astype(np.float32).ravel()


def png16(path: pathlib.Path) -> np.ndarray:
    with tempfile.TemporaryDirectory() as tmp:
        raw = pathlib.Path(tmp) / "tile.gray"
        subprocess.run(["convert", str(path), "-depth", "16", "-endian", "LSB", f"gray:{raw}"],
                       check=True)
        data = np.fromfile(raw, dtype="<u2").astype(np.float64)
    side = int(round(len(data) ** 0.5))
    return data.reshape(side, -1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", type=pathlib.Path)
    ap.add_argument("--output", default="height")
    a = ap.parse_args()
    manifest = json.loads((a.build / "manifest.json").read_text())
    world = manifest["world"]
    cell = world["cell_size_m"]
    n = manifest["resolution"]
    # A histogram of 0.01° bins: percentiles without holding every slope of a large world.
    bins = np.linspace(0.0, 90.0, 9001)
    hist = np.zeros(len(bins) - 1, dtype=np.int64)
    flat = a.build / f"{a.output}.f32"
    if flat.exists():
        z = np.fromfile(flat, dtype="<f4").reshape(n, n).astype(np.float64)
        hist += np.histogram(slopes_deg(z, cell), bins)[0]
    else:
        lo, hi = world["height_min_m"], world["height_max_m"]
        for path in sorted((a.build / "tiles").glob(f"{a.output}_x*_y*.png")):
            z = lo + png16(path) / 65535.0 * (hi - lo)
            hist += np.histogram(slopes_deg(z, cell), bins)[0]
    cum = np.cumsum(hist) / hist.sum()
    p = [bins[np.searchsorted(cum, q)] for q in (0.1, 0.5, 0.9)]
    below = cum[np.searchsorted(bins, 12.0) - 1] * 100
    above = (1 - cum[np.searchsorted(bins, 40.0) - 1]) * 100
    print(f"{a.build} ({n}², {cell:g} m cells, {hist.sum()} slopes): p10 {p[0]:.1f}°, "
          f"p50 {p[1]:.1f}°, p90 {p[2]:.1f}°; < 12° {below:.1f}%, > 40° {above:.1f}%")


if __name__ == "__main__":
    main()
