"""The Python package against the command line: the same bytes, the same messages."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import orogen

REPO = Path(__file__).resolve().parents[2]
BIN = os.environ.get("OROGEN_BIN", str(REPO / "target" / "debug" / "orogen"))
ALPS = REPO / "graphs" / "alps.json"


def cli(*args, cwd=None):
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, cwd=cwd)


def test_load_set_build_equals_the_command_lines_f32(tmp_path):
    g = orogen.Graph.load(ALPS)
    node = next(n for n in json.loads(ALPS.read_text())["nodes"] if n["type"] == "noise")
    g.set(f"{node['id']}.octaves", 5)
    arrays = g.build(size=96, seed=7)
    r = cli("build", ALPS, "--set", f"{node['id']}.octaves=5", "--seed", 7, "--size", 96,
            "--format", "f32", "--no-preview", "--no-cache", "-o", tmp_path)
    assert r.returncode == 0, r.stderr
    assert set(arrays) == set(g.outputs)
    for name, a in arrays.items():
        want = (tmp_path / f"{name}.f32").read_bytes()
        assert a.dtype == np.float32
        assert a.shape[:2] == (96, 96)
        assert a.tobytes() == want, name


def test_write_gives_the_command_lines_files(tmp_path):
    g = orogen.Graph.load(ALPS)
    manifest = g.write(tmp_path / "py", formats=["png16", "f32"], size=64)
    r = cli("build", ALPS, "--size", 64, "--format", "png16,f32", "--no-preview", "--no-cache",
            "-o", tmp_path / "cli")
    assert r.returncode == 0, r.stderr
    for out in manifest["outputs"]:
        for ext in ("png", "f32"):
            name = f"{out['name']}.{ext}"
            assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()


def test_write_in_tiles_gives_the_command_lines_tiles_and_the_whole_maps_bits(tmp_path):
    g = orogen.Graph.load(ALPS)
    seen = []
    manifest = g.write(tmp_path / "py", formats=["png16"], size=96, tiles=(3, 3),
                       stitch=["f32"], progress=seen.append)
    r = cli("build", ALPS, "--size", 96, "--format", "png16", "--tiles", "3x3", "--stitch",
            "f32", "--no-cache", "-o", tmp_path / "cli")
    assert r.returncode == 0, r.stderr
    tiles = sorted(p.name for p in (tmp_path / "cli" / "tiles").iterdir())
    assert len(tiles) == 9 * len(manifest["outputs"]), tiles
    assert sorted(p.name for p in (tmp_path / "py" / "tiles").iterdir()) == tiles
    for name in tiles:
        assert (tmp_path / "py" / "tiles" / name).read_bytes() == (
            tmp_path / "cli" / "tiles" / name).read_bytes(), name
    # A graph of local nodes: the stitched tiles are the whole map's bits.
    whole = g.build(size=96)
    for out in manifest["outputs"]:
        stitched = np.fromfile(tmp_path / "py" / f"{out['name']}.f32", dtype="<f4")
        assert np.array_equal(stitched.reshape(96, 96), whole[out["name"]]), out["name"]
    assert all(a <= b for a, b in zip(seen, seen[1:])) and seen[-1] == 1.0
    assert {"tile-0", "tile-8"} <= {p.stage for p in seen}, {p.stage for p in seen}
    for kwargs, message in [
        ({"tiles": (2, 2), "tile_size": 64}, "tiles and tile_size are alternatives"),
        ({"stitch": ["f32"]}, "stitch needs tiles=(across, down) or tile_size"),
        ({"tiles": (0, 2)}, "tiles=0: expected a whole number in [1, 4096]"),
        ({"tiles": (2, 2), "stitch": ["jpeg"]}, "stitch: "),
    ]:
        with pytest.raises(orogen.OrogenError) as e:
            g.write(tmp_path / "bad", size=96, **kwargs)
        assert message in str(e.value), str(e.value)
    fed = orogen.Graph.from_json(json.dumps(ARRAY_GRAPH))
    with pytest.raises(orogen.OrogenError) as e:
        fed.write(tmp_path / "fed", size=64, tiles=(2, 2),
                  arrays={"dem": np.zeros((64, 64))})
    assert 'node "dem" reads an array' in str(e.value)


def test_write_gives_the_command_lines_meshes_normal_and_splat_maps(tmp_path):
    flagship = REPO / "graphs" / "alpine_valley.json"
    g = orogen.Graph.load(flagship)
    manifest = g.write(tmp_path / "py", formats=["f32"], size=96, normal_map=16,
                       normal_y="directx", mesh="glb", mesh_error_m=2.0,
                       splats={"ground": ["snow", "scree", "lakes"]}, splat_normalize=True)
    r = cli("build", flagship, "--size", 96, "--format", "f32", "--no-preview", "--no-cache",
            "--normal-map", "--normal-bits", 16, "--normal-y", "directx", "--mesh", "glb",
            "--mesh-error-m", 2.0, "--splat", "ground=snow,scree,lakes", "--splat-normalize",
            "-o", tmp_path / "cli")
    assert r.returncode == 0, r.stderr
    py = sorted(p.name for p in (tmp_path / "py").iterdir())
    assert py == sorted(p.name for p in (tmp_path / "cli").iterdir())
    assert "height.glb" in py and "height.normal.png" in py and "ground.splat.png" in py, py
    for name in py:
        if name != "manifest.json":
            assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    assert manifest["outputs"]
    # A preset: Unity's 2^n + 1 samples, RAW16.
    m = g.write(tmp_path / "unity", size=96, preset="unity")
    assert any(f.endswith(".raw") for o in m["outputs"] for f in o.get("files", [])) or any(
        p.suffix == ".raw" for p in (tmp_path / "unity").iterdir()
    ), m
    with pytest.raises(orogen.OrogenError, match="mesh_error_m needs mesh"):
        g.write(tmp_path / "bad", mesh_error_m=1.0)
    with pytest.raises(orogen.OrogenError, match="normal_map=12: expected 8 or 16"):
        g.write(tmp_path / "bad", normal_map=12)  # type: ignore[arg-type]
    with pytest.raises(orogen.OrogenError, match='preset: "unit" is not one of'):
        g.write(tmp_path / "bad", preset="unit")  # type: ignore[arg-type]


def test_errors_raise_with_the_command_lines_message(tmp_path):
    g = orogen.Graph.load(ALPS)
    node = next(n["id"] for n in json.loads(ALPS.read_text())["nodes"] if n["type"] == "noise")
    with pytest.raises(orogen.OrogenError) as e:
        g.set(f"{node}.octave", 4)
    r = cli("build", ALPS, "--set", f"{node}.octave=4", "-o", tmp_path)
    assert r.returncode == 2
    # The CLI prints the same diagnostics.
    assert str(e.value).strip() in r.stderr
    assert 'did you mean "octaves"' in str(e.value)
    # The failed change left the graph as it was.
    assert g.build(size=16)
    with pytest.raises(orogen.OrogenError, match="cannot read file"):
        orogen.Graph.load(tmp_path / "missing.json")
    with pytest.raises(orogen.OrogenError, match="not a named output"):
        g.evaluate("nope.out", size=16)


def _load_in_a_worker(path):
    orogen.Graph.load(path)


def test_a_failure_in_a_process_pool_worker_reaches_the_caller_whole():
    """The pattern contact_sheet.py uses: the worker's OrogenError arrives in the parent as
    an OrogenError with its message (it once arrived as a PicklingError)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1) as pool:
        future = pool.submit(_load_in_a_worker, str(REPO / "no-such-graph.json"))
        with pytest.raises(orogen.OrogenError, match="no-such-graph.json"):
            future.result(timeout=120)


