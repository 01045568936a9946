"""Writes docs/python.md, the Python API reference, from the package's own docstrings and
signatures (``python3 python/tools/api_page.py``); the package's tests check that the page
is current, so it cannot go stale.

Run with ``PYTHONPATH=python`` and the extension module built (scripts/python-tests.sh does).
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path
from typing import Any, List

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "python.md"

HEADER = """# Python API

The `orogen` package (`pip install ./python`; see the README's *From Python*). This page is
generated from the package's docstrings by `python/tools/api_page.py`; the package's tests
fail when it is out of date. The node types and their parameters are in
[nodes.md](nodes.md) (also `orogen.node_types()` and the typed `orogen.nodes` module).

**A wheel to install without Rust**: `scripts/wheel-check.sh` builds
`target/wheels/orogen-0.1.0-cp38-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl` (2.9 MB;
maturin linked by zig against glibc 2.17: any x86-64 Linux since 2014, CPython ≥ 3.8; about
6 minutes on 2 cores), installs it into a fresh venv
with no Rust on PATH and builds the flagship from it. Its output (Intel Xeon, 2026-11-28):
`orogen 0.1.0 from the wheel: the flagship at 256² in 0.6 s, 12 outputs, heights
bit-identical to the command line's`. Hand the `.whl` on; `pip install` it anywhere.
"""


def _doc(obj: Any) -> str:
    text = inspect.getdoc(obj) or ""
    return text.strip()


def _annotation(a: Any) -> str:
    """The annotation as written, without the quotes of forward references ("Graph",
    "PathLike[str]"); a Literal's strings keep theirs."""
    text = a if isinstance(a, str) else inspect.formatannotation(a)
    return re.sub(r"""["']((?:[A-Z]|npt\.)[\w.]*(?:\[[^\]"']*\])?)["']""", r"\1", text)


def _signature(name: str, obj: Any, drop_first: bool = False) -> str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return name
    params = list(sig.parameters.values())
    if drop_first or (params and params[0].name in ("self", "cls")):
        params = params[1:]
    parts = []
    for p in params:
        text = p.name
        if p.annotation is not inspect.Parameter.empty:
            text += f": {_annotation(p.annotation)}"
        if p.default is not inspect.Parameter.empty:
            text += f" = {p.default!r}"
        parts.append(text)
    ret = ""
    if sig.return_annotation is not inspect.Signature.empty:
        ret = f" -> {_annotation(sig.return_annotation)}"
    return f"{name}({', '.join(parts)}){ret}"


def _members(cls: type) -> List[str]:
    out: List[str] = []
    for name, member in cls.__dict__.items():
        if name.startswith("_"):
            continue
        if isinstance(member, staticmethod):
            fn = member.__func__
            out.append(f"#### `{cls.__name__}.{_signature(name, fn)}` (static)\n\n{_doc(fn)}\n")
        elif isinstance(member, property):
            out.append(f"#### `{cls.__name__}.{name}` (property)\n\n{_doc(member)}\n")
        elif inspect.isfunction(member):
            out.append(f"#### `{cls.__name__}.{_signature(name, member)}`\n\n{_doc(member)}\n")
    return out


def page() -> str:
    import orogen

    parts = [HEADER, f"## Module `orogen`\n\n{_doc(orogen)}\n"]
    for name in orogen.__all__:
        obj = getattr(orogen, name)
        if name == "__version__":
            parts.append("### `orogen.__version__`\n\nThe package's version, as `orogen --version`.\n")
        elif name == "nodes":
            parts.append(f"### Module `orogen.nodes`\n\n{_doc(obj).splitlines()[0] if _doc(obj) else ''}\n")
        elif inspect.isclass(obj):
            parts.append(f"### Class `orogen.{name}`\n\n{_doc(obj)}\n")
            if obj.__module__ == "orogen":
                # Graphs come from Graph.load and Graph.from_json, not their constructor.
                init = obj.__dict__.get("__init__") or obj.__dict__.get("__new__")
                if isinstance(init, staticmethod):
                    init = init.__func__
                if name != "Graph" and init is not None and inspect.isfunction(init):
                    parts.append(f"`orogen.{_signature(name, init)}`\n")
                parts.extend(_members(obj))
        elif callable(obj):
            parts.append(f"### `orogen.{_signature(name, obj)}`\n\n{_doc(obj)}\n")
    return "\n".join(parts).rstrip() + "\n"


if __name__ == "__main__":
    text = page()
    if "--check" in sys.argv:
        sys.exit(0 if PAGE.read_text() == text else 1)
    PAGE.write_text(text)
    print(f"wrote {PAGE}")
