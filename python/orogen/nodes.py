"""Orogen's node types and their parameters, for type checkers and editors' completion.

Generated from the node declarations by ``orogen nodes --python > python/orogen/nodes.py``
(a test fails when this file is stale); docs/nodes.md is the same catalogue as a page. Each
node type has a ``TypedDict`` of its parameters (values as a graph file holds them; a
parameter left out keeps its default)::

    from orogen.nodes import ThermalErosion
    scree: ThermalErosion = {"talus_deg": 32.0}
    for name, value in scree.items():
        graph.set(f"scree.{name}", value)
"""

# fmt: off
from typing import Dict, Literal, TypedDict


class Abs(TypedDict, total=False):
    """``abs`` — Abs (fold) (filter).

    Flips everything below a pivot height upwards, turning valleys into ridges. Folds heights around a pivot: r' = pivot + |r − pivot| (relative heights). Valleys below the pivot become ridges above it — the classic way to turn noise into sharp crests.

    Input ``in`` (height): Terrain to remap.
    Output ``out`` (height): Remapped terrain.
    """
    pivot: float
    """Pivot: default 0.5; a number in [-100, 100]. Relative height that acts as the fold line."""

class ArrayInput(TypedDict, total=False):
    """``array_input`` — Array input (Python) (io).

    A terrain handed in by a Python script as a numpy array, to shape or erode data made elsewhere. A heightmap supplied by the program evaluating the graph, by name: from Python, a 2-D numpy array (rows north to south) given to `Graph.set_array` or `Graph.build(arrays=…)`. Resampled bilinearly to the build resolution and stretched over the whole world, as `import` does with a file; NaN samples are no data, filled from the samples around them. Built where no array of that name is supplied (the command line, the editor) it fails, saying so.

    Output ``out`` (height): The array, in metres.
    """
    name: str
    """Array name: default ""; a string. The name the array is supplied under (Python: `graph.set_array(name, array)` or `graph.build(arrays={name: array})`)."""
    values: Literal["metres", "relative"]
    """Values: default metres; one of "metres" or "relative". The samples are metres, or fractions of the graph's height range (0 → height_min_m, 1 → height_max_m)."""

class AspectMask(TypedDict, total=False):
    """``aspect_mask`` — Aspect mask (mask).

    Selects slopes facing one compass direction, such as sunny south faces or shaded north faces. Slopes facing a direction (the downhill direction, clockwise from north = top of the map): 1 when facing direction_deg, falling linearly to 0 at ± spread_deg, and faded in between 0 and min_slope_deg of slope so flats are not selected. The aspect is measured after smoothing the terrain over scale_m (as slope_mask; by default a 32nd of the world's side), the same stretch of land at every resolution; with 0, over the grid's own cells, where a finer build resolves small faces its preview cannot see.

    Input ``in`` (height): Terrain to measure.
    Output ``out`` (mask): Aspect selection, in [0, 1].
    """
    direction_deg: float
    """Direction: default 180 °; a number in [-360, 720]. Direction the selected slopes face, in degrees clockwise from north (0 = north, 90 = east; north is the top of the map)."""
    spread_deg: float
    """Spread: default 45 °; a number in [0, 180]. Half-width of the selected sector, in degrees."""
    min_slope_deg: float
    """Min slope: default 2 °; a number in [0, 90]. Slopes flatter than this are ignored (their aspect is noise), in degrees."""
    scale_m: float
    """Scale: default -1 m; a number in [-1, 10000000]. The distance the aspect is measured over, in metres (a Gaussian of σ = scale_m / 2 first). −1 (auto, the default): a 32nd of the world's side; 0: the grid's own cells."""

class Blend(TypedDict, total=False):
    """``blend`` — Weighted blend (combine).

    Mixes two whole terrains in a fixed proportion, or by a mask that varies it from place to place. Weighted combination out = α·a + (1 − α)·b (Olsen 2004, "combination" of diamond-square and Voronoi terrains). α is the `alpha` parameter, or the `alpha` mask per cell when that input is connected.

    Input ``a`` (height): Terrain weighted by α.
    Input ``b`` (height): Terrain weighted by 1 − α.
    Input ``alpha`` (mask, optional): Optional per-cell α; overrides the parameter.
    Output ``out`` (height): The blend, in metres.
    """
    alpha: float
    """Alpha: default 0.66; a number in [0, 1]. Weight α of input `a` (Olsen 2004 uses α = 0.66 to combine diamond-square and Voronoi). Ignored where the `alpha` mask is connected."""

class Blur(TypedDict, total=False):
    """``blur`` — Blur (filter).

    Softens the terrain, smoothing away bumps and detail smaller than the blur radius. Gaussian blur with σ = radius_m / 2, in metres, so every resolution blurs alike. Separable; below 2 pixels a sampled Gaussian, above that three box filters of matched variance (Kovesi 2010) computed with prefix sums — the cost per sample does not depend on the radius. Mirrored borders: the mean height is preserved exactly.

    Input ``in`` (height): Terrain to blur.
    Output ``out`` (height): Blurred terrain.
    """
    radius_m: float
    """Radius: default 50 m; a number in [0, 10000000]. Blur radius in metres: twice the Gaussian's standard deviation (≈95% of the weight lies within it)."""

class Clamp(TypedDict, total=False):
    """``clamp`` — Clamp (filter).

    Cuts off everything above a ceiling and fills everything below a floor, leaving flat tops and bottoms. Clamps heights to [low, high] (fractions of the graph's height range). Fails if low > high.

    Input ``in`` (height): Terrain to clamp.
    Output ``out`` (height): Clamped terrain.
    """
    low: float
    """Low: default 0; a number in [-100, 100]. Lowest height kept, as a fraction of the graph's height range."""
    high: float
    """High: default 1; a number in [-100, 100]. Highest height kept, as a fraction of the graph's height range."""

class ColorBlend(TypedDict, total=False):
    """``color_blend`` — Blend colours (color).

    Lays one colour map over another by a mask, with mix, multiply, screen or overlay as in image editors. Formula: out = a + m·opacity·(f(a, b) − a), channel by channel in linear RGB, with f the mode (mix: b; multiply: a·b; screen: 1 − (1 − a)(1 − b); overlay: 2ab below a = 0.5, 1 − 2(1 − a)(1 − b) above). The mask defaults to 1. A mask wired into a or b is used as a grey.

    Input ``a`` (color): The base colours.
    Input ``b`` (color): The colours laid over a.
    Input ``mask`` (mask, optional): Where b goes (1) and where a stays (0).
    Output ``out`` (color): The blend, linear RGB.
    """
    mode: Literal["mix", "multiply", "screen", "overlay"]
    """Mode: default mix; one of "mix", "multiply", "screen" or "overlay". mix: b; multiply: a·b (darkens: shade with a mask wired into b); screen: 1 − (1 − a)(1 − b) (lightens); overlay: multiply where a < 0.5, screen above."""
    opacity: float
    """Opacity: default 1; a number in [0, 1]. Strength of the blend, multiplied with the mask."""

class Colorize(TypedDict, total=False):
    """``colorize`` — Colorize (color).

    Paints the terrain with a colour gradient by height (or by a mask), such as an alpine or desert palette. A colour map (linear RGB) from a multi-stop gradient: the mask's value when one is connected, else the terrain's height placed between the graph's height range (or `low_m` … `high_m`), picks the colour; `shift` moves every position along the gradient. Gradients are interpolated in linear light; built-in palettes: alpine, rock, desert, tundra, volcanic, grassland, grey (black to white).

    Input ``height`` (height): The terrain coloured: its height picks the colour unless a mask is connected
 (previews light the colour with it either way).
    Input ``mask`` (mask, optional): Picks the colour instead of the height when connected: 0 is the gradient's start, 1 its end.
    Output ``out`` (color): The colour map, linear RGB.
    """
    palette: Literal["alpine", "rock", "desert", "tundra", "volcanic", "grassland", "grey", "custom"]
    """Palette: default alpine; one of "alpine", "rock", "desert", "tundra", "volcanic", "grassland", "grey" or "custom". The gradient: a built-in palette, or `custom` for the `stops` text."""
    stops: str
    """Stops: default "0 #2b2118, 0.5 #6f5f4b, 1 #ffffff"; a string. Custom gradient: comma-separated stops "position #rrggbb" from 0 to 1, colours in sRGB hex, e.g. "0 #2b2118, 0.5 #6f5f4b, 1 #ffffff". Only when palette is "custom"."""
    range: Literal["graph", "metres"]
    """Range: default graph; one of "graph" or "metres". Heights the gradient spans: the graph's height range, or `low_m` … `high_m`."""
    low_m: float
    """Low: default 0 m; a number in [-20000, 20000]. Height at the gradient's start (position 0). Only when range is "metres"."""
    high_m: float
    """High: default 2000 m; a number in [-20000, 20000]. Height at the gradient's end (position 1). Only when range is "metres"."""
    shift: float
    """Shift: default 0; a number in [-1, 1]. Moves every position by this much before the gradient is read (0.1: everything one tenth of the gradient further along)."""

class Combine(TypedDict, total=False):
    """``combine`` — Combine (combine).

    Merges two terrains with an operation such as add, subtract, keep the higher or keep the lower. Combines a and b sample by sample. The operation works on heights relative to the graph's height range r = (h − height_min_m)/(height_max_m − height_min_m), so multiply, screen, overlay and power behave as in image editors whatever the range; the result maps back to metres. smooth_min/smooth_max round the crease where a and b cross over blend_m metres of height (polynomial smooth minimum). The optional mask (or `strength`) blends from a (0) to the result (1).

    Input ``a`` (height): First terrain.
    Input ``b`` (height): Second terrain.
    Input ``mask`` (mask, optional): Optional strength per cell; overrides `strength`.
    Output ``out`` (height): The combination, in metres.
    """
    mode: Literal["add", "subtract", "multiply", "divide", "min", "max", "difference", "screen", "overlay", "power", "smooth_min", "smooth_max"]
    """Mode: default add; one of "add", "subtract", "multiply", "divide", "min", "max", "difference", "screen", "overlay", "power", "smooth_min" or "smooth_max". The operation, on heights relative to the graph's height range (0 = bottom, 1 = top): add a+b, subtract a−b, multiply a·b, divide a/b (b below 0.001 counts as 0.001), min, max, difference |a−b|, screen 1−(1−a)(1−b), overlay, power a^b, smooth_min, smooth_max."""
    blend_m: float
    """Blend: default 50 m; a number in [0, 100000]. Smooth min/max: width of the rounded blend where the inputs cross, in metres of height."""
    strength: float
    """Strength: default 1; a number in [0, 1]. How much of the result replaces a: 0 keeps a, 1 is the full operation (a mask input overrides it per cell)."""

class Constant(TypedDict, total=False):
    """``constant`` — Constant (generator).

    A flat terrain at `height_m` metres.

    Output ``out`` (height): The flat terrain.
    """
    height_m: float
    """Height: default 0 m; a number in [-100000, 100000]. Height of the flat terrain, in metres."""

class CurvatureMask(TypedDict, total=False):
    """``curvature_mask`` — Curvature mask (mask).

    Picks out ridges and crests (convex) or hollows and valley floors (concave). Convex or concave areas: the Laplacian of the terrain blurred with radius scale_m (in 1/m: change of slope per metre), negative on crests and positive in hollows, scaled so that full_deg_per_100m degrees of slope change per 100 m gives 1, clamped to [0, 1]. By default (−1, auto) the radius is a 32nd of the world's side, eight cells of a 256² preview, so the preview predicts the build.

    Input ``in`` (height): Terrain to measure.
    Output ``out`` (mask): Curvature selection, in [0, 1].
    """
    kind: Literal["convex", "concave"]
    """Kind: default convex; one of "convex" or "concave". Convex (crests, ridges) or concave (hollows, valleys)."""
    scale_m: float
    """Scale: default -1 m; a number in [-1, 10000000]. Radius of the smoothing applied before measuring, in metres (the scale of the features measured). −1 (auto, the default): a 32nd of the world's side, so the preview predicts the build; 0: the grid's own cells."""
    full_deg_per_100m: float
    """Full at (° per 100 m): default 10 °; a number in [0.001, 100000]. Curvature, in degrees of slope change per 100 m, that maps to a full mask."""

