"""Orogen from Python: load a terrain graph, change its parameters, build it into numpy arrays
or into the same files the ``orogen`` command writes.

    import orogen
    g = orogen.Graph.load("graphs/alpine_valley.json")
    g.set("orogeny.steps", 60)
    heights = g.build(size=1024)["height"]     # float32 metres, shape (1024, 1024)

Evaluations release the GIL (threads building different graphs run in parallel), report
progress through an optional callback, and stop on Ctrl-C with ``KeyboardInterrupt``. Every
engine error is an :class:`OrogenError` carrying the command line's message. Results are cached
per :class:`Graph`: building again after an edit recomputes only what the edit changed.
"""

from __future__ import annotations

import json
import warnings
from os import PathLike
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Literal,
    Optional,
    Sequence,
    Tuple,
    Union,
    cast,
)

import numpy as np
import numpy.typing as npt

from . import _orogen, nodes

OrogenError = _orogen.OrogenError
__version__: str = _orogen.__version__
"""The Orogen version this package was built from (the same as ``orogen --version``)."""

__all__ = [
    "Graph",
    "OrogenError",
    "Progress",
    "World",
    "__version__",
    "from_dem",
    "node_types",
    "nodes",
]


class Progress(float):
    """How far an evaluation or build has come, as a fraction in 0..1 (a ``float``: a callback
    written for plain fractions works unchanged), never going back; ``stage`` names the nodes
    running now (empty once done). The fraction is the nodes finished plus the fractions of
    those running, over the nodes the outputs need; it reaches 1.0 only when the work is done."""

    stage: str

    def __new__(cls, fraction: float, stage: str = "") -> "Progress":
        p = super().__new__(cls, fraction)
        p.stage = stage
        return p

    def __repr__(self) -> str:
        return f"Progress({float(self):.3f}, stage={self.stage!r})"


def _progress(
    callback: Optional[Callable[[Progress], None]],
) -> Optional[Callable[[float, str], None]]:
    if callback is None:
        return None
    call: Callable[[Progress], None] = callback

    def report(fraction: float, stage: str) -> None:
        call(Progress(fraction, stage))

    return report


class World:
    """The physical frame of a graph: a square ``size_m`` metres across, heights between
    ``height_min_m`` and ``height_max_m``; ``georef`` is where it lies on the Earth (a graph
    made by ``orogen new --from-dem``: ``{"crs": "EPSG:…" or None, "geographic": bool, "west",
    "south", "east", "north"}`` in the CRS's units), else None."""

    def __init__(
        self,
        size_m: float,
        height_min_m: float,
        height_max_m: float,
        georef: Optional[Dict[str, object]] = None,
    ):
        self.size_m = size_m
        self.height_min_m = height_min_m
        self.height_max_m = height_max_m
        self.georef = georef

    def cell_size_m(self, resolution: int) -> float:
        """Metres per sample at ``resolution`` samples per side."""
        return self.size_m / resolution

    def __repr__(self) -> str:
        return (
            f"World(size_m={self.size_m}, height_min_m={self.height_min_m}, "
            f"height_max_m={self.height_max_m}, georef={self.georef!r})"
        )


def _array(data: bytes, shape: Sequence[int]) -> "npt.NDArray[np.float32]":
    return np.frombuffer(data, dtype="<f4").reshape(tuple(shape)).copy()