def test_an_error_pickles_whole_and_the_version_is_the_command_lines():
    # A failure in a worker process (ProcessPoolExecutor) reaches the parent by pickle.
    import pickle

    with pytest.raises(orogen.OrogenError) as e:
        orogen.Graph.load(REPO / "no-such-graph.json")
    back = pickle.loads(pickle.dumps(e.value))
    assert type(back) is orogen.OrogenError
    assert str(back) == str(e.value) and "no-such-graph.json" in str(back)
    assert cli("--version").stdout.split() == ["orogen", orogen.__version__]
    # Bad sizes and regions are OrogenErrors that say what is allowed.
    g = orogen.Graph.load(ALPS)
    with pytest.raises(orogen.OrogenError, match=r"size -1: expected a resolution in \[2, "):
        g.build(size=-1)
    with pytest.raises(orogen.OrogenError, match=r"size 9999999999: expected"):
        g.evaluate("height", size=9999999999)
    with pytest.raises(orogen.OrogenError, match="width and height must be at least 1"):
        g.evaluate("height", size=16, region=(8, 0, -3, 4))


def test_graph_parameters_and_world():
    g = orogen.Graph.load(REPO / "graphs" / "coast_range.json")
    assert g.parameters == {"sea_level_m": 420.0}
    g.set_param("sea_level_m", 300)
    assert g.parameters == {"sea_level_m": 300.0}
    low = g.build(size=64)["height"]
    with pytest.raises(orogen.OrogenError, match="sea_level_m") as e:
        g.set_param("sea_level_m", 5000)
    r = cli("build", REPO / "graphs" / "coast_range.json", "--param", "sea_level_m=5000")
    assert r.returncode == 2 and str(e.value).strip() in r.stderr
    # The refused value left the graph as it was.
    assert g.parameters == {"sea_level_m": 300.0}
    assert np.array_equal(g.build(size=64)["height"], low)
    w = g.world
    assert w.size_m > 0 and w.height_max_m > w.height_min_m and w.georef is None
    placed = dict(ARRAY_GRAPH)
    bounds = {"west": 500000.0, "south": 4100000.0, "east": 504000.0, "north": 4104000.0}
    placed["world"] = dict(ARRAY_GRAPH["world"], georef=dict(bounds, crs="EPSG:32633"))
    w = orogen.Graph.from_json(json.dumps(placed)).world
    assert w.georef == dict(bounds, crs="EPSG:32633", geographic=False)