class Curve(TypedDict, total=False):
    """``curve`` — Curve (filter).

    Reshapes heights by a smooth curve through five control points, like an image editor's Curves. A curve through five control values (y0 … y4 at relative heights 0, ¼, ½, ¾, 1), interpolated by a monotone cubic (Fritsch–Carlson): no overshoot, and monotone wherever the control values are. Heights outside the range are clamped to it first.

    Input ``in`` (height): Terrain to remap.
    Output ``out`` (height): Remapped terrain.
    """
    y0: float
    """Output at 0: default 0; a number in [-10, 10]. Output at relative height 0."""
    y1: float
    """Output at 0.25: default 0.25; a number in [-10, 10]. Output at relative height 0.25."""
    y2: float
    """Output at 0.5: default 0.5; a number in [-10, 10]. Output at relative height 0.5."""
    y3: float
    """Output at 0.75: default 0.75; a number in [-10, 10]. Output at relative height 0.75."""
    y4: float
    """Output at 1: default 1; a number in [-10, 10]. Output at relative height 1."""

class DiamondSquare(TypedDict, total=False):
    """``diamond_square`` — Diamond-square (generator).

    Rough, fractal mountain terrain with random peaks and valleys at every scale. The diamond-square algorithm of Olsen 2004: random corners, then alternating diamond steps (square centres = mean of 4 corners + random offset) and square steps (edge midpoints = mean of their neighbours + offset), halving the step and multiplying the offset range by `persistence` each time. Resolution independence: the algorithm is non-local, so it runs on a lattice fixed in world space — 2^L + 1 points per side spanning the world, L = ceil(log2(world size / cell_m)) capped at 12 — never on the output grid; its random offsets are hashed from each point's position on a 2^16 master lattice, so coarse levels do not change with cell_m either. The lattice is stretched so its lowest point is −1 and its highest +1. The output samples that lattice bilinearly at the cell centres where cells are no wider than the lattice's; wider cells take the mean of the bilinear surface over their area (exactly, by the hat functions' integrals), so a 256² preview is what a 4096² build averages to.

    Output ``out`` (height): Heights in metres.
    """
    seed: int
    """Seed: default 0; an integer seed in [0, 4294967295]. Seed of this node, combined with the graph seed."""
    persistence: float
    """Persistence: default 0.6; a number in [0, 1]. Persistence in (0, 1): the random offset range is multiplied by it after each halving (Olsen 2004 step 7). Higher is rougher."""
    cell_m: float
    """Finest cell: default 8 m; a number in [0.01, 1000000]. Finest lattice spacing, in metres. The lattice has 2^L + 1 points per side with L = ceil(log2(world size / cell_m)), at most 2^12."""
    amplitude: float
    """Amplitude: default 0.5; a number in [0, 100]. Half the peak-to-trough amplitude, as a fraction of the graph's height range."""
    base: float
    """Base: default 0.5; a number in [-100, 100]. Mean height, as a fraction of the graph's height range."""

class DomainWarp(TypedDict, total=False):
    """``domain_warp`` — Domain warp (warp).

    Twists and swirls the terrain by shifting it along smooth noise, breaking up regular shapes. Each cell takes the height found at its position moved by amplitude_m · (n₁, n₂), where n₁, n₂ are Perlin fBm fields (about [−1, 1]) of the given feature size, octaves and persistence. All lengths in metres, so every resolution warps alike; zero amplitude returns the input unchanged.

    Input ``in`` (height): Terrain to warp.
    Output ``out`` (height): Warped terrain.
    """
    seed: int
    """Seed: default 0; an integer seed in [0, 4294967295]. Seed of this node, combined with the graph seed."""
    amplitude_m: float
    """Amplitude: default 200 m; a number in [0, 10000000]. Displacement amplitude, in metres."""
    feature_size_m: float
    """Feature size: default 2000 m; a number in [0.01, 10000000]. Wavelength of the largest warp features, in metres."""
    octaves: int
    """Octaves: default 4; an integer in [1, 16]. Octaves of the warp field."""
    persistence: float
    """Persistence: default 0.5; a number in [0, 1]. Amplitude ratio between successive octaves of the warp field."""

class DropletErosion(TypedDict, total=False):
    """``droplet_erosion`` — Hydraulic erosion (droplets) (erosion).

    Carves gullies by rolling simulated raindrops downhill, each wearing the ground and dropping sediment. Particle erosion after E-DOG 2011 ("Water erosion on heightmap terrain"): droplets start on random cells and run downhill along the gradient with inertia Ki; carry capacity q = max(slope, minSlope)·v·w·Kq ("Understanding water erosion"); below capacity they erode Kr·(q − s) with a bell-shaped brush of radius 2 but never more than the drop ahead, above it they deposit Kd·(s − q) bilinearly; a droplet facing a rise fills the pit and goes on with zero speed, or dies there; v = √(v² + 2g·Δh), w ← w·(1 − Kw) ("Code sample"). Defaults are E-DOG's: Kq 10, Kw 0.001, Kr 0.9, Kd 0.02, Ki 0.1, minSlope 0.05, g 20. Heights are in cell units (metres / cell size) so slopes are true tangents. The droplet count is density × cells. Deterministic and parallel (tiles of one checkerboard colour run at once; droplets that would leave their tile's region go on in a grid shifted by half a tile, the rest on the whole map; eight droplets advance in lockstep). Brush weights are normalised (E-DOG's only sum to about 1), so material is conserved except what droplets carry off the map edge. Outputs: height, erosion (wear) and deposition masks, 1 = the largest change. Resolution: by default (detail = consistent) the process runs in full at base_resolution (256²), where every parameter means what it does in E-DOG 2011, and a finer build adds only detail below those cells (one refinement at the build's resolution: as many droplets per cell, each running at most 32 of its cells, eroding only where the base eroded and carrying the base's deposits to lay them down again, its drift over the base's cells taken out), so a preview and a build show the same terrain (orogen parity); the refinement's droplets are drawn from the world's cells, so a tiled build runs the whole map's droplets in every tile. detail = native runs it once at the resolution being built.

    Input ``in`` (height): Terrain to erode.
    Output ``out`` (height): Eroded terrain.
    Output ``erosion`` (mask): Where soil was removed (wear), 1 = deepest.
    Output ``deposition`` (mask): Where sediment settled, 1 = thickest.
    """
    seed: int
    """Seed: default 0; an integer seed in [0, 4294967295]. Seed of this node (droplet start cells and random directions), combined with the graph seed."""
    density: float
    """Density: default 1 per cell; a number in [0, 64]. Droplets per cell of the map (so a 512² preview and a 2048² build see the same rain: 1.0 = one droplet per cell, 262 144 at 512²)."""
    kq: float
    """Capacity (K_q): default 10; a number in [0, 1000]. Carry capacity factor Kq in q = max(slope, minSlope)·v·w·Kq (E-DOG 2011: 10)."""
    kw: float
    """Evaporation (K_w): default 0.001; a number in [0, 1]. Evaporation Kw: fraction of the water lost per step (E-DOG 2011: 0.001)."""
    kr: float
    """Erosion speed (K_r): default 0.9; a number in [0, 1]. Erosion speed Kr: fraction of the missing load picked up per step (E-DOG 2011: 0.9)."""
    kd: float
    """Deposition speed (K_d): default 0.02; a number in [0, 1]. Deposition speed Kd: fraction of the excess load dropped per step (E-DOG 2011: 0.02)."""
    ki: float
    """Inertia (K_i): default 0.1; a number in [0, 1]. Direction inertia Ki: higher values make channel turns smoother (E-DOG 2011: 0.1)."""
    min_slope: float
    """Minimum slope: default 0.05; a number in [0, 10]. Minimum slope in the capacity formula, so flat runs still carry soil (E-DOG 2011: 0.05)."""
    g: float
    """Gravity (g): default 20; a number in [0, 1000]. Gravity g accelerating the flow: v = √(v² + 2g·Δh) (E-DOG 2011: 20)."""
    path_limit: float
    """Path limit: default 4 map sides; a number in [0.001, 64]. Longest droplet path, in map sides: a droplet still running after it is stopped and drops its load (E-DOG 2011: 4)."""
    detail: Literal["consistent", "native"]
    """Resolution handling: default consistent; one of "consistent" or "native". consistent: the same terrain at every resolution — the process runs in full at base_resolution and a finer build only adds detail below that grid's cells (a preview at the base resolution is a build's first level). native: E-DOG 2011's droplets run once at the resolution being built (a droplet's path and brush are in cells, so the result depends on the resolution)."""
    base_resolution: int
    """Base resolution: default 256; an integer in [16, 8192]. Samples per side of the grid the process runs on in full (consistent only). A finer build refines from it once, at its own resolution: as many droplets per cell as the base, each running at most 32 of the build's cells (the base already routed the water farther), eroding only where the base eroded and carrying the base's deposits to lay them down again, their drift over the base's cells taken out; coarser previews average it. Only when detail is "consistent"."""

class FaultFormation(TypedDict, total=False):
    """``fault_formation`` — Fault formation (generator).

    Terrain built from many random straight faults, each raising the land on one side and lowering the other. Fault formation: for i = 0 … iterations−1 a random line through the world (seeded point and direction) raises one side by d_i and lowers the other by d_i, with d_i = decay^i and a linear transition softness_m wide. The sum is divided by 3·sqrt(Σ d_i²) (a random walk's spread) to about [−1, 1]. Lines are in world metres, so every resolution shows the same faults.

    Output ``out`` (height): Heights in metres.
    """
    seed: int
    """Seed: default 0; an integer seed in [0, 4294967295]. Seed of this node, combined with the graph seed."""
    iterations: int
    """Iterations: default 200; an integer in [1, 10000]. Number of faults."""
    decay: float
    """Decay: default 0.99; a number in [0.5, 1]. Each fault's displacement is the previous one's times this (1 = all equal)."""
    softness_m: float
    """Softness: default 20 m; a number in [0, 1000000]. Width of the transition across a fault, in metres (0 = a sharp step)."""
    amplitude: float
    """Amplitude: default 0.5; a number in [0, 100]. Half the peak-to-trough amplitude, as a fraction of the graph's height range."""
    base: float
    """Base: default 0.5; a number in [-100, 100]. Mean height, as a fraction of the graph's height range."""

class FlowAccumulation(TypedDict, total=False):
    """``flow_accumulation`` — Flow accumulation (water).

    Shows where water gathers as it runs downhill: bright along streams and rivers, dark on ridges. Drainage area: the land (m², times the optional rain mask) whose water passes through each cell. Water runs over the terrain with its depressions filled (Barnes, Lehman & Mulla 2014's priority flood: flats and lakes drain towards their outlet) and leaves the map at the edge where nothing is lower; a lake reads everywhere as the flow leaving it. Routing mfd shares each cell's water among its lower neighbours by slope^p (Freeman 1991, p = exponent); d8 sends it all to the steepest (O'Callaghan & Mark 1984). Outputs: flow = ln(A / min_area_m2) / ln(world area / min_area_m2), clamped to [0, 1] (invert with A = min_area_m2 · (world area / min_area_m2)^flow); dir_x, dir_y = 0.5 + 0.5 · the unit direction water leaves the cell (x to the east/right, y down the image's rows; 0.5, 0.5 where it has nowhere lower to go), the two channels of an engine's flow map; area = the drainage area itself in m² (a scalar port: export it as EXR or f32, or turn it into a mask with scalar_to_mask); wetness = the topographic wetness index ln(a / tan β) (Beven & Kirkby 1979; a = drainage area per metre of contour, A / cell size, β the local slope, at least 0.1°), mapped from wetness_low to wetness_high onto [0, 1]: wet valley floors and hollows, dry ridges and steep slopes. Areas are in m², so a river keeps its drainage area at every resolution; a channel is one cell wide at any resolution, so the mask is finer at finer resolutions.

    Input ``in`` (height): Terrain the water runs over.
    Input ``rain`` (mask, optional): Rain per cell (1 = every square metre counts); uniform when not connected.
    Output ``flow`` (mask): ln(drainage area / min_area_m2) ÷ ln(world area / min_area_m2), in [0, 1].
    Output ``dir_x`` (mask): 0.5 + 0.5 · east component of the flow direction.
    Output ``dir_y`` (mask): 0.5 + 0.5 · south (down the rows) component of the flow direction.
    Output ``wetness`` (mask): Topographic wetness ln(a / tan β), from wetness_low (0) to wetness_high (1).
    Output ``area`` (scalar): Drainage area in m² (times the rain mask where one is connected).
    """
    routing: Literal["mfd", "d8"]
    """Routing: default mfd; one of "mfd" or "d8". `mfd`: shared among every lower neighbour by slope^exponent (Freeman 1991), smooth flow maps; `d8`: all to the steepest (O'Callaghan & Mark 1984), one-cell channels."""
    exponent: float
    """Exponent: default 1.1; a number in [0, 100]. Freeman 1991's exponent p on the slope (mfd only): 1.1 in the paper; larger concentrates flow into fewer, sharper channels. Only when routing is "mfd"."""
    min_area_m2: float
    """Min area: default 2000 m²; a number in [0.001, 1000000000000]. Drainage area where the log-scaled mask starts above 0, in m²: hillslopes draining less read 0. The mask reaches 1 at the world's whole area."""
    wetness_low: float
    """Wetness from: default 6; a number in [-100, 100]. Topographic wetness index where the wetness mask starts above 0."""
    wetness_high: float
    """Wetness to: default 16; a number in [-100, 100]. Topographic wetness index where the wetness mask reaches 1."""