class Graph:
    """An Orogen graph (a ``.json`` graph file, a ``.orogen`` bundle, or JSON text)."""

    def __init__(self, inner: "_orogen.Graph"):
        self._g = inner

    @staticmethod
    def load(path: Union[str, "PathLike[str]"]) -> "Graph":
        """Loads a graph file or a bundle; raises OrogenError naming every problem."""
        return Graph(_orogen.Graph.load(str(path)))

    @staticmethod
    def from_json(text: str, base_dir: Union[str, "PathLike[str]", None] = None) -> "Graph":
        """A graph from JSON text; ``base_dir`` stands for its file's folder (where subgraph
        files and imported images are found)."""
        return Graph(_orogen.Graph.from_json(text, None if base_dir is None else str(base_dir)))

    @property
    def name(self) -> str:
        """The graph's name (its file's, without the extension)."""
        return self._g.name

    @property
    def seed(self) -> int:
        """The graph seed (``build(seed=…)`` overrides it for one build)."""
        return self._g.seed

    @property
    def resolution(self) -> int:
        """Samples per side a build has when no size is given."""
        return self._g.resolution

    @property
    def world(self) -> World:
        """The graph's physical frame: size in metres, height range, place on the Earth."""
        return World(**json.loads(self._g.world_json()))

    @property
    def parameters(self) -> Dict[str, object]:
        """The graph parameters (exposed knobs) and their current values."""
        return cast(Dict[str, object], json.loads(self._g.parameters_json()))

    @property
    def outputs(self) -> Dict[str, str]:
        """The named outputs: name → ``node.port``."""
        return cast(Dict[str, str], json.loads(self._g.outputs_json()))

    def set_param(self, name: str, value: Any) -> None:
        """Sets graph parameter ``name``, checked against its declared range (as ``--param``)."""
        self._g.set_param_json(name, json.dumps(value))

    def set(self, key: str, value: Any) -> None:
        """Sets node parameter ``key`` (``"node.param"``), validated exactly as ``--set``."""
        self._g.set_json(key, json.dumps(value))

    def set_array(self, name: str, array: npt.ArrayLike) -> None:
        """Supplies a 2-D array (rows north to south, any real dtype, any size from 2×2) to the
        graph's ``array_input`` nodes named ``name``. They resample it bilinearly to the build
        resolution over the whole world, as ``import`` does with a file; NaN samples are no data,
        filled from the samples around them; ±inf is refused. The array is copied: changing it afterwards changes
        nothing until it is set again."""
        a = np.asarray(array)
        if a.ndim != 2:
            raise OrogenError(f"array {name!r}: shape {a.shape}; expected a 2-D array (rows, columns)")
        if not (np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)):
            raise OrogenError(f"array {name!r}: dtype {a.dtype}; expected real numbers")
        with np.errstate(over="ignore"):
            a = np.ascontiguousarray(a, dtype="<f4")
        infinite = np.argwhere(np.isinf(a))
        if len(infinite):
            row, col = (int(v) for v in infinite[0])
            raise OrogenError(
                f"array {name!r}: {len(infinite)} infinite value(s), the first at row {row}, "
                f"column {col} (or beyond float32's ±3.4e38); expected finite heights in "
                "metres (NaN marks no data)"
            )
        self._g.set_array_raw(name, a.tobytes(), a.shape[1], a.shape[0])

    def remove_array(self, name: str) -> bool:
        """Withdraws array ``name``; whether it had been supplied."""
        return self._g.remove_array(name)

    @property
    def arrays(self) -> List[str]:
        """The names of the arrays supplied with :meth:`set_array`."""
        return self._g.array_names()

    def _supply(self, arrays: Optional[Dict[str, npt.ArrayLike]]) -> None:
        for name, a in (arrays or {}).items():
            self.set_array(name, a)

    def build(
        self,
        size: Optional[int] = None,
        seed: Optional[int] = None,
        outputs: Optional[Iterable[str]] = None,
        progress: Optional[Callable[[Progress], None]] = None,
        arrays: Optional[Dict[str, npt.ArrayLike]] = None,
    ) -> Dict[str, "npt.NDArray[np.float32]"]:
        """Evaluates the named outputs (all, or ``outputs``) at ``size``² samples and returns
        them by name: float32 metres for heights, 0..1 for masks, H×W×3 linear RGB for
        colour, the port's unit for scalars. ``progress`` is called with a :class:`Progress` (a
        fraction in 0..1 that never goes back, with the running nodes' names as ``stage``).
        ``arrays`` (name → array) are supplied first, as :meth:`set_array` does."""
        self._supply(arrays)
        names = list(self.outputs) if outputs is None else list(outputs)
        raw = self._g.evaluate_raw(names, size, seed, _progress(progress))
        return {name: _array(data, shape) for name, data, shape in raw}

    def evaluate(
        self,
        port: str,
        size: Optional[int] = None,
        seed: Optional[int] = None,
        region: Optional[Sequence[int]] = None,
        progress: Optional[Callable[[Progress], None]] = None,
        arrays: Optional[Dict[str, npt.ArrayLike]] = None,
    ) -> "npt.NDArray[np.float32]":
        """One node output (``"node.port"``, ``"node"`` for its first output, or a named
        output) at ``size``². ``region`` = (x0, y0, width, height) in samples returns that part
        (the whole map is evaluated). ``arrays`` as in :meth:`build`."""
        self._supply(arrays)
        (_, data, shape), = self._g.evaluate_raw([port], size, seed, _progress(progress))
        a = _array(data, shape)
        if region is not None:
            x0, y0, w, h = region
            if w <= 0 or h <= 0:
                raise OrogenError(f"region {tuple(region)}: width and height must be at least 1")
            if x0 < 0 or y0 < 0 or x0 + w > a.shape[1] or y0 + h > a.shape[0]:
                raise OrogenError(
                    f"region {tuple(region)}: outside the {a.shape[1]}×{a.shape[0]} map"
                )
            a = a[y0 : y0 + h, x0 : x0 + w]
        return a

    def write(
        self,
        out_dir: Union[str, "PathLike[str]"],
        formats: Sequence[str] = ("png16",),
        size: Optional[int] = None,
        seed: Optional[int] = None,
        preview: bool = False,
        progress: Optional[Callable[[Progress], None]] = None,
        arrays: Optional[Dict[str, npt.ArrayLike]] = None,
        *,
        preset: Optional[Literal["unity", "unreal", "godot"]] = None,
        range: Optional[Literal["graph", "data"]] = None,
        normal_map: Optional[Literal[8, 16]] = None,
        normal_y: Optional[Literal["opengl", "directx"]] = None,
        mesh: Optional[Literal["obj", "glb"]] = None,
        mesh_step: int = 1,
        mesh_error_m: Optional[float] = None,
        splats: Optional[Dict[str, Sequence[str]]] = None,
        splat_normalize: bool = False,
        tiles: Optional[Tuple[int, int]] = None,
        tile_size: Optional[int] = None,
        stitch: Sequence[Literal["r16", "f32"]] = (),
    ) -> Dict[str, Any]:
        """Writes every named output into ``out_dir`` as ``orogen build`` does (the same bytes,
        atomically, with manifest.json), in ``formats`` (``png16``, ``tiff16``, ``geotiff``,
        ``exr``, ``r16``, ``f32``, ``png8``). Returns the manifest. ``arrays`` as in
        :meth:`build`. The keyword-only arguments are ``orogen build``'s other exports:
        ``preset`` (a game engine's size, format and numbers; overrides ``formats``),
        ``range`` (``"data"``: 16-bit formats over each output's own min…max),
        ``normal_map`` (8 or 16 bits, ``normal_y`` ``"opengl"`` or ``"directx"``), ``mesh``
        (``"obj"`` or ``"glb"``: every ``mesh_step``-th sample, or simplified to
        ``mesh_error_m`` metres), ``splats`` (file name → up to four mask outputs, packed as
        RGBA; ``splat_normalize`` makes their weights sum to 1). ``tiles`` ``(across, down)``
        or ``tile_size`` (samples) builds in tiles as ``orogen build --tiles`` does, into
        ``out_dir/tiles/`` with the plan beside them (run it again to resume), ``stitch``
        adding whole-map ``r16`` or ``f32`` files streamed from the tiles; progress is then
        by task, its stage the task's name (``s0.piece-3``, ``tile-5``)."""
        self._supply(arrays)
        extras = json.dumps(
            {
                "preset": preset,
                "range": range,
                "normal_map": normal_map,
                "normal_y": normal_y,
                "mesh": mesh,
                "mesh_step": mesh_step,
                "mesh_error_m": mesh_error_m,
                "splats": None if splats is None else {k: list(v) for k, v in splats.items()},
                "splat_normalize": splat_normalize,
                "tiles": None if tiles is None else list(tiles),
                "tile_size": tile_size,
                "stitch": list(stitch),
            }
        )
        return cast(
            Dict[str, Any],
            json.loads(
                self._g.write(
                    str(out_dir), list(formats), size, seed, preview, _progress(progress), extras
                )
            ),
        )

    def __repr__(self) -> str:
        return f"<orogen.Graph {self.name!r}: {len(self.outputs)} outputs>"


def from_dem(
    dem: Union[str, "PathLike[str]"],
    graph: Union[str, "PathLike[str]", None] = None,
    resolution: Optional[int] = None,
) -> Graph:
    """A graph whose world is a GeoTIFF DEM's, as ``orogen new --from-dem`` makes it: the
    world's size, height range and place on the Earth are the DEM's, and one ``import`` node
    (output ``height``) reads it, at ``resolution`` samples per side (default: the DEM's longer
    side). With ``graph`` the graph file is written there (the DEM must lie inside its folder)
    and loaded from it; without, the graph belongs in the DEM's folder and nothing is written.
    A DEM whose ground is not square gives a ``UserWarning`` saying how much import stretches
    it and the GDAL command that keeps its shape."""
    text, note, folder = _orogen.from_dem(
        str(dem), None if graph is None else str(graph), resolution
    )
    if note is not None:
        warnings.warn(note, stacklevel=2)
    if graph is not None:
        return Graph.load(graph)
    return Graph.from_json(text, base_dir=folder)


def node_types() -> List[Dict[str, Any]]:
    """Every node type with its ports and parameters (``orogen nodes --json``)."""
    return cast(List[Dict[str, Any]], json.loads(_orogen.catalogue_json()))
