"""fastscapelib 0.3.0 peer for Orogen's stream-power bench.

The docs' "Mountain" example without hillslope diffusion: D8 single-flow router, MST sink
resolver (Kruskal basins, carve routing), stream-power law (SPLEroder, implicit), uniform
uplift, fixed-value borders. Prints one line per run: `fastscapelib <n>^2 x <steps> steps:
<s> s` (each run from the same initial surface).

Usage: python fastscape_mountain.py [size] [steps] [runs]
"""
import sys
import time

import fastscapelib as fs
import numpy as np


def run(size: int, steps: int) -> float:
    length = 100e3  # 100 km square, as in Orogen's bench
    grid = fs.RasterGrid.from_length([size, size], [length, length], fs.NodeStatus.FIXED_VALUE)
    flow_graph = fs.FlowGraph(grid, [fs.SingleFlowRouter(), fs.MSTSinkResolver()])
    spl = fs.SPLEroder(flow_graph, k_coef=2e-4, area_exp=0.4, slope_exp=1, tolerance=1e-5)
    rng = np.random.Generator(np.random.PCG64(1234))
    elevation = rng.uniform(0, 1, size=grid.shape)
    drainage_area = np.empty_like(elevation)
    uplift = np.full_like(elevation, 1e-3)
    uplift[[0, -1], :] = 0.0
    uplift[:, [0, -1]] = 0.0
    dt = 2e4
    start = time.perf_counter()
    for _ in range(steps):
        uplifted = elevation + dt * uplift
        flow_graph.update_routes(uplifted)
        flow_graph.accumulate(drainage_area, 1.0)
        elevation = uplifted - spl.erode(uplifted, drainage_area, dt)
    return time.perf_counter() - start


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    for _ in range(runs):
        print(f"fastscapelib {size}^2 x {steps} steps: {run(size, steps):.3f} s", flush=True)