def test_evaluate_a_port_and_a_region():
    g = orogen.Graph.load(ALPS)
    whole = g.build(size=64)
    name, port = next(iter(g.outputs.items()))
    a = g.evaluate(port, size=64)
    assert np.array_equal(a, whole[name])
    part = g.evaluate(port, size=64, region=(8, 16, 20, 10))
    assert np.array_equal(part, a[16:26, 8:28])


ARRAY_GRAPH = {
    "format": "orogen-graph",
    "version": 2,
    "name": "array fed",
    "world": {"size_m": 4000.0, "height_min_m": 0.0, "height_max_m": 1000.0},
    "resolution": 64,
    "nodes": [
        {"id": "dem", "type": "array_input", "params": {"name": "dem"}},
        {"id": "rel", "type": "array_input", "params": {"name": "dem", "values": "relative"}},
        {"id": "scree", "type": "thermal_erosion", "inputs": {"in": "dem.out"}},
    ],
    "outputs": {"height": "dem.out", "relative": "rel.out", "eroded": "scree.out"},
}


def test_arrays_in_and_out(tmp_path):
    g = orogen.Graph.from_json(json.dumps(ARRAY_GRAPH))
    rng = np.random.default_rng(3)
    dem = (rng.random((64, 64)) * 900.0 + 50.0).astype(np.float64)
    with pytest.raises(orogen.OrogenError) as e:
        g.build(size=64)
    message = (
        'no array named "dem" was supplied (none were); arrays are given from Python with '
        "Graph.set_array or build(arrays=…)"
    )
    assert message in str(e.value)
    (tmp_path / "g.json").write_text(json.dumps(ARRAY_GRAPH))
    r = cli("build", tmp_path / "g.json", "--no-cache", "-o", tmp_path / "out")
    assert r.returncode != 0 and message in r.stderr, r.stderr
    # At the array's own size the output is the array (in metres, or spread over the range).
    out = g.build(size=64, arrays={"dem": dem})
    assert g.arrays == ["dem"]
    assert np.array_equal(out["height"], dem.astype(np.float32))
    rel = np.clip(dem / 1000.0, 0, 1).astype(np.float32)
    g.set_array("dem", rel)
    assert np.allclose(g.build(size=64, outputs=["relative"])["relative"], rel * 1000.0, atol=1e-3)
    # Bigger: bilinear, as `import` resamples (cell centres on the array's cell centres).
    g.set_array("dem", dem)
    big = g.build(size=128)["height"]
    assert np.allclose(big[1:-1:2, 1:-1:2], 0.75 * 0.75 * dem[:-1, :-1] + 0.75 * 0.25 * (
        dem[1:, :-1] + dem[:-1, 1:]) + 0.25 * 0.25 * dem[1:, 1:], atol=1e-3)
    # The result follows the array's content (the cache key holds its hash), and erosion runs on it.
    first = g.build(size=64)["eroded"]
    assert not np.array_equal(first, dem.astype(np.float32))
    g.set_array("dem", dem[::-1])
    assert not np.array_equal(g.build(size=64)["eroded"], first)
    g.set_array("dem", dem)
    assert np.array_equal(g.build(size=64)["eroded"], first)
    # NaN is no data, filled from around; shapes and kinds are checked.
    holed = dem.copy()
    holed[10:12, 10:12] = np.nan
    filled = g.build(size=64, arrays={"dem": holed})["height"]
    assert np.isfinite(filled).all() and np.array_equal(filled[20:], dem[20:].astype(np.float32))
    assert dem[8:14, 8:14].min() <= filled[10:12, 10:12].min() <= filled[10:12, 10:12].max() <= dem[8:14, 8:14].max()
    with pytest.raises(orogen.OrogenError, match="expected a 2-D array"):
        g.set_array("dem", np.zeros((4, 4, 3)))
    # ±inf is not "no data": refused, with where.
    spiked = dem.copy()
    spiked[3, 5] = -np.inf
    with pytest.raises(orogen.OrogenError, match="1 infinite value.*row 3, column 5"):
        g.set_array("dem", spiked)
    with pytest.raises(orogen.OrogenError, match="infinite value"):
        g.set_array("dem", np.full((4, 4), 1e300))
    with pytest.raises(orogen.OrogenError, match="expected 2 to"):
        g.set_array("dem", np.zeros((1, 4)))
    assert g.remove_array("dem") and g.arrays == []