class Gamma(TypedDict, total=False):
    """``gamma`` — Gamma / power (filter).

    Flattens lowlands and sharpens peaks (gamma above 1), or the reverse (below 1). Per sample, r' = max(r, 0)^gamma on relative heights r (read from a 4097-point table inside the height range).

    Input ``in`` (height): Terrain to remap.
    Output ``out`` (height): Remapped terrain.
    """
    gamma: float
    """Gamma: default 1; a number in [0.01, 100]. Exponent: r' = r^gamma on relative heights (below 1 lifts the lowlands, above 1 deepens them)."""

class GraphInput(TypedDict, total=False):
    """``graph_input`` — Graph input (height) (io).

    Where a terrain comes into this graph when it is reused as a node inside another graph. A terrain input of this graph when it is used as a subgraph: the subgraph node gets an input port named like this node. Built on its own, the graph reads the `default` input instead.

    Input ``default`` (height): What this input is when the graph is built on its own; where the graph is used as a subgraph, the wire into the subgraph node replaces it.
    Output ``out`` (height): The input, in metres.
    """
    doc: str
    """Description: default ""; a string. What the input is for, shown on the subgraph node's port."""

class GraphInputColor(TypedDict, total=False):
    """``graph_input_color`` — Graph input (colour) (io).

    Where a colour map comes into this graph when it is reused as a node inside another graph. A colour input of this graph when it is used as a subgraph: the subgraph node gets an input port named like this node. Built on its own, the graph reads the `default` input instead.

    Input ``default`` (color): What this input is when the graph is built on its own; where the graph is used as a subgraph, the wire into the subgraph node replaces it.
    Output ``out`` (color): The input, linear RGB.
    """
    doc: str
    """Description: default ""; a string. What the input is for, shown on the subgraph node's port."""

class GraphInputMask(TypedDict, total=False):
    """``graph_input_mask`` — Graph input (mask) (io).

    Where a mask comes into this graph when it is reused as a node inside another graph. A mask input of this graph when it is used as a subgraph: the subgraph node gets an input port named like this node. Built on its own, the graph reads the `default` input instead.

    Input ``default`` (mask): What this input is when the graph is built on its own; where the graph is used as a subgraph, the wire into the subgraph node replaces it.
    Output ``out`` (mask): The input, in [0, 1].
    """
    doc: str
    """Description: default ""; a string. What the input is for, shown on the subgraph node's port."""

class GraphInputScalar(TypedDict, total=False):
    """``graph_input_scalar`` — Graph input (scalar) (io).

    Where a quantity such as a drainage area comes into this graph when it is reused inside another graph. A scalar input of this graph (a quantity in its own unit, such as a drainage area in m²) when it is used as a subgraph: the subgraph node gets an input port named like this node. Built on its own, the graph reads the `default` input instead.

    Input ``default`` (scalar): What this input is when the graph is built on its own; where the graph is used as a subgraph, the wire into the subgraph node replaces it.
    Output ``out`` (scalar): The input, in its own unit.
    """
    doc: str
    """Description: default ""; a string. What the input is for, shown on the subgraph node's port."""

class GridHydraulicErosion(TypedDict, total=False):
    """``grid_hydraulic_erosion`` — Hydraulic erosion (grid) (erosion).

    Rain dissolves the ground and carries it downhill into hollows, wearing slopes and filling valleys. Olsen 2004's grid hydraulic erosion, per iteration: 1 rain W += K_r; 2 erosion H −= K_s·W, S += K_s·W; 3 transport: with a = h + w, water moves to lower neighbours Δw_i = min(w, Δa)·d_i/d_total (Δa = a − mean of a over the cell and its lower neighbours) and carries sediment Δs_i = s·Δw_i/w; 4 evaporation W := (1 − K_e)·W; 5 deposition of what exceeds the capacity K_c·W back into H. Olsen 2004 works on heights in [0, 1]; here K_r, K_s and K_c act on heights relative to the graph's height range, so the constants keep their meaning in metres. All cells update together (parallel, deterministic); water and sediment never leave the map, so terrain + suspended sediment is conserved. Outputs: height (with the remaining suspended sediment deposited), water (relative to the deepest), deposition (where terrain rose, relative to the largest rise), erosion (where it went down, relative to the largest loss). Resolution: by default (detail = consistent) the process runs in full at base_resolution (256²), where every parameter means what it does in Olsen 2004, and a finer build adds only detail below those cells (once at the build's resolution with a quarter of the iterations, its drift over the coarser cells taken out), so a preview and a build show the same terrain (orogen parity); detail = native runs it once at the resolution being built.

    Input ``in`` (height): Terrain to erode.
    Output ``out`` (height): Eroded terrain.
    Output ``water`` (mask): Water depth after the last iteration, 1 = deepest.
    Output ``deposition`` (mask): Where terrain rose, 1 = largest rise.
    Output ``erosion`` (mask): Where the terrain went down (dissolved), relative to the largest loss.
    """
    kr: float
    """Rain (K_r): default 0.01; a number in [0, 1]. Rain K_r added to every cell's water each iteration, as a fraction of the height range (Olsen 2004: 0.01)."""
    ks: float
    """Solubility (K_s): default 0.01; a number in [0, 1]. Solubility K_s: terrain dissolved per unit of water each iteration (Olsen 2004: 0.01)."""
    ke: float
    """Evaporation (K_e): default 0.5; a number in [0, 1]. Evaporation K_e: fraction of the water that evaporates each iteration (Olsen 2004: 0.5)."""
    kc: float
    """Capacity (K_c): default 0.01; a number in [0, 1]. Sediment capacity K_c per unit of water (Olsen 2004: 0.01)."""
    iterations: int
    """Iterations: default 50; an integer in [0, 100000]. Number of iterations."""
    detail: Literal["consistent", "native"]
    """Resolution handling: default consistent; one of "consistent" or "native". consistent: the same terrain at every resolution — the process runs in full at base_resolution and a finer build only adds detail below that grid's cells (a preview at the base resolution is a build's first level). native: Olsen 2004's rain, dissolve, transport, evaporate and deposit run once at the resolution being built (water moves a cell per iteration, so the result depends on the resolution)."""
    base_resolution: int
    """Base resolution: default 256; an integer in [16, 8192]. Samples per side of the grid the process runs on in full (consistent only). Finer builds refine from it once, at their own resolution (a quarter of the iterations), coarser previews average it. Only when detail is "consistent"."""

class HeightMask(TypedDict, total=False):
    """``height_mask`` — Height mask (mask).

    Selects a band of altitudes, such as the lowlands, a belt of mid-slopes or the summits. The mask is 1 where the height lies in [low, high] (fractions of the graph's height range), fading to 0 over `falloff` outside the band (smoothstep).

    Input ``in`` (height): Terrain to measure.
    Output ``out`` (mask): The band, in [0, 1].
    """
    low: float
    """Low: default 0.3; a number in [-100, 100]. Bottom of the band, as a fraction of the graph's height range."""
    high: float
    """High: default 0.7; a number in [-100, 100]. Top of the band, as a fraction of the graph's height range."""
    falloff: float
    """Falloff: default 0.05; a number in [0, 100]. Width of the fade outside the band, as a fraction of the height range."""

class Import(TypedDict, total=False):
    """``import`` — Import heightmap (io).

    Loads a heightmap from a file, such as a painted PNG or a real-world elevation model (GeoTIFF). Reads an 8/16-bit PNG (luma), an OpenEXR heightmap (channel Y, else R) or a GeoTIFF DEM (float32/64, int8/16/32, uint8/16/32; striped or tiled; no-data cells filled from the data around them by a push–pull pyramid; GDAL's band scale and offset applied) and resamples it bilinearly to the build resolution, stretched over the whole world. PNG values map 0..max onto the graph's height range. orogen new --from-dem makes a graph whose world matches a DEM.

    Output ``out`` (height): The imported terrain, in metres.
    Output ``valid`` (mask): 1 where the file had data, 0 where a DEM's no-data cells were filled.
    """
    path: str
    """Path: default ""; a string. Path of the heightmap (PNG, EXR or GeoTIFF DEM), relative to the graph file's folder (absolute paths work too); it must be inside the graph's project folder (docs/security.md)."""
    exr_values: Literal["metres", "relative"]
    """EXR values: default metres; one of "metres" or "relative". EXR samples are metres (as `orogen build --format exr` writes them) or fractions of the height range. PNG samples always span the height range (0 → height_min_m, full white → height_max_m). GeoTIFF DEMs (float or signed samples, or GeoTIFF tags) are metres after their scale and offset."""

class Invert(TypedDict, total=False):
    """``invert`` — Invert (filter).

    Turns the terrain upside down: peaks become pits and valleys become ridges. Mirrors heights within the graph's height range: h' = height_min_m + height_max_m − h.

    Input ``in`` (height): Terrain to invert.
    Output ``out`` (height): Inverted terrain.
    """
    pass

class IslandMask(TypedDict, total=False):
    """``island_mask`` — Island mask (generator).

    An island-shaped mask: white land fading to black sea along a ragged, noisy coastline. Formula: t = (radius + coast_noise·n(p) − r)/falloff, mask = S3(clamp(t, 0, 1)), where r is the distance to the centre and n is Perlin fBm (persistence 0.5) of the given feature size — all lengths relative to the world size, so every resolution shows the same coast.

    Output ``out`` (mask): 1 inland, 0 at sea.
    """
    seed: int
    """Seed: default 0; an integer seed in [0, 4294967295]. Seed of this node, combined with the graph seed."""
    center_x: float
    """Center x: default 0.5; a number in [-10, 10]. Centre x as a fraction of the world size."""
    center_y: float
    """Center y: default 0.5; a number in [-10, 10]. Centre y as a fraction of the world size."""
    radius: float
    """Radius: default 0.35; a number in [0, 10]. Mean radius of the coastline, as a fraction of the world size."""
    falloff: float
    """Falloff: default 0.12; a number in [0.0001, 10]. Width of the transition from 1 (inland) to 0 (sea), as a fraction of the world size."""
    coast_noise: float
    """Coast noise: default 0.12; a number in [0, 10]. How far the coastline wanders, as a fraction of the world size."""
    feature_size_m: float
    """Feature size: default 2000 m; a number in [0.01, 10000000]. Wavelength of the largest coastline features, in metres."""
    octaves: int
    """Octaves: default 6; an integer in [1, 16]. Octaves of coastline noise."""

class Lakes(TypedDict, total=False):
    """``lakes`` — Lakes (water).

    Fills the hollows and basins of the terrain with lakes, up to the level where they would overflow. Fills every depression that has no way out to the map edge up to the level where it would spill (Barnes, Lehman & Mulla 2014's priority flood: the filled level of a cell is the lowest, over all paths to the edge, of the highest cell on the path). A lake is a connected set of flooded cells (8-neighbours); lakes shallower than min_depth_m at their deepest point or smaller than min_area_m2 are left dry. Outputs: surface = the water surface (the terrain where there is no lake), depth = (surface − terrain) / depth_range_m clamped to [0, 1] (0 on land, 1 from depth_range_m down), mask = 1 on lakes.

    Input ``in`` (height): Terrain to fill.
    Output ``surface`` (height): Water surface where there are lakes, the terrain elsewhere (m).
    Output ``depth`` (mask): Water depth ÷ depth_range_m, in [0, 1] (0 on land).
    Output ``mask`` (mask): 1 on lakes, 0 elsewhere.
    """
    min_depth_m: float
    """Min depth: default 0.5 m; a number in [0, 1000000]. Lakes whose deepest point is shallower than this are left dry, in metres."""
    min_area_m2: float
    """Min area: default 5000 m²; a number in [0, 1000000000000]. Lakes smaller than this are left dry, in m²."""
    depth_range_m: float
    """Depth range: default 10 m; a number in [0.001, 1000000]. Water depth at which the depth mask reaches 1, in metres."""

