"""fastscapelib 0.3.0 peer for Orogen's flow-accumulation bench.

Reads an n×n little-endian f32 terrain, then times fastscapelib's flow routing on it: D8
single-flow router, priority-flood sink resolver (Barnes et al. 2014, as Orogen's), drainage
area accumulated. Borders are outlets (fixed value), as in Orogen. Prints one line per run:
`fastscapelib flow <n>^2: <s> s`.

Usage: python fastscape_flow.py terrain.f32 n cell_m [runs]
"""
import sys
import time

import fastscapelib as fs
import numpy as np


def run(z: np.ndarray, cell: float) -> float:
    n = z.shape[0]
    grid = fs.RasterGrid([n, n], [cell, cell], fs.NodeStatus.FIXED_VALUE)
    flow_graph = fs.FlowGraph(grid, [fs.SingleFlowRouter(), fs.PFloodSinkResolver()])
    area = np.empty_like(z)
    start = time.perf_counter()
    flow_graph.update_routes(z)
    flow_graph.accumulate(area, 1.0)
    return time.perf_counter() - start


if __name__ == "__main__":
    path, n, cell = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    z = np.fromfile(path, dtype="<f4").astype(np.float64).reshape(n, n)
    for _ in range(runs):
        print(f"fastscapelib flow {n}^2: {run(z, cell):.4f} s", flush=True)
