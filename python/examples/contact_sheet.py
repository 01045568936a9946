"""Batch-build a graph over seeds × parameter variants in parallel processes and write a
hillshaded contact sheet (one row per variant, one column per seed).

    python3 python/examples/contact_sheet.py graphs/coast_range.json \\
        --set scree.talus_deg=28,34,40 --seeds 1 2 3 --size 256 -o sheet.png

Each cell is built in its own process (each build uses every core it is given, so the pool
is as wide as there are cores), from the graph file, so nothing but the file name and the
parameter crosses between processes.
"""

import argparse
import json
import os
import struct
import sys
import zlib
from concurrent.futures import ProcessPoolExecutor

import numpy as np

import orogen


def build_one(path, key, value, seed, size, output):
    g = orogen.Graph.load(path)
    if key:
        g.set(key, value)
    heights = g.build(size=size, seed=seed, outputs=[output])[output]
    return hillshade(heights, g.world.cell_size_m(size))


def hillshade(z, cell):
    """Lambertian shading from the north-west, 45° up: 0..255."""
    gy, gx = np.gradient(z.astype(np.float64), cell)
    n = np.dstack([-gx, -gy, np.ones_like(z, dtype=np.float64)])
    n /= np.linalg.norm(n, axis=2, keepdims=True)
    light = np.array([-1.0, -1.0, np.sqrt(2.0)]) / 2.0
    return np.clip(n @ light * 255.0, 0, 255).astype(np.uint8)


def write_png(path, grey):
    """An 8-bit greyscale PNG (zlib and struct only)."""
    h, w = grey.shape
    raw = b"".join(b"\0" + grey[y].tobytes() for y in range(h))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 6)))
        f.write(chunk(b"IEND", b""))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("graph")
    p.add_argument("--set", default="", help="NODE.PARAM=V1,V2,… (JSON values)")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--output", default="height")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("-o", "--out", default="contact_sheet.png")
    a = p.parse_args(argv)
    key, values = "", [None]
    if a.set:
        key, _, vs = a.set.partition("=")
        values = [json.loads(v) for v in vs.split(",")]
    jobs = [(a.graph, key, v, s, a.size, a.output) for v in values for s in a.seeds]
    with ProcessPoolExecutor(max_workers=a.jobs) as pool:
        tiles = list(pool.map(build_one, *zip(*jobs)))
    gap = 4
    rows, cols = len(values), len(a.seeds)
    sheet = np.full((rows * (a.size + gap) - gap, cols * (a.size + gap) - gap), 255, np.uint8)
    for k, t in enumerate(tiles):
        r, c = divmod(k, cols)
        sheet[r * (a.size + gap):r * (a.size + gap) + a.size,
              c * (a.size + gap):c * (a.size + gap) + a.size] = t
    write_png(a.out, sheet)
    print(f"{a.out}: {rows} variants × {cols} seeds at {a.size}²", file=sys.stderr)


if __name__ == "__main__":
    main()