class LaplacianSmooth(TypedDict, total=False):
    """``laplacian_smooth`` — Laplacian smooth (filter).

    Gently smooths the terrain, rounding off small bumps and sharp edges. Repeats h ← h + ½·(mean of the 4 neighbours − h) (explicit diffusion, mirrored borders, mean preserved). Each pass spreads heights by σ² = cell²/4 per axis, so the pass count is (2·distance_m / cell)², making the result the same at every resolution — up to 2000 passes, beyond which the distance is clamped (use `blur` for large radii).

    Input ``in`` (height): Terrain to smooth.
    Output ``out`` (height): Smoothed terrain.
    """
    distance_m: float
    """Distance: default 20 m; a number in [0, 10000000]. Diffusion length in metres: the spread (σ) of the equivalent Gaussian."""

class Lerp(TypedDict, total=False):
    """``lerp`` — Lerp by mask (combine).

    Mixes two terrains by a mask: the first where the mask is black, the second where it is white. Formula: out = a + m·(b − a): exactly a where the mask is 0, exactly b where it is 1, a linear mix between.

    Input ``a`` (height): Terrain where the mask is 0.
    Input ``b`` (height): Terrain where the mask is 1.
    Input ``mask`` (mask): Mix factor in [0, 1].
    Output ``out`` (height): The mix, in metres.
    """
    pass

class Levels(TypedDict, total=False):
    """``levels`` — Levels (filter).

    Stretches a chosen band of heights over a new band, like the Levels tool of an image editor. Maps [in_low, in_high] to [out_low, out_high] (fractions of the graph's height range), clamping input outside the band, with a gamma curve in between: t = clamp((h − in_low)/(in_high − in_low)), out = out_low + t^(1/gamma)·(out_high − out_low). Fails if in_low == in_high.

    Input ``in`` (height): Terrain to remap.
    Output ``out`` (height): Remapped terrain.
    """
    in_low: float
    """In low: default 0; a number in [-100, 100]. Input height mapped to `out_low`, as a fraction of the graph's height range."""
    in_high: float
    """In high: default 1; a number in [-100, 100]. Input height mapped to `out_high`, as a fraction of the graph's height range."""
    gamma: float
    """Gamma: default 1; a number in [0.01, 100]. Gamma applied between the bands (t' = t^(1/gamma)); 1 is linear, above 1 lifts the middle."""
    out_low: float
    """Out low: default 0; a number in [-100, 100]. Output height for `in_low`, as a fraction of the graph's height range."""
    out_high: float
    """Out high: default 1; a number in [-100, 100]. Output height for `in_high`, as a fraction of the graph's height range."""

class LimTanBhojanErosion(TypedDict, total=False):
    """``lim_tan_bhojan_erosion`` — Lim–Tan–Bhojan erosion (erosion).

    Carves river valleys and gorges into a terrain while keeping it close to the input's overall shape. Lim, Tan & Bhojan 2022 §3, Algorithm 1 per tick: 4-neighbour steepest drainage by total height between jittered nodes (§3.2); total drainage D = moisture + k_d·Σ D(tributaries) (§3.3); gorges carved between adjacent local minima through each minimum's lowest leaf, w = min(k_g·D, 1) (Eq. 1; the paper's max is a typo), gradient-constraint strength × (1 − w) along the gorge (§3.4); fluvial erosion Δh = k_e·D^n·s^m capped at the drop to the receiver (Eq. 2, §3.5); value constraint then gradient constraint towards the constraint map (§3.6); water reset to sea level (§3.7). The input is the height-constraint map (land starts equal to it plus small noise); value strength, gradient strength and moisture are constants, each multiplied by its mask input when connected. Heights in tile units (metres / cell size). Outputs: height, water (sea depth relative to the deepest), drainage (log-scaled, 1 = the largest). Resolution: by default (detail = consistent) the process runs in full at base_resolution (256²), where every parameter means what it does in Lim, Tan & Bhojan 2022, and a finer build adds only detail below those cells (a fifth of the iterations, once, at the build's resolution, its drift over the base's cells taken out), so a preview and a build show the same terrain (orogen parity); detail = native runs it once at the resolution being built.

    Input ``constraint`` (height): Height-constraint map: the terrain the result stays close to.
    Input ``value_strength`` (mask, optional): Value-constraint strength map (× value_strength).
    Input ``gradient_strength`` (mask, optional): Gradient-constraint strength map (× gradient_strength).
    Input ``moisture`` (mask, optional): Rainfall map (× moisture); uniform when not connected.
    Output ``out`` (height): Eroded terrain.
    Output ``water`` (mask): Sea depth, 1 = deepest.
    Output ``drainage`` (mask): log(1 + total drainage) / log(1 + largest).
    """
    seed: int
    """Seed: default 0; an integer seed in [0, 4294967295]. Seed of the node offsets and of the initial noise, combined with the graph seed."""
    iterations: int
    """Iterations: default 100; an integer in [0, 100000]. Number of simulation ticks (the paper shows 50–100)."""
    value_strength: float
    """Value constraint (s_v): default 0.02; a number in [0, 1]. Value-constraint strength s_v (§3.6: 0.02), × the value-strength mask when connected."""
    gradient_strength: float
    """Gradient constraint (s_g): default 0.8; a number in [0, 1]. Gradient-constraint strength s_g (§3.6: 0.8 for a detailed constraint map, 0.02 for a smooth one), × the gradient-strength mask when connected."""
    kd: float
    """Drainage loss (k_d): default 0.68; a number in [0, 1]. Drainage loss k_d: the share of the tributaries' drainage that arrives (§3.3: 0.68)."""
    kg: float
    """Gorge carving (k_g): default 0.1; a number in [0, 100]. Gorge-carving constant k_g in w = min(k_g·D, 1) (§3.4: 0.1)."""
    ke: float
    """Erosion (k_e): default 0.5; a number in [0, 100]. Erosion constant k_e in Δh = k_e·D^n·s^m (§3.5: 0.5)."""
    n: float
    """Drainage exponent (n): default 1; a number in [0, 4]. Drainage exponent n (§3.5: 1)."""
    m: float
    """Slope exponent (m): default 2; a number in [0, 8]. Slope exponent m (§3.5: 2; the paper finds n/m = 1/2 best)."""
    sea_level: float
    """Sea level: default 0; a number in [-10, 10]. Sea level as a fraction of the graph's height range (0 = its bottom)."""
    moisture: float
    """Moisture: default 1; a number in [0, 100]. Rain on every tile (× the moisture mask when connected; §3.1 "a uniform high value")."""
    noise_m: float
    """Noise: default 0.01 m; a number in [0, 1000]. Amplitude of the random noise added to the constraint map (§3.1), in metres."""
    jitter: float
    """Jitter: default 1; a number in [0, 1]. How far node positions wander inside their tiles: 1 = the paper's uniform [0, 1]²."""
    detail: Literal["consistent", "native"]
    """Resolution handling: default consistent; one of "consistent" or "native". consistent: the same terrain at every resolution — the process runs in full at base_resolution and a finer build only adds detail below that grid's cells (a preview at the base resolution is a build's first level). native: Lim, Tan & Bhojan 2022's Algorithm 1 run once at the resolution being built (its tiles are the grid's cells, so the result depends on the resolution)."""
    base_resolution: int
    """Base resolution: default 256; an integer in [16, 8192]. Samples per side of the grid the process runs on in full (consistent only). Finer builds refine from it (a fifth of the iterations, once, at the build's resolution), coarser previews average it. Only when detail is "consistent"."""

class LinearGradient(TypedDict, total=False):
    """``linear_gradient`` — Linear gradient (generator).

    A straight ramp from black to white across the world, for tilting a terrain or fading an effect. A mask that rises linearly from 0 at `start` to 1 at `end` along the direction `angle_deg`; clamped outside. Positions are fractions of the world size, so every resolution shows the same ramp.

    Output ``out`` (mask): The ramp, in [0, 1].
    """
    angle_deg: float
    """Angle: default 0 °; a number in [-360, 720]. Direction the ramp rises towards, in degrees: 0 = +x (east), 90 = +y (south, down the image)."""
    start: float
    """Start: default -0.5; a number in [-10, 10]. Where the ramp starts (value 0), as a fraction of the world size along the direction, measured from the world centre: -0.5 is the near edge."""
    end: float
    """End: default 0.5; a number in [-10, 10]. Where the ramp ends (value 1), same units as `start`."""

class MaskBlur(TypedDict, total=False):
    """``mask_blur`` — Blur mask (mask).

    Softens a mask's edges so that effects fade in gradually instead of stopping at a hard line. The `blur` node's Gaussian (σ = radius_m / 2, cost independent of the radius, mirrored borders) on a mask; the result is clamped to [0, 1].

    Input ``in`` (mask): Mask to blur.
    Output ``out`` (mask): Blurred mask, in [0, 1].
    """
    radius_m: float
    """Radius: default 50 m; a number in [0, 10000000]. Blur radius in metres (2σ)."""

class MaskCombine(TypedDict, total=False):
    """``mask_combine`` — Mask algebra (mask).

    Joins, overlaps, subtracts or inverts masks, for example to pick steep ground that is also high up. Fuzzy mask algebra on [0, 1]: and = min, or = max, not = 1 − a (b unused), multiply, add (clamped), subtract (clamped), xor = |a − b|. Inputs are clamped to [0, 1] first, so the output always is in [0, 1].

    Input ``a`` (mask): First mask.
    Input ``b`` (mask, optional): Second mask (not needed by `not`).
    Output ``out`` (mask): The result, in [0, 1].
    """
    op: Literal["and", "or", "not", "multiply", "add", "subtract", "xor"]
    """Operation: default and; one of "and", "or", "not", "multiply", "add", "subtract" or "xor". and = min(a, b), or = max(a, b), not = 1 − a, multiply = a·b, add = min(a + b, 1), subtract = max(a − b, 0), xor = |a − b|."""

class MaskGrow(TypedDict, total=False):
    """``mask_grow`` — Grow / shrink mask (mask).

    Grows a mask outwards (positive distance) or shrinks it inwards (negative), by a distance in metres. Morphological dilation (distance_m > 0) or erosion (< 0) by a square of half-side |distance_m| in metres: each cell takes the maximum (minimum) of the mask around it. A distance that is not a whole number of cells r blends the results at ⌊r⌋ and ⌊r⌋ + 1 cells by the fraction, so a hard edge moves by exactly distance_m (the last cell covered by the fraction it reaches) at every resolution. Separable running extremum, O(1) per cell whatever the distance.

    Input ``in`` (mask): Mask to grow or shrink.
    Output ``out`` (mask): The grown or shrunk mask, in [0, 1].
    """
    distance_m: float
    """Distance: default 50 m; a number in [-10000000, 10000000]. Distance to grow by, in metres; negative shrinks."""

