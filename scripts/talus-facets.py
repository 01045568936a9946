#!/usr/bin/env python3
"""How much of a terrain's talus lies on planar facets facing the grid's octagon (issue 59).

    scripts/talus-facets.py HEIGHT.f32 N WORLD_M TALUS_DEG [--average F]

HEIGHT.f32 is an N x N raw little-endian f32 output in metres (`orogen build --format f32`),
WORLD_M the world's side in metres. Olsen's thermal rule relaxes a cone to an octagonal
pyramid whose eight planar facets face between two grid directions (22.5 deg + k * 45 deg):
of the cells whose slope is within 1.5 deg of the talus angle, this prints the share facing
such a direction (within +-5.625 deg: 25% when aspects are isotropic), the share lying on a
plane (the gradient over the 5 x 5 window around the cell spreads by less than 5% of its
mean), and the planar-facet share: planar and facing a facet direction. `--average F` first
averages F x F blocks (a thermal node's base grid). Slopes are central differences. Needs numpy.
"""
import argparse

import numpy as np


def box(a: np.ndarray, r: int) -> np.ndarray:
    """The mean over every (2r+1)^2 window lying wholly inside `a`."""
    k = 2 * r + 1
    c = np.cumsum(np.cumsum(np.pad(a, ((1, 0), (1, 0))), 0), 1)
    return (c[k:, k:] - c[:-k, k:] - c[k:, :-k] + c[:-k, :-k]) / (k * k)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("n", type=int)
    ap.add_argument("world_m", type=float)
    ap.add_argument("talus_deg", type=float)
    ap.add_argument("--average", type=int, default=1)
    a = ap.parse_args()
    h = np.fromfile(a.path, dtype="<f4").reshape(a.n, a.n).astype(np.float64)
    m = a.n // a.average
    h = h[: m * a.average, : m * a.average].reshape(m, a.average, m, a.average).mean(axis=(1, 3))
    gy, gx = np.gradient(h, a.world_m / m)
    slope = np.degrees(np.arctan(np.hypot(gx, gy)))
    aspect = np.degrees(np.arctan2(gy, gx)) % 45.0
    r = 2
    inner = (slice(r, m - r), slice(r, m - r))
    talus = (np.abs(slope - a.talus_deg) < 1.5)[inner]
    facing = (np.abs(aspect - 22.5) < 5.625)[inner]
    mx, my = box(gx, r), box(gy, r)
    spread = np.sqrt(np.maximum(box(gx * gx, r) - mx * mx + box(gy * gy, r) - my * my, 0.0))
    planar = spread < 0.05 * np.hypot(mx, my)
    n = max(int(talus.sum()), 1)
    print(
        f"{a.path} at {m}^2: talus slopes {talus.mean() * 100:.1f}% of cells; of them facing a "
        f"facet direction {(talus & facing).sum() / n * 100:.1f}% (25% if isotropic), planar "
        f"{(talus & planar).sum() / n * 100:.1f}%, planar facets "
        f"{(talus & planar & facing).sum() / n * 100:.1f}%"
    )


if __name__ == "__main__":
    main()
