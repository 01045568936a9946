#!/usr/bin/env python3
"""Tiled against whole-map builds of one graph: time, peak memory, and per global node how far
the tiled result is from the whole map's.

    scripts/tile-fidelity.py GRAPH SIZE TILES [--out DIR] [--orogen BIN]

Builds GRAPH at SIZE² whole (f32 outputs) and in TILES tiles (f32 stitched), with an extra
output for every global node's first output and first height input, and prints for each:
mean |tiled − whole| as a share of the world's height range, and for erosion nodes the fine
band (the change output − input, its 2D power above 128 cycles per map side, Hann window, as
`orogen parity --detail`) tiled ÷ whole. Water masks (no height input) print the IoU of
cells > 0.5 and the bit-for-bit equality of the outputs. Needs numpy (python3-numpy) and GNU
time (/usr/bin/time).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

GLOBAL = {
    "droplet_erosion", "stream_power_erosion", "thermal_erosion", "grid_hydraulic_erosion",
    "pipe_hydraulic_erosion", "lim_tan_bhojan_erosion", "normalize", "flow_accumulation",
    "lakes", "rivers", "sea", "snow",
}


def run(cmd):
    t = time.time()
    rss = tempfile.mktemp()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.time() - t
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
    with open(rss) as f:
        kib = int(f.read().split()[-1])
    os.unlink(rss)
    return took, kib / 1024


def fine_band(d, cutoff=128.0):
    n = d.shape[0]
    w = np.hanning(n)
    x = (d - d.mean()) * w[:, None] * w[None, :]
    p = np.abs(np.fft.fft2(x)) ** 2
    k = np.fft.fftfreq(n) * n
    kk = np.hypot(k[:, None], k[None, :])
    return p[kk > cutoff].sum() / (n * n) ** 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("size", type=int)
    ap.add_argument("tiles")
    ap.add_argument("--out", default=None)
    ap.add_argument("--orogen", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "orogen"))
    a = ap.parse_args()
    graph = json.load(open(a.graph))
    out = a.out or tempfile.mkdtemp(prefix="orogen-fidelity-")
    # The global nodes of the top-level graph (a subgraph's inner nodes are not named here).
    extra = {}
    span = graph.get("world", {}).get("height_max_m", 1000) - graph.get("world", {}).get("height_min_m", 0)
    for n in graph["nodes"]:
        if n["type"] not in GLOBAL:
            continue
        extra[f"x_{n['id']}_out"] = n["id"]
        src = (n.get("inputs") or {}).get("in")
        if src:
            extra[f"x_{n['id']}_in"] = src
    graph["outputs"] = {**graph["outputs"], **extra}
    g = os.path.join(os.path.dirname(os.path.abspath(a.graph)), f".fidelity-{os.getpid()}.json")
    json.dump(graph, open(g, "w"))
    try:
        whole, tiled = os.path.join(out, "whole"), os.path.join(out, "tiled")
        # A tiled build resumes from what a folder holds: start from nothing.
        subprocess.run(["rm", "-rf", whole, tiled], check=True)
        tw, mw = run([a.orogen, "build", g, "--size", str(a.size), "--no-cache", "--format", "f32", "-o", whole])
        tt, mt = run([a.orogen, "build", g, "--size", str(a.size), "--tiles", a.tiles, "--no-cache",
                      "--format", "f32", "--stitch", "f32", "-o", tiled])
    finally:
        os.unlink(g)
    print(f"{a.graph} {a.size}² {a.tiles}: whole {tw:.1f} s ({mw:.0f} MiB), tiled {tt:.1f} s ({mt:.0f} MiB): {tt / tw:.2f}×")
    load = lambda d, name: np.fromfile(os.path.join(d, f"{name}.f32"), dtype="<f4").reshape(a.size, a.size)
    for n in graph["nodes"]:
        if n["type"] not in GLOBAL:
            continue
        name = f"x_{n['id']}_out"
        w, t = load(whole, name), load(tiled, name)
        mean = np.abs(t.astype(np.float64) - w).mean() / span
        line = f"  {n['id']} ({n['type']}): mean |tiled − whole| {100 * mean:.4f}%"
        if f"x_{n['id']}_in" in extra:
            wi, ti = load(whole, f"x_{n['id']}_in"), load(tiled, f"x_{n['id']}_in")
            cw, ct = w.astype(np.float64) - wi, t.astype(np.float64) - ti
            line += f" (its change: {100 * np.abs(ct - cw).mean() / span:.4f}%)"
            fw, ft = fine_band(cw), fine_band(ct)
            line += f", fine band {ft / fw:.3f}" if fw > 0 else ""
        else:
            a5, b5 = w > 0.5, t > 0.5
            union = (a5 | b5).sum()
            line += f", IoU(>0.5) {(a5 & b5).sum() / union:.3f}" if union else ""
        line += ", identical" if np.array_equal(w, t) else ""
        print(line)


if __name__ == "__main__":
    main()