class Noise(TypedDict, total=False):
    """``noise`` — Fractal noise (generator).

    Natural-looking random terrain (rolling hills, ridged mountains, puffy billows) at any feature size. Fractal noise over a choice of basis — Perlin with S3/S5 (Thorimbert & Chopard 2016 §3.2, Eqs. 16–18), value noise, generic D2M1N3 polynomial noise (Thorimbert & Chopard 2016 §3.1, Eqs. 5–15, gradient weight w), zero-gradient D2M1N3 (Thorimbert & Chopard 2016 §3.3, Eq. 19, with the space-dependent terms tabulated once per octave as §3.3 suggests), or 2D simplex — combined as fBm (Thorimbert & Chopard 2016 §4), ridged (Thorimbert & Chopard 2016 Fig. 5), billow or hybrid multifractal. Sampled at cell centres in world metres, so every resolution shows the same terrain. Height = base + amplitude · v with v about [−1, 1], both relative to the graph's height range.

    Output ``out`` (height): Heights in metres.
    """
    seed: int
    """Seed: default 0; an integer seed in [0, 4294967295]. Seed of this node, combined with the graph seed."""
    basis: Literal["perlin", "value", "d2m1n3", "d2m1n3_zero", "simplex"]
    """Basis: default perlin; one of "perlin", "value", "d2m1n3", "d2m1n3_zero" or "simplex". Noise of one octave: perlin (Thorimbert & Chopard 2016 §3.2), value, d2m1n3 (generic polynomial, Thorimbert & Chopard 2016 §3.1), d2m1n3_zero (zero-gradient polynomial, Thorimbert & Chopard 2016 §3.3 Eq. 19) or simplex."""
    mode: Literal["fbm", "ridged", "billow", "hybrid"]
    """Mode: default fbm; one of "fbm", "ridged", "billow" or "hybrid". How octaves are combined: fbm, ridged, billow or hybrid (multifractal)."""
    feature_size_m: float
    """Feature size: default 2000 m; a number in [0.01, 10000000]. Wavelength of the first (largest) octave, in metres."""
    octaves: int
    """Octaves: default 8; an integer in [1, 16]. Number of octaves summed."""
    lacunarity: float
    """Lacunarity: default 2; a number in [1.01, 8]. Frequency ratio between successive octaves."""
    persistence: float
    """Persistence: default 0.5; a number in [0, 1]. Amplitude ratio between successive octaves (p in Thorimbert & Chopard 2016 §5.3)."""
    offset: float
    """Offset: default 1; a number in [0, 4]. Ridged and hybrid modes: the offset added before shaping (ridges: offset − |n|). Only when mode is "ridged" or "hybrid"."""
    interp: Literal["s5", "s3"]
    """Interpolant: default s5; one of "s5" or "s3". Perlin and value noise: S3 (3t² − 2t³, Eq. 17) or S5 (6t⁵ − 15t⁴ + 10t³, Eq. 18). D2M1N3 always uses S3. Only when basis is "perlin" or "value"."""
    gradient_weight: float
    """Gradient weight: default 0.5; a number in [0, 10]. Generic D2M1N3 only: weight w of the random corner gradients, in octave amplitude per lattice cell (Thorimbert & Chopard 2016 §3.4 uses w = h0/100 per pixel). Only when basis is "d2m1n3"."""
    amplitude: float
    """Amplitude: default 0.5; a number in [0, 100]. Half the peak-to-trough amplitude, as a fraction of the graph's height range."""
    base: float
    """Base: default 0.5; a number in [-100, 100]. Mean height, as a fraction of the graph's height range (0 = bottom, 1 = top)."""

class Normalize(TypedDict, total=False):
    """``normalize`` — Normalize (filter).

    Stretches the terrain so its lowest and highest points land exactly at chosen heights. Linearly maps the input's minimum to `low` and maximum to `high` (fractions of the graph's height range). A flat input becomes flat at `low`. Note: depends on the whole field, so different resolutions can differ slightly where extremes are sampled differently.

    Input ``in`` (height): Terrain to normalise.
    Output ``out`` (height): Normalised terrain.
    """
    low: float
    """Low: default 0; a number in [-100, 100]. Where the lowest point lands, as a fraction of the graph's height range."""
    high: float
    """High: default 1; a number in [-100, 100]. Where the highest point lands, as a fraction of the graph's height range."""

class PerlinFbm(TypedDict, total=False):
    """``perlin_fbm`` — Perlin fBm (generator).

    Rolling, natural-looking hills and mountains from layered noise, the usual starting point for a terrain. Fractal Brownian motion: the sum over octaves i of persistence^i · perlin(lacunarity^i · p / feature_size_m), normalised by the sum of the octave amplitudes (Thorimbert & Chopard 2016 §4). Perlin noise with the S3 or S5 interpolant (Thorimbert & Chopard 2016 §3.2, Eqs. 16–18). The same as `noise` with basis perlin and mode fbm. Sampled at cell centres in world metres, so every resolution shows the same terrain. Height = base + amplitude · noise, both relative to the graph's height range.

    Output ``out`` (height): Heights in metres.
    """
    seed: int
    """Seed: default 0; an integer seed in [0, 4294967295]. Seed of this node, combined with the graph seed."""
    feature_size_m: float
    """Feature size: default 2000 m; a number in [0.01, 10000000]. Wavelength of the first (largest) octave, in metres."""
    octaves: int
    """Octaves: default 6; an integer in [1, 16]. Number of octaves summed."""
    lacunarity: float
    """Lacunarity: default 2; a number in [1.01, 8]. Frequency ratio between successive octaves."""
    persistence: float
    """Persistence: default 0.5; a number in [0, 1]. Amplitude ratio between successive octaves."""
    amplitude: float
    """Amplitude: default 0.5; a number in [0, 100]. Half the peak-to-trough amplitude, as a fraction of the graph's height range."""
    base: float
    """Base: default 0.5; a number in [-100, 100]. Mean height, as a fraction of the graph's height range (0 = bottom, 1 = top)."""
    interp: Literal["s5", "s3"]
    """Interpolant: default s5; one of "s5" or "s3". Smoothstep between lattice points: s5 (Eq. 18) or s3 (Eq. 17)."""

class Perturb(TypedDict, total=False):
    """``perturb`` — Perturb (warp).

    Shifts the terrain sideways by noise, so straight ridges and coasts wander more naturally. Olsen 2004's perturbation filter: each cell takes the height found at its position moved by magnitude · world size · (n₁, n₂), where n₁, n₂ are Perlin fBm fields (persistence 0.5) about [−1, 1] — so no cell moves further than magnitude · N cells (0.02 in Olsen 2004's figure). Olsen 2004 displaces by 3D Perlin noise sampled at (i, j, h); here the two fields are 2D in world metres, so the displacement does not depend on height units and is the same at every resolution. Bilinear sampling, clamped borders.

    Input ``in`` (height): Terrain to perturb.
    Output ``out`` (height): Perturbed terrain.
    """
    seed: int
    """Seed: default 0; an integer seed in [0, 4294967295]. Seed of this node, combined with the graph seed."""
    magnitude: float
    """Magnitude: default 0.02; a number in [0, 1]. Largest displacement as a fraction of the map size (Olsen 2004's example: 0.02)."""
    feature_size_m: float
    """Feature size: default 1000 m; a number in [0.01, 10000000]. Wavelength of the displacement noise, in metres."""
    octaves: int
    """Octaves: default 3; an integer in [1, 16]. Octaves of displacement noise."""

class PipeHydraulicErosion(TypedDict, total=False):
    """``pipe_hydraulic_erosion`` — Hydraulic erosion (pipe model) (erosion).

    Rainwater flows over the terrain as a shallow sheet, cutting channels and laying sediment where it slows. Shallow-water hydraulic erosion with virtual pipes (Mei et al. 2007, Šťava et al. 2008; cited in Lim, Tan & Bhojan 2022 §2.2): per step rain d += Δt·r (Eq. 1); flux through four pipes f ← max(0, f + Δt·A·g·Δh/l), scaled so no cell sends more than it holds (Eqs. 2–4); water and velocity from the net flux (Eqs. 5–9); capacity C = K_c·sin(α)·|v| (tilt floored at min_tilt), erosion K_s·(C − s) or deposition K_d·(s − C) (Eqs. 10–12); sediment carried with the outflowing water (conservative upwind transport instead of Mei's semi-Lagrangian Eq. 13, which loses mass); evaporation d ← d·(1 − K_e·Δt) (Eq. 14). Grid normalised as in the paper (l = A = 1, heights in cell units). Water and its sediment may leave through the map edge. Optional rain mask scales the rain. Outputs: height (with the suspended sediment settled), water depth, flow speed, erosion and deposition masks (each relative to its largest value). Resolution: by default (detail = consistent) the process runs in full at base_resolution (256²), where every parameter means what it does in Mei et al. 2007, and a finer build adds only detail below those cells (a quarter of the iterations at each doubling, its drift over the coarser cells taken out), so a preview and a build show the same terrain (orogen parity); detail = native runs it once at the resolution being built.

    Input ``in`` (height): Terrain to erode.
    Input ``rain`` (mask, optional): Where it rains (× rain); uniform when not connected.
    Output ``out`` (height): Eroded terrain.
    Output ``water`` (mask): Water depth after the last step, 1 = deepest.
    Output ``flow`` (mask): Flow speed of the last step, 1 = fastest.
    Output ``erosion`` (mask): Where the bed went down, 1 = deepest cut.
    Output ``deposition`` (mask): Where the bed went up, 1 = thickest deposit.
    """
    iterations: int
    """Iterations: default 200; an integer in [0, 100000]. Number of iterations (time steps of length dt)."""
    dt: float
    """Time step (Δt): default 0.05 s; a number in [0.0001, 1]. Time step Δt (Mei et al. use 0.02–0.05 on a unit grid; above about 0.25 the flux can oscillate)."""
    rain: float
    """Rain: default 0.02; a number in [0, 10]. Rain r per unit of time, in cell units of water depth (× the rain mask when connected)."""
    g: float
    """Gravity (g): default 9.81; a number in [0, 100]. Gravity g in the flux update."""
    kc: float
    """Capacity (K_c): default 0.5; a number in [0, 100]. Sediment capacity constant K_c in C = K_c·sin(α)·|v|."""
    ks: float
    """Dissolving (K_s): default 0.3; a number in [0, 1]. Dissolving constant K_s: fraction of the missing load eroded per step."""
    kd: float
    """Deposition (K_d): default 0.3; a number in [0, 1]. Deposition constant K_d: fraction of the excess load deposited per step."""
    ke: float
    """Evaporation (K_e): default 0.5; a number in [0, 1000]. Evaporation constant K_e per unit of time."""
    min_tilt: float
    """Min tilt: default 0.05; a number in [0, 1]. Smallest sin(α) used in the capacity, so water on flats still carries sediment."""
    friction: float
    """Friction: default 10; a number in [0, 1000]. Flux damping per unit of time: f ← f·(1 − friction·Δt) before the pressure update. Not in Mei et al.; without it the pipes carry undamped shallow-water waves that ring as ripples on steep terrain."""
    detail: Literal["consistent", "native"]
    """Resolution handling: default consistent; one of "consistent" or "native". consistent: the same terrain at every resolution — the process runs in full at base_resolution and a finer build only adds detail below that grid's cells (a preview at the base resolution is a build's first level). native: Mei et al. 2007's model run once at the resolution being built (its time step is in cell units, so the result depends on the resolution)."""
    base_resolution: int
    """Base resolution: default 256; an integer in [16, 8192]. Samples per side of the grid the process runs on in full (consistent only). Finer builds refine from it (a quarter of the iterations at each finer level), coarser previews average it. Only when detail is "consistent"."""

class Quantize(TypedDict, total=False):
    """``quantize`` — Quantize (filter).

    Snaps heights to a few flat, hard-edged levels, like the layers of a contour model. Per sample, r' = round(r·steps)/steps on relative heights: hard-edged levels.

    Input ``in`` (height): Terrain to remap.
    Output ``out`` (height): Remapped terrain.
    """
    steps: int
    """Steps: default 16; an integer in [1, 65536]. Number of levels over the height range."""

class RadialGradient(TypedDict, total=False):
    """``radial_gradient`` — Radial gradient (generator).

    A round mask, white at the centre and fading to black at the edge, to place a single peak or island. A mask equal to 1 at the centre and 0 at `radius` and beyond, with a cone (linear), smooth (smoothstep) or dome (sqrt(1 - r²)) profile. Centre and radius are fractions of the world size.

    Output ``out`` (mask): The falloff, in [0, 1].
    """
    center_x: float
    """Center x: default 0.5; a number in [-10, 10]. Centre x as a fraction of the world size (0 = west edge, 1 = east edge)."""
    center_y: float
    """Center y: default 0.5; a number in [-10, 10]. Centre y as a fraction of the world size (0 = north edge, 1 = south edge)."""
    radius: float
    """Radius: default 0.5; a number in [0.0001, 100]. Radius where the mask reaches 0, as a fraction of the world size."""
    falloff: Literal["cone", "smooth", "dome"]
    """Falloff: default smooth; one of "cone", "smooth" or "dome". Profile: cone (linear), smooth (smoothstep) or dome (spherical cap)."""