def test_progress_is_one_monotone_fraction_with_stage_names(tmp_path):
    g = orogen.Graph.load(REPO / "graphs" / "droplets.json")
    seen = []
    g.build(size=256, progress=seen.append)
    assert seen and all(0.0 <= f <= 1.0 for f in seen)
    assert all(a <= b for a, b in zip(seen, seen[1:])), "never goes back"
    assert seen[-1] == 1.0 and all(f < 1.0 for f in seen[:-1]), "1.0 once, at the end"
    assert isinstance(seen[0], orogen.Progress) and isinstance(seen[0], float)
    stages = {p.stage for p in seen}
    assert "rain" in stages, stages
    # A build with exports (evaluations, previews, files): still one monotone progress.
    flagship = orogen.Graph.load(REPO / "graphs" / "alpine_valley.json")
    seen = []
    flagship.write(tmp_path / "out", size=128, preview=True, progress=seen.append)
    assert all(a <= b for a, b in zip(seen, seen[1:])), seen
    assert seen[-1] == 1.0
    assert {"rain", "scree"} <= {n for p in seen for n in p.stage.split(", ")}, "named stages"


def test_ctrl_c_stops_a_build_within_a_second_and_writes_nothing(tmp_path):
    g = orogen.Graph.load(REPO / "graphs" / "alpine_valley.json")
    out = tmp_path / "out"
    fired = []
    # A process started in the background by a non-interactive shell inherits SIGINT ignored,
    # and Python then never raises KeyboardInterrupt: restore Python's own handler.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    def interrupt():
        fired.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Timer(0.5, interrupt).start()
    with pytest.raises(KeyboardInterrupt):
        g.write(out, formats=["f32"], size=2048)
    signal.signal(signal.SIGINT, previous)
    assert fired and time.monotonic() - fired[0] < 1.0
    assert not out.exists() or not any(out.iterdir())