class Rivers(TypedDict, total=False):
    """``rivers`` — Rivers (water).

    Carves a river network into the terrain, its rivers widening and deepening as they gather water. A river wherever the drainage area (single-direction routes over the priority-flooded terrain, Barnes, Lehman & Mulla 2014; times the optional rain mask) exceeds threshold_km2, except under lakes deeper than its channel and, with sea on, below sea_level_m (rivers end at the sea). The water is routed over the terrain smoothed over scale_m (by default a 128th of the world's side), so a river takes the same way across a gentle valley floor at every resolution instead of following whichever small bumps the grid resolves, in D8-LTD steps (Orlandini et al. 2003, least transversal deviation) that follow the smoothed terrain's flow lines rather than the grid's eight directions; with scale_m 0, flow_accumulation's d8 routes over the terrain itself. Hydraulic geometry (Leopold & Maddock 1953, downstream): width = width_m · (A / 10 km²)^0.5, depth = depth_m · (A / 10 km²)^0.4. The water surface is the filled terrain's level, lowered to the lowest level upstream on the river's way, so it never rises downstream and rivers run through lakes to the map edge. Each river cell cuts a parabolic channel (its depth at the centre line, 0 at the banks) below that surface and banks rising at bank_slope_deg, fading out over bank_width_m; the terrain keeps the lower of itself and every cut. Outputs: out = the carved terrain, river = the share of each cell under a channel's water (antialiased, so the network covers the same area at every resolution), surface = the water surface on rivers and lakes, the carved terrain elsewhere. All sizes are in metres, so a river keeps its width at every resolution.

    Input ``in`` (height): Terrain the rivers run over.
    Input ``rain`` (mask, optional): Rain per cell (1 = every square metre counts); uniform when not connected.
    Output ``out`` (height): The terrain with the river channels and banks carved in (m).
    Output ``river`` (mask): Share of the cell under a river's water, in [0, 1].
    Output ``surface`` (height): Water surface on rivers and lakes; the carved terrain elsewhere (m).
    """
    threshold_km2: float
    """Threshold: default 1 km²; a number in [0.000001, 1000000]. Drainage area where a river begins, in km²."""
    width_m: float
    """Width at 10 km²: default 20 m; a number in [0, 100000]. Channel width where the drainage area is 10 km², in metres; it grows as the area^0.5 (Leopold & Maddock 1953)."""
    depth_m: float
    """Depth at 10 km²: default 2 m; a number in [0, 10000]. Channel depth where the drainage area is 10 km², in metres; it grows as the area^0.4 (Leopold & Maddock 1953)."""
    bank_width_m: float
    """Bank width: default 30 m; a number in [0, 100000]. How far beyond the channel's edge the banks reach into the terrain, in metres."""
    bank_slope_deg: float
    """Bank slope: default 25 °; a number in [0.1, 89]. Steepest slope of the banks, in degrees: higher terrain within bank_width_m is cut down to it."""
    sea: bool
    """Stop at the sea: default false; true or false. Rivers end where they reach the sea: no channel below sea_level_m."""
    sea_level_m: float
    """Sea level: default 0 m; a number in [-1000000, 1000000]. Sea level, in metres (with `sea` on)."""
    scale_m: float
    """Routing scale: default -1 m; a number in [-1, 10000000]. Distance over which rivers find their way, in metres: the water is routed over the terrain smoothed by a Gaussian of σ = scale_m / 2 (at most a 32nd of the world's side), so the network follows the same valleys at every resolution. −1 (auto, the default): a 128th of the world's side; 0: the grid's own cells (rivers then follow detail only a finer build holds, and move with the resolution)."""

class ScalarToMask(TypedDict, total=False):
    """``scalar_to_mask`` — Scalar to mask (mask).

    Turns a measured quantity, such as a drainage area in m², into a mask for selecting or blending. Formula: mask = clamp((v − low)/(high − low), 0, 1), or with scale log clamp(ln(v/low)/ln(high/low), 0, 1), with low and high in the input's own unit: the explicit way to use a measured quantity (flow_accumulation's drainage area in m², or a height in metres) where a mask is expected. A step at `low` when low == high. E.g. channels draining more than 1 km²: low 0.9e6, high 1.1e6, linear; flow_accumulation's own flow mask: low min_area_m2, high the world's area, log.

    Input ``in`` (scalar): The quantity (a height or mask passes unchanged).
    Output ``out`` (mask): Mask in [0, 1].
    """
    low: float
    """Low: default 0; a number in [-1000000000000000, 1000000000000000]. Value that maps to 0, in the input's unit (m² for a drainage area)."""
    high: float
    """High: default 1; a number in [-1000000000000000, 1000000000000000]. Value that maps to 1, in the input's unit."""
    scale: Literal["linear", "log"]
    """Scale: default linear; one of "linear" or "log". `linear`: (v − low)/(high − low); `log`: ln(v/low)/ln(high/low), for quantities spanning decades such as drainage area (low and high must then be above 0)."""

class Sea(TypedDict, total=False):
    """``sea`` — Sea (water).

    Fills everything below sea level with sea, and marks the shore and the beaches along the coast. The sea: every cell below level_m (connected to the map edge through such cells, unless connected is off). Outputs: surface = the sea surface over the sea, the terrain elsewhere; sea = 1 on the sea, and along the coast the share of the cell seaward of the waterline, placed within the cell from its height and slope ((z − level) / |∇z|, exact on a plane), so a coarse preview's sea covers what a finer build's does; shore = 1 at the waterline fading linearly to 0 at shore_width_m inland, over the land share of each cell (the Euclidean distance to the waterline itself, placed within the coast cells as for the sea; exact on a plane); beach = the shore where the land is at most beach_height_m above the sea and no steeper than beach_slope_deg (both with a smooth fade: 25% of the height, 4° of slope). All distances are in metres, so the bands keep their width at every resolution.

    Input ``in`` (height): Terrain.
    Output ``surface`` (height): The sea surface over the sea, the terrain elsewhere (m).
    Output ``sea`` (mask): 1 on the sea.
    Output ``shore`` (mask): 1 at the waterline fading to 0 at shore_width_m inland.
    Output ``beach`` (mask): Low, gentle shore.
    """
    level_m: float
    """Sea level: default 0 m; a number in [-1000000, 1000000]. Sea level, in metres (the world's height frame)."""
    connected: bool
    """Connected to the edge: default true; true or false. Only water connected to the map edge is sea; inland basins below sea level stay dry land (wire them to `lakes` for water)."""
    shore_width_m: float
    """Shore width: default 80 m; a number in [0, 1000000]. How far inland the shore mask reaches, in metres."""
    beach_height_m: float
    """Beach height: default 4 m; a number in [0, 1000000]. Highest a beach rises above the sea, in metres."""
    beach_slope_deg: float
    """Beach slope: default 10 °; a number in [0, 90]. Steepest slope that is still beach, in degrees (fading over 4° above)."""

class SedimentDepth(TypedDict, total=False):
    """``sediment_depth`` — Soil / sediment depth (mask).

    Masks where erosion laid down sediment or wore the ground away, by the depth in metres. The depth of material an erosion node (or any edit) laid down or took away, in metres, as masks: depth = max(after − before, 0), worn = max(before − after, 0), each divided by full_depth_m and clamped to [0, 1]. Wire the erosion node's input into `before` and its output into `after`: the deposits of thermal erosion are its scree, those of the hydraulic nodes their sediment fans and valley fill. Unlike an erosion node's own deposition and erosion outputs (relative to the largest change in view, so their scale depends on the map), these are absolute depths in metres: the same at every resolution and in every tile of a tiled build.

    Input ``before`` (height): Terrain before erosion.
    Input ``after`` (height): Terrain after erosion.
    Output ``depth`` (mask): Deposited depth ÷ full_depth_m, in [0, 1].
    Output ``worn`` (mask): Removed depth ÷ full_depth_m, in [0, 1].
    """
    full_depth_m: float
    """Full depth: default 5 m; a number in [0.0001, 100000]. Depth of deposited material that reads 1 (full), in metres: the mask is depth ÷ this, clamped to [0, 1]."""

class Select(TypedDict, total=False):
    """``select`` — Select (combine).

    Takes one terrain where a control is low or gentle, and another where it is high or steep. Chooses b where the control terrain is above the threshold (height as a fraction of the height range, or slope in degrees computed with the real cell size, measured over scale_m metres, by default a 48th of the world's side, or over the grid's own cells at 0) and a below it, with a smoothstep transition `falloff` wide centred on the threshold. The control defaults to a.

    Input ``a`` (height): Terrain below the threshold.
    Input ``b`` (height): Terrain above the threshold.
    Input ``control`` (height, optional): Terrain the threshold is tested on (default: a).
    Output ``out`` (height): The selection, in metres.
    """
    criterion: Literal["height", "slope"]
    """Criterion: default height; one of "height" or "slope". Select by the control terrain's height or its slope."""
    threshold: float
    """Height threshold: default 0.5; a number in [-100, 100]. Height criterion: threshold as a fraction of the graph's height range. Only when criterion is "height"."""
    threshold_deg: float
    """Slope threshold: default 30 °; a number in [0, 90]. Slope criterion: threshold in degrees. Only when criterion is "slope"."""
    falloff: float
    """Falloff: default 0.05; a number in [0, 100]. Width of the transition: fraction of the height range (height) or degrees (slope)."""
    scale_m: float
    """Slope scale: default -1 m; a number in [-1, 10000000]. Slope criterion: distance the slope is measured over, in metres (the control is smoothed over about this distance first, as in slope_mask). −1 (auto, the default): a 48th of the world's side, so the preview predicts the build; 0: the grid's own cells. Only when criterion is "slope"."""

class Sharpen(TypedDict, total=False):
    """``sharpen`` — Sharpen (filter).

    Crisps up the terrain, exaggerating the bumps and edges finer than the radius. Unsharp masking: out = h + amount·(h − blur(h)), with the blur of the `blur` node (σ = radius_m / 2). Preserves the mean height.

    Input ``in`` (height): Terrain to sharpen.
    Output ``out`` (height): Sharpened terrain.
    """
    radius_m: float
    """Radius: default 50 m; a number in [0, 10000000]. Radius of the blur that defines "detail", in metres (2σ)."""
    amount: float
    """Amount: default 1; a number in [0, 100]. How much detail to add: out = h + amount·(h − blur(h))."""

class SkyView(TypedDict, total=False):
    """``sky_view`` — Sky view (ambient occlusion) (mask).

    How much open sky each spot sees: dark in valleys, pits and at cliff feet, for ambient occlusion. The sky view factor of every cell (Dozier & Frew 1990): for a horizontal surface, the mean over directions of cos²(H), where H is the angle of the highest horizon found within radius_m in that direction (0 when nothing rises above the cell). 1 on open ground and crests, lower in valleys, pits and at the foot of cliffs: an ambient occlusion map, or with a small radius a cavity map. Horizons are searched along directions evenly spaced around the compass, 32 samples evenly spread over the radius (the same places in metres at every resolution), heights read bilinearly from the terrain smoothed over one sample spacing (radius_m / 32) or over detail_m if larger (a Gaussian of σ = half of it), so that a finer grid adds no horizons a coarser one cannot see as long as the coarser grid's cells are no larger than that distance — set detail_m to a few of the preview's cells for a preview that predicts the build; beyond the map edge the terrain is mirrored. The horizons are searched on a grid whose cells are no wider than a quarter of that smoothing distance (the means of blocks of the map's cells, brought back bilinearly), which leaves nothing finer to find and costs a 64th at 4096² for 150 m. The output is the factor raised to contrast. Distances are in metres, so the map is the same at every resolution.

    Input ``in`` (height): Terrain.
    Output ``out`` (mask): Sky view factor in [0, 1] (1 = the whole sky), raised to contrast.
    """
    radius_m: float
    """Radius: default 300 m; a number in [0.001, 1000000]. How far a cell looks for a horizon, in metres: small (10–50 m) for a cavity map, large (200–2000 m) for valley-scale ambient occlusion."""
    directions: int
    """Directions: default 16; an integer in [1, 256]. Directions the horizon is searched in (evenly spaced around the compass)."""
    contrast: float
    """Contrast: default 1; a number in [0, 100]. Contrast: the output is the sky view factor raised to this power."""
    detail_m: float
    """Smallest detail: default 0 m; a number in [0, 10000000]. Relief finer than this is smoothed away before the horizons are searched, in metres (a Gaussian of σ = detail_m / 2); at least one sample spacing (radius_m / 32), which is what 0 gives."""