def test_the_gil_is_released_while_building():
    g1 = orogen.Graph.load(REPO / "graphs" / "droplets.json")
    g2 = orogen.Graph.load(REPO / "graphs" / "olsen2004.json")
    ticks = [0]
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    results = {}
    threads = [
        threading.Thread(target=lambda: results.update(a=g1.build(size=256))),
        threading.Thread(target=lambda: results.update(b=g2.build(size=256))),
    ]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    done.set()
    counter.join()
    assert set(results) == {"a", "b"}
    # Python ran alongside the builds (about one tick a millisecond).
    assert ticks[0] > 0.3 * elapsed * 1000, (ticks[0], elapsed)


def test_a_bundle_loads(tmp_path):
    bundle = tmp_path / "alps.orogen"
    r = cli("pack", ALPS, "-o", bundle)
    assert r.returncode == 0, r.stderr
    g = orogen.Graph.load(bundle)
    a = g.build(size=32)
    b = orogen.Graph.load(ALPS).build(size=32)
    assert all(np.array_equal(a[k], b[k]) for k in b)


def test_node_types_list_the_catalogue():
    types = orogen.node_types()
    ids = {t["id"] for t in types}
    assert {"noise", "droplet_erosion", "import", "array_input"} <= ids


def test_the_typed_node_module_matches_the_catalogue():
    import typing

    from orogen import nodes

    catalogue = {t["id"]: t for t in orogen.node_types()}
    assert set(nodes.PARAMS) == set(catalogue) == set(typing.get_args(nodes.NodeType))
    kinds = {"float": float, "int": int, "seed": int, "bool": bool, "text": str}
    for node_id, cls in nodes.PARAMS.items():
        hints = typing.get_type_hints(cls)
        params = catalogue[node_id]["params"]
        assert list(hints) == [p["name"] for p in params], node_id
        assert catalogue[node_id]["label"] in cls.__doc__
        for p in params:
            want = kinds.get(p["kind"])
            if want is None:
                assert typing.get_args(hints[p["name"]]) == tuple(p["options"]), (node_id, p)
            else:
                assert hints[p["name"]] is want, (node_id, p)
    # A TypedDict's values set on a graph are accepted by Graph.set.
    g = orogen.Graph.load(REPO / "graphs" / "coast_range.json")
    scree: nodes.ThermalErosion = {"talus_deg": 30.0, "variant": "olsen", "iterations": 20}
    for name, value in scree.items():
        g.set(f"scree.{name}", value)


TYPED_USE = """
import orogen
from orogen.nodes import ThermalErosion

g = orogen.Graph.load("graphs/coast_range.json")
ok: ThermalErosion = {"talus_deg": 32.0, "variant": "olsen"}
bad: ThermalErosion = {"talus_deg": "steep", "variant": "sideways"}
g.set_array("dem", g.build(size=64)["height"] * 0.5)
g.build(size="big")
"""