class SlopeMask(TypedDict, total=False):
    """``slope_mask`` — Slope mask (mask).

    Selects ground by steepness, such as cliffs for rock or gentle slopes for grass. The mask is 1 where the slope angle lies in [min_deg, max_deg], fading over falloff_deg. Slopes come from central differences of metres over the real cell size (world size / resolution), so a 30° hillside reads 30° at every resolution; the terrain is first smoothed over scale_m (a Gaussian of σ = scale_m / 2, as curvature_mask), so the slope is measured over the same stretch of land at every resolution. By default (−1, auto) that is a 48th of the world's side, five cells of a 256² preview, and the preview predicts the build; with 0 the grid's own cells, where a finer build resolves steeper detail the preview cannot see.

    Input ``in`` (height): Terrain to measure.
    Output ``out`` (mask): Slope selection, in [0, 1].
    """
    min_deg: float
    """Min slope: default 30 °; a number in [0, 90]. Lowest slope selected, in degrees."""
    max_deg: float
    """Max slope: default 90 °; a number in [0, 90]. Steepest slope selected, in degrees."""
    falloff_deg: float
    """Falloff: default 5 °; a number in [0, 90]. Width of the fade outside [min_deg, max_deg], in degrees."""
    scale_m: float
    """Scale: default -1 m; a number in [-1, 10000000]. Distance the slope is measured over, in metres: the terrain is smoothed over about this distance first. −1 (auto, the default): a 48th of the world's side, so the preview predicts the build; 0: the grid's own cells (crisper, but finer builds read steeper detail)."""

class SlopeWarp(TypedDict, total=False):
    """``slope_warp`` — Slope warp (warp).

    Slides the terrain along its own slopes, softening ridges and widening valleys (or the reverse). Each cell takes the height found amount_m · sin(θ) metres uphill of it, where θ and the uphill direction come from the gradient of the terrain (or of the optional guide) blurred with radius smoothing_m. Ridges creep downhill and valleys widen; a negative amount pulls the other way. Zero amount returns the input unchanged.

    Input ``in`` (height): Terrain to warp.
    Input ``guide`` (height, optional): Terrain whose slopes drive the warp (default: the input).
    Output ``out`` (height): Warped terrain.
    """
    amount_m: float
    """Amount: default 50 m; a number in [-1000000, 1000000]. Largest displacement, in metres (reached on steep slopes)."""
    smoothing_m: float
    """Smoothing: default 40 m; a number in [0, 1000000]. Radius of the smoothing applied before taking the gradient, in metres."""

class Snow(TypedDict, total=False):
    """``snow`` — Snow (water).

    Covers the terrain in snow above a snow line, shedding it from steep faces and gathering it in hollows. By altitude: none below the snow line, building up (smoothstep) over fade_m above it to depth_m. By aspect: the line rises by aspect_m · sin(slope) on slopes facing the sun (sun_azimuth_deg, clockwise from north) and falls as much on slopes facing away, so shaded faces hold snow lower. By slope: snow slides off slopes of max_slope_deg and more (none stays there) and only part of it stays over the slope_fade_deg below (smoothstep); what cannot stay slides down the steepest descent, cell by cell from the highest down, and settles where the ground lets it, up to twice depth_m per cell (the rest slides on; what slides below the snow line melts): avalanche cones at the foot of steep faces and filled gullies. Hollows gather snow: where snow falls, hollow_gain metres of snow per metre the cell lies below its surroundings' mean (a Gaussian over hollow_radius_m), up to twice depth_m of snowfall. Slopes come from the real cell size and every distance is in metres; slope and aspect are measured after smoothing the terrain over scale_m (a Gaussian of σ = scale_m / 2; by default a 48th of the world's side, five cells of a 256² preview), the same stretch of land at every resolution, so the preview's snow predicts the build's (with 0, a finer grid resolves steep detail, and sheds snow from it, that the preview cannot see). Outputs: out = terrain + snow, depth = snow depth ÷ depth_m (at most 1), mask = 1 where the snow is at least a tenth of depth_m deep (smoothstep from 0).

    Input ``in`` (height): Terrain.
    Output ``out`` (height): The terrain with its snow (m).
    Output ``depth`` (mask): Snow depth ÷ depth_m, in [0, 1].
    Output ``mask`` (mask): Snow cover: 1 where it lies at least a tenth of depth_m deep.
    """
    snow_line_m: float
    """Snow line: default 1500 m; a number in [-1000000, 1000000]. Altitude where snow begins, in metres (on a flat, or a slope facing neither towards nor away from the sun)."""
    fade_m: float
    """Melt band: default 300 m; a number in [0.001, 1000000]. Height above the snow line over which the cover builds up to its full depth, in metres (below it, the snow has melted away)."""
    depth_m: float
    """Depth: default 1.5 m; a number in [0, 10000]. Full snow depth, in metres."""
    max_slope_deg: float
    """Max slope: default 45 °; a number in [0, 90]. Snow slides off slopes this steep or steeper, in degrees."""
    slope_fade_deg: float
    """Slope fade: default 10 °; a number in [0, 90]. The cover thins over this many degrees below max_slope_deg."""
    sun_azimuth_deg: float
    """Sun azimuth: default 180 °; a number in [-360, 720]. Where the sun comes from, in degrees clockwise from north (up the map): 180 is the midday sun of the northern hemisphere."""
    aspect_m: float
    """Aspect shift: default 200 m; a number in [0, 100000]. How far the snow line rises on a steep slope facing the sun (and falls on one facing away), in metres, scaled by the sine of the slope."""
    hollow_radius_m: float
    """Hollow radius: default 60 m; a number in [0, 100000]. Radius over which hollows gather snow, in metres."""
    hollow_gain: float
    """Hollow gain: default 0.5; a number in [0, 100]. Extra snow per metre a cell lies below its surroundings (averaged over hollow_radius_m), in metres of snow; at most twice the full depth in all."""
    scale_m: float
    """Slope scale: default -1 m; a number in [-1, 10000000]. The distance slope and aspect are measured over, in metres: the terrain is first smoothed by a Gaussian of σ = scale_m / 2. −1 (auto, the default): a 48th of the world's side, as slope_mask; 0 measures over the grid's own cells (crisper, but a finer build then resolves steep detail its preview cannot see)."""

class SolidColor(TypedDict, total=False):
    """``solid_color`` — Solid colour (color).

    One colour everywhere (given in sRGB hex, output in linear RGB): snow, water or a tint to blend over another colour map by a mask.

    Output ``out`` (color): The colour, linear RGB.
    """
    color: str
    """Colour: default "#f4f6f8"; a string. The colour, sRGB hex "#rrggbb" as a colour picker shows it."""

class StreamPowerErosion(TypedDict, total=False):
    """``stream_power_erosion`` — Stream power + uplift (erosion).

    Grows mountain ranges cut by branching river valleys, balancing uplift against river erosion over time. Uplift against river incision (Cordonnier et al. 2016, as summarised by Lim, Tan & Bhojan 2022 §2.3), solved implicitly (Braun & Willett 2013, unconditionally stable, as FastScape). Per step: uplift U·Δt (U = uplift_m_per_yr × uplift map; the border is the fixed base level, and a finer build holds the base's border cells, so the map's edge stays where the preview puts it); depressions resolved over the graph of pit basins joined at their lowest passes (Cordonnier et al. 2016's basin tree; the lake levels equal a priority flood's), so every river reaches the map edge; jittered node per cell, steepest-descent receiver among 8 neighbours on the filled surface (cells under a spill level are lakes: not cut while under water, their water routed to the pit and out over the pass; a lake's level falls with its outlet within the step, and the floor it exposes is cut); drainage area A accumulated downstream; incision k·A^m·s^n with the implicit update h ← (h + F·h_r)/(1 + F), F = k·Δt·A^m/d (Newton iterations when n ≠ 1); optional hillslope diffusion κ·∇²h (FastScape's hillslope term, not in Lim, Tan & Bhojan 2022), implicit one direction at a time, the border fixed. The uplift input is read as a factor (input − height_min)/(height span): a mask gives its own value, a height map its relative height. Outputs: height (m), drainage (log of the area, 1 = the largest), rivers (1 where the area exceeds river_area_km2, fading in from a quarter of it; 0 under lakes). Resolution: by default (detail = consistent) the process runs in full at base_resolution (256²), where every parameter means what it does in Cordonnier et al. 2016 and Braun & Willett 2013, and a finer build adds only detail below those cells (two fifths of the steps, once, at the build's resolution, its drift over the base's cells taken out exactly: its change averaged down to them is the base's), so a preview and a build show the same terrain (orogen parity); detail = native runs it once at the resolution being built.

    Input ``in`` (height): Initial terrain.
    Input ``uplift`` (height, optional): Uplift map (mask or height); uniform when not connected.
    Output ``out`` (height): Eroded terrain (m).
    Output ``drainage`` (mask): log(drainage area) / log(largest), in [0, 1].
    Output ``rivers`` (mask): 1 where the drainage area exceeds river_area_km2.
    """
    seed: int
    """Seed: default 0; an integer seed in [0, 4294967295]. Seed of the jittered node positions, combined with the graph seed."""
    jitter: float
    """Jitter: default 1; a number in [0, 1]. How far node positions wander inside their cells: 0 = cell centres, 1 = anywhere in the cell."""
    uplift_m_per_yr: float
    """Uplift rate (U): default 0.001 m/yr; a number in [0, 1]. Uplift rate U where the uplift map is 1 (or everywhere when it is not connected)."""
    k: float
    """Erodibility (k): default 0.0002; a number in [0, 1]. Erodibility k in ∂h/∂t = −k·A^m·s^n (A in m²)."""
    m: float
    """Area exponent (m): default 0.4; a number in [0, 2]. Drainage-area exponent m (Lim, Tan & Bhojan 2022 §2.3: 0.5)."""
    n: float
    """Slope exponent (n): default 1; a number in [0.1, 4]. Slope exponent n (1 = closed-form implicit update; otherwise Newton iterations)."""
    diffusivity_m2_per_yr: float
    """Diffusivity: default 0 m²/yr; a number in [0, 100]. Hillslope diffusivity κ in ∂h/∂t = κ·∇²h (soil creep, FastScape's hillslope term; 0 = rivers only). Rivers are one cell wide, so κ fills them in proportion to 1/Δx²: keep κ·Δt well below the cell area for a map that looks the same at every resolution (BENCHMARKS.md)."""
    dt_years: float
    """Time step (Δt): default 20000 yr; a number in [1, 10000000]. Time step Δt."""
    steps: int
    """Steps: default 100; an integer in [0, 100000]. Number of time steps."""
    river_area_km2: float
    """River area: default 2 km²; a number in [0, 1000000]. Drainage area from which the rivers mask reaches 1 (it fades in from a quarter of it)."""
    detail: Literal["consistent", "native"]
    """Resolution handling: default consistent; one of "consistent" or "native". consistent: the same terrain at every resolution — the process runs in full at base_resolution and a finer build only adds detail below that grid's cells (a preview at the base resolution is a build's first level). native: the stream-power law run once at the resolution being built (drainage areas and slopes are counted over cells, so hillslope-scale results depend on the resolution)."""
    base_resolution: int
    """Base resolution: default 256; an integer in [16, 8192]. Samples per side of the grid the process runs on in full (consistent only). Finer builds refine from it (two fifths of the steps, once, at the build's resolution), coarser previews average it. Only when detail is "consistent"."""

class TalusMask(TypedDict, total=False):
    """``talus_mask`` — Talus / scree (mask).

    Marks scree: loose rock lying at its angle of repose, as thermal erosion leaves it. The mask is 1 where the slope lies in [talus_deg − below_deg, talus_deg + above_deg], fading over falloff_deg (smoothstep) — the slopes thermal erosion (Olsen 2004) relaxes material to — times the `deposit` mask when it is wired (e.g. sediment_depth's depth between a thermal erosion node's input and output: scree is where material came to rest, not bare rock that happens to have the angle). Slopes are measured in metres over the real cell size after smoothing the terrain over scale_m (a Gaussian of σ = scale_m / 2, as curvature_mask), so the angle reads the same at every resolution; with scale_m below the preview's cell size a finer build resolves steeper detail than the preview, as slope_mask does.

    Input ``in`` (height): Terrain to measure.
    Input ``deposit`` (mask, optional): Where material was deposited (1 = fully); every slope in the range when not connected.
    Output ``out`` (mask): Scree, in [0, 1].
    """
    talus_deg: float
    """Talus angle: default 35 °; a number in [0, 89]. Angle of repose of the loose rock, in degrees (thermal erosion's talus angle: use the same value)."""
    below_deg: float
    """Range below: default 12 °; a number in [0, 89]. How far below the talus angle a slope still reads as scree, in degrees (the foot of a scree slope flattens out)."""
    above_deg: float
    """Range above: default 3 °; a number in [0, 89]. How far above the talus angle a slope still reads as scree, in degrees (steeper is bare rock)."""
    falloff_deg: float
    """Falloff: default 4 °; a number in [0, 89]. Width of the fade at both ends of the range, in degrees."""
    scale_m: float
    """Scale: default 30 m; a number in [0, 10000000]. Distance the slope is measured over, in metres: the terrain is smoothed over about this distance first (0 = the grid's own cells). At least the preview's cell size lets the preview predict the build; smaller reads finer scree at finer resolutions."""

class Terrace(TypedDict, total=False):
    """``terrace`` — Terrace (filter).

    Cuts the terrain into flat steps joined by slopes, like rice terraces or eroded mesas. Terraces: with t = r·steps (r relative height), k = floor(t), u = t − k, the output is (k + u^p)/steps with p = 1/(1 − 0.99·shape) (u^p read from a 4097-point table). Continuous (each riser climbs to the next tread); shape 0 is the identity, shape 1 nearly flat treads.

    Input ``in`` (height): Terrain to remap.
    Output ``out`` (height): Remapped terrain.
    """
    steps: int
    """Steps: default 8; an integer in [1, 1000]. Number of terraces over the height range."""
    shape: float
    """Shape: default 0.7; a number in [0, 1]. 0 = no terracing (linear), towards 1 = flat treads and sheer risers."""

class ThermalErosion(TypedDict, total=False):
    """``thermal_erosion`` — Thermal erosion (erosion).

    Crumbles slopes steeper than the talus angle into scree that settles at their foot. Thermal erosion (Olsen 2004, "Thermal Erosion"): for each cell, with d_i = h − h_i to its 8 neighbours and T the talus angle turned into a height drop with the real distance to each neighbour (tan(talus_deg) · cell size, ×√2 diagonally), d_max the largest excess d_i − T and d_total the sum of the d_i > T, each such neighbour receives h_i += c·(d_max − T)·d_i/d_total and the cell loses the same. The olsen variant (Olsen 2004's speed-optimised version, only named in Olsen 2004) sends half the excess to the steepest neighbour only. The isotropic variant (not in Olsen 2004) takes the excess from the cell's slope instead — the larger of its steepest directional drop and its downhill (upwind) gradient √(g_x² + g_y²), g_x the larger drop to its left and right neighbours and g_y likewise, both per cell, minus T per cell — and shares c times it among every lower neighbour in proportion to its drop: Olsen's rule holds a slope once each of the eight drops is within the talus, which lets a slope facing between two grid directions stand 8% steeper and relaxes a cone to an octagonal pyramid of planar facets; this one holds it once the slope is, whichever way it faces. All cells update together (two parallel passes) in sub-steps of at most c = 1/8 (a larger simultaneous step overshoots and leaves ripples on every talus slope); material is conserved, nothing leaves the map. Resolution: by default (detail = consistent) the rule runs in full at base_resolution (256²) and a finer build relaxes its own detail again at a quarter and half of its resolution (where finer than the base; the same iterations each) and at all of it (a quarter of them), so previews and builds show the same terrain with talus slopes at the build's cells; detail = native runs it once at the resolution being built (Olsen's literal rule: its iterations count cells). Outputs the eroded height, a deposition mask (where material accumulated, 1 at the largest deposit) and an erosion mask (where it was shed, 1 at the largest loss).

    Input ``in`` (height): Terrain to erode.
    Output ``out`` (height): Eroded terrain.
    Output ``deposition`` (mask): Where material came to rest, in [0, 1].
    Output ``erosion`` (mask): Where the terrain went down (talus shed), relative to the largest loss.
    """
    talus_deg: float
    """Talus: default 35 °; a number in [0, 89]. Talus angle T in degrees: slopes steeper than this shed material. Converted to a height drop with the real distance to each neighbour, so the result does not depend on the resolution."""
    strength: float
    """Strength: default 0.5; a number in [0, 1]. Erosion magnitude c in (0, 1]: the fraction of the excess drop moved per iteration (Olsen 2004's c), moved in sub-steps of at most 1/8 so that simultaneous updates never overshoot."""
    iterations: int
    """Iterations: default 50; an integer in [0, 100000]. Number of iterations (at the base resolution, and again, in consistent mode, at a quarter and half of the build's resolution where those are finer than the base, and a quarter of them at the build's resolution, where they settle the build's own detail)."""
    variant: Literal["classic", "olsen", "isotropic"]
    """Variant: default classic; one of "classic", "olsen" or "isotropic". classic (Olsen 2004: all steeper neighbours, in proportion), olsen (only the steepest neighbour) or isotropic (classic's exchange, the excess from the slope in any direction: no grid-aligned facets)."""
    detail: Literal["consistent", "native"]
    """Resolution handling: default consistent; one of "consistent" or "native". consistent: the same terrain at every resolution — the process runs in full at base_resolution and a finer build only adds detail below that grid's cells (a preview at the base resolution is a build's first level). native: Olsen 2004's rule run once at the resolution being built (iterations count cells, so the result depends on the resolution)."""
    base_resolution: int
    """Base resolution: default 256; an integer in [16, 8192]. Samples per side of the grid the process runs on in full (consistent only). A finer build refines from it at its own resolution (through a quarter and half of it); coarser previews average it. Only when detail is "consistent"."""

class ToMask(TypedDict, total=False):
    """``to_mask`` — Height to mask (mask).

    Turns heights into a mask: black at a low height, white at a high one, greys between. Formula: mask = clamp((h − low)/(high − low), 0, 1) with low and high as fractions of the graph's height range: the explicit way to use heights where a mask is expected. A step at `low` when low == high.

    Input ``in`` (height): Terrain.
    Output ``out`` (mask): Mask in [0, 1].
    """
    low: float
    """Low: default 0; a number in [-100, 100]. Height that maps to 0, as a fraction of the graph's height range."""
    high: float
    """High: default 1; a number in [-100, 100]. Height that maps to 1, as a fraction of the graph's height range."""

class Worley(TypedDict, total=False):
    """``worley`` — Worley / Voronoi (generator).

    Terrain made of cells around scattered points; the default weights raise sharp ridged mountains. Cellular heights from Olsen 2004's Voronoi section: h = c1·d1 + c2·d2 + c3·d3 + c4·d4, where di is the distance to the i-th nearest feature point, in grid cells. n_peaks points over the world (one jittered point per grid cell, grid-accelerated: each sample looks at the 3×3 cells around it, so distances beyond one cell may be missed for the 3rd and 4th points). c1 = −1, c2 = 1 gives Olsen 2004's ridged mountains. Euclidean, Manhattan or Chebyshev metric. Height = base + amplitude·h of the height range.

    Output ``out`` (height): Heights in metres.
    """
    seed: int
    """Seed: default 0; an integer seed in [0, 4294967295]. Seed of this node, combined with the graph seed."""
    n_peaks: float
    """Feature points: default 20; a number in [1, 1000000]. Number of feature points over the whole world (n_peaks in Olsen 2004, 20 in its example). Points sit one per cell of a grid with cells of world_size/√n_peaks, so the count is exact on average."""
    c1: float
    """Weight c1 (nearest): default -1; a number in [-100, 100]. Weight c1 of the distance to the nearest point."""
    c2: float
    """Weight c2 (2nd nearest): default 1; a number in [-100, 100]. Weight c2 of the distance to the second nearest point."""
    c3: float
    """Weight c3 (3rd nearest): default 0; a number in [-100, 100]. Weight c3 of the distance to the third nearest point."""
    c4: float
    """Weight c4 (4th nearest): default 0; a number in [-100, 100]. Weight c4 of the distance to the fourth nearest point."""
    jitter: float
    """Jitter: default 1; a number in [0, 1]. How far each point may stray from its grid cell's centre: 0 = a regular grid, 1 = anywhere in the cell."""
    metric: Literal["euclidean", "manhattan", "chebyshev"]
    """Metric: default euclidean; one of "euclidean", "manhattan" or "chebyshev". Distance metric: euclidean, manhattan or chebyshev."""
    amplitude: float
    """Amplitude: default 0.8; a number in [0, 100]. Height of h = 1 (distances are in grid cells), as a fraction of the graph's height range."""
    base: float
    """Base: default 0.1; a number in [-100, 100]. Height of h = 0, as a fraction of the graph's height range."""


NodeType = Literal[
    "abs",
    "array_input",
    "aspect_mask",
    "blend",
    "blur",
    "clamp",
    "color_blend",
    "colorize",
    "combine",
    "constant",
    "curvature_mask",
    "curve",
    "diamond_square",
    "domain_warp",
    "droplet_erosion",
    "fault_formation",
    "flow_accumulation",
    "gamma",
    "graph_input",
    "graph_input_color",
    "graph_input_mask",
    "graph_input_scalar",
    "grid_hydraulic_erosion",
    "height_mask",
    "import",
    "invert",
    "island_mask",
    "lakes",
    "laplacian_smooth",
    "lerp",
    "levels",
    "lim_tan_bhojan_erosion",
    "linear_gradient",
    "mask_blur",
    "mask_combine",
    "mask_grow",
    "noise",
    "normalize",
    "perlin_fbm",
    "perturb",
    "pipe_hydraulic_erosion",
    "quantize",
    "radial_gradient",
    "rivers",
    "scalar_to_mask",
    "sea",
    "sediment_depth",
    "select",
    "sharpen",
    "sky_view",
    "slope_mask",
    "slope_warp",
    "snow",
    "solid_color",
    "stream_power_erosion",
    "talus_mask",
    "terrace",
    "thermal_erosion",
    "to_mask",
    "worley",
]
"""The id of a node type (a graph file's ``"type"``)."""

PARAMS: Dict[str, type] = {
    "abs": Abs,
    "array_input": ArrayInput,
    "aspect_mask": AspectMask,
    "blend": Blend,
    "blur": Blur,
    "clamp": Clamp,
    "color_blend": ColorBlend,
    "colorize": Colorize,
    "combine": Combine,
    "constant": Constant,
    "curvature_mask": CurvatureMask,
    "curve": Curve,
    "diamond_square": DiamondSquare,
    "domain_warp": DomainWarp,
    "droplet_erosion": DropletErosion,
    "fault_formation": FaultFormation,
    "flow_accumulation": FlowAccumulation,
    "gamma": Gamma,
    "graph_input": GraphInput,
    "graph_input_color": GraphInputColor,
    "graph_input_mask": GraphInputMask,
    "graph_input_scalar": GraphInputScalar,
    "grid_hydraulic_erosion": GridHydraulicErosion,
    "height_mask": HeightMask,
    "import": Import,
    "invert": Invert,
    "island_mask": IslandMask,
    "lakes": Lakes,
    "laplacian_smooth": LaplacianSmooth,
    "lerp": Lerp,
    "levels": Levels,
    "lim_tan_bhojan_erosion": LimTanBhojanErosion,
    "linear_gradient": LinearGradient,
    "mask_blur": MaskBlur,
    "mask_combine": MaskCombine,
    "mask_grow": MaskGrow,
    "noise": Noise,
    "normalize": Normalize,
    "perlin_fbm": PerlinFbm,
    "perturb": Perturb,
    "pipe_hydraulic_erosion": PipeHydraulicErosion,
    "quantize": Quantize,
    "radial_gradient": RadialGradient,
    "rivers": Rivers,
    "scalar_to_mask": ScalarToMask,
    "sea": Sea,
    "sediment_depth": SedimentDepth,
    "select": Select,
    "sharpen": Sharpen,
    "sky_view": SkyView,
    "slope_mask": SlopeMask,
    "slope_warp": SlopeWarp,
    "snow": Snow,
    "solid_color": SolidColor,
    "stream_power_erosion": StreamPowerErosion,
    "talus_mask": TalusMask,
    "terrace": Terrace,
    "thermal_erosion": ThermalErosion,
    "to_mask": ToMask,
    "worley": Worley,
}
"""Node type id → the ``TypedDict`` of its parameters."""