def test_the_package_type_checks_and_its_types_catch_mistakes(tmp_path):
    pytest.importorskip("mypy", reason="mypy checks the typed package (apt install python3-mypy)")
    env = dict(os.environ, MYPYPATH=str(REPO / "python"))
    mypy = [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "c")]
    r = subprocess.run([*mypy, "--strict", str(REPO / "python" / "orogen")],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    (tmp_path / "use.py").write_text(TYPED_USE)
    r = subprocess.run([*mypy, str(tmp_path / "use.py")], capture_output=True, text=True, env=env)
    errors = [line for line in r.stdout.splitlines() if ": error:" in line]
    assert [e.split(":")[1] for e in errors] == ["7", "7", "9"], r.stdout
    assert 'TypedDict item "talus_deg" has type "float"' in errors[0]
    assert "\"size\" to \"build\"" in errors[2]


def test_the_readmes_python_snippet_runs(tmp_path, monkeypatch):
    readme = (REPO / "README.md").read_text()
    section = readme.split("## From Python", 1)[1]
    blocks = [b.split("```", 1)[0] for b in section.split("\n## ", 1)[0].split("```python")[1:]]
    assert len(blocks) == 2
    # Paths in the snippets are relative to the repository; outputs go to a temporary folder.
    monkeypatch.chdir(REPO)
    code = "\n".join(blocks).replace('"out/coast"', repr(str(tmp_path / "coast")))
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    eroded, dome = scope["eroded"], scope["dome"]
    assert eroded.shape == (256, 256) and eroded.dtype == np.float32
    assert 0 < eroded.max() <= dome.max() and np.abs(eroded - eroded.mean()).max() > 100
    assert (tmp_path / "coast" / "height.geo.tif").exists()
    assert (tmp_path / "coast" / "manifest.json").exists()


def test_the_contact_sheet_example_builds_variants_in_processes(tmp_path):
    out = tmp_path / "sheet.png"
    r = subprocess.run(
        [sys.executable, str(REPO / "python" / "examples" / "contact_sheet.py"),
         str(REPO / "graphs" / "coast_range.json"), "--set", "scree.talus_deg=28,40",
         "--seeds", "1", "2", "--size", "48", "--jobs", "2", "-o", str(out)],
        capture_output=True, text=True, env={**os.environ},
    )
    assert r.returncode == 0, r.stderr
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (w, h) == (2 * 48 + 4, 2 * 48 + 4)


def test_the_api_page_is_current():
    """docs/python.md is what python/tools/api_page.py makes of the docstrings now
    (regenerate: PYTHONPATH=python python3 python/tools/api_page.py)."""
    sys.path.insert(0, str(REPO / "python" / "tools"))
    try:
        import api_page
    finally:
        sys.path.pop(0)
    assert (REPO / "docs" / "python.md").read_text() == api_page.page(), (
        "docs/python.md is stale: PYTHONPATH=python python3 python/tools/api_page.py"
    )


def test_from_dem_makes_the_command_lines_graph(tmp_path):
    """orogen.from_dem writes the graph ``orogen new --from-dem`` writes, byte for byte, and
    builds it; without a graph path nothing is written; a DEM that is not square warns."""
    dem = tmp_path / "ns.tif"
    r = subprocess.run(
        ["gdal_create", "-q", "-outsize", "60", "50", "-ot", "Float32", "-burn", "250",
         "-a_srs", "EPSG:32633", "-a_ullr", "500000", "5000000", "500600", "4999500", str(dem)],
        capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    with pytest.warns(UserWarning, match="gdal_translate -srcwin 5 0 50 50"):
        g = orogen.from_dem(dem, tmp_path / "py.json")
    r = cli("new", "--from-dem", dem, "-o", tmp_path / "cli.json")
    assert r.returncode == 0, r.stderr
    py = json.loads((tmp_path / "py.json").read_text())
    want = json.loads((tmp_path / "cli.json").read_text())
    assert py == want
    assert g.world.size_m == 600.0 and g.resolution == 60
    assert g.build(size=32)["height"].mean() == pytest.approx(250.0, abs=1.0)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.warns(UserWarning):
        g2 = orogen.from_dem(dem, resolution=40)
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "nothing written"
    assert g2.resolution == 40
    with pytest.raises(orogen.OrogenError, match="not a GeoTIFF DEM"):
        orogen.from_dem(tmp_path / "py.json")
