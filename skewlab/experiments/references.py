"""The reference results shipped with skewlab: one full-size run per benchmark, with where,
when and by which code it was measured.

A quick report is small and live: it shows each lesson's *direction* on the reader's machine.
The reference (``skewlab/references/<benchmark>.json``, written by
``skewlab bench BENCHMARK --size full --save-reference``) shows its *size*. Each reference holds
the run's summary and rows (rows left out above :data:`MAX_ROWS_BYTES`) and its provenance:

- ``machine`` (:func:`~skewlab.experiments.machine.this_machine`), ``measured_at`` (UTC),
  ``skewlab_version``, ``commit`` (the checkout's ``git`` commit, ``None`` outside one, with
  ``dirty``: whether the timed code differed from that commit);
- ``code_fingerprint``: a hash of the source of every module whose code runs inside the
  benchmark's timed regions (:func:`timed_modules`: the experiment module and every module of
  the engine, state, operators, strategies, inputs, aggregates and iomodel packages, and every
  other experiment module, it reaches through imports; compiled cores by their ``.pyx``
  source) and of the size's settings.

:func:`reference_status` compares a reference's fingerprint with the running code's: a reference
measured by other code says so ("reference predates a change to the timed code: re-measure")
wherever it is shown (``skewlab bench compare``, the notebooks).

Example::

    >>> "skewlab/operators/count_loops_compiled.pyx" in timed_modules("value_state")
    True
    >>> any(m.startswith("skewlab/viz") for m in timed_modules("state_cache"))
    False
    >>> len(code_fingerprint("value_state")) == 16
    True
"""

from __future__ import annotations

import ast
import hashlib
import json
import subprocess
import time
from functools import cache
from pathlib import Path
from typing import Any

from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import benchmark, size_settings
from skewlab.experiments.machine import this_machine
from skewlab.experiments.results import json_default

__all__ = [
    "MAX_ROWS_BYTES",
    "REFERENCE_SIZE",
    "check_reference_size",
    "code_fingerprint",
    "load_reference",
    "reference_path",
    "reference_status",
    "references_dir",
    "save_reference",
    "timed_modules",
]

#: The size a reference is measured at: the seeds' own.
REFERENCE_SIZE = "full"
#: A reference's rows are shipped only up to this many bytes of JSON (its summary always is):
#: room for buffering's full grid in rounds (about 210 KB), which its claims and chart read.
MAX_ROWS_BYTES = 256_000
#: The packages whose code runs inside a benchmark's timed regions.
TIMED_PACKAGES = (
    "skewlab.engine",
    "skewlab.state",
    "skewlab.operators",
    "skewlab.strategies",
    "skewlab.inputs",
    "skewlab.aggregates",
    "skewlab.iomodel",
)
_PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # .../skewlab
STALE = "reference predates a change to the timed code: re-measure"


def references_dir() -> Path:
    """``skewlab/references/``: the shipped reference results (package data)."""
    return _PACKAGE_ROOT / "references"


def reference_path(name: str, directory: Path | None = None) -> Path:
    """The reference file of benchmark ``name`` (under ``directory``, default
    :func:`references_dir`)."""
    return (Path(directory) if directory else references_dir()) / f"{benchmark(name).id}.json"


def check_reference_size(size: str) -> None:
    """Refuse a reference at any size but :data:`REFERENCE_SIZE`, before any work starts.

    Example::

        >>> check_reference_size("quick")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: --save-reference needs --size full: a reference is measured at the seeds' sizes, not --size quick
    """  # noqa: E501
    if size != REFERENCE_SIZE:
        raise SkewlabInputError(
            f"--save-reference needs --size {REFERENCE_SIZE}: a reference is measured at the "
            f"seeds' sizes, not --size {size}"
        )


def _module_file(module: str) -> Path | None:
    parts = module.split(".")[1:]
    base = _PACKAGE_ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@cache
def _imports(module: str, path: Path) -> frozenset[str]:
    """The ``skewlab.*`` modules ``path`` imports (absolute and relative, any depth); read once
    per process, as :func:`timed_modules` is (the benchmarks' import graphs share most of
    their modules)."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    return frozenset(m for m in found if m.startswith("skewlab.") and _module_file(m))


#: The experiment modules that only keep books (registry, result files, machines, references,
#: the intervals a summary computes after the runs):
#: any other experiment module a benchmark imports runs inside its timed regions.
_BOOKKEEPING = {
    f"skewlab.experiments.{m}"
    for m in ("chapters", "results", "machine", "headlines", "references", "claims", "intervals")
}


#: The skew doctor's modules that only present (any other one a benchmark imports -- the replay,
#: the remedies' model, the cost profile -- runs inside its timed regions).
_DOCTOR_PRESENTATION = {"skewlab.doctor", "skewlab.doctor.viz"}


def _timed(module: str) -> bool:
    if module.startswith("skewlab.experiments."):
        return module not in _BOOKKEEPING
    if module.startswith("skewlab.doctor."):
        return module not in _DOCTOR_PRESENTATION
    return any(module == p or module.startswith(p + ".") for p in TIMED_PACKAGES)


@cache
def timed_modules(name: str) -> tuple[str, ...]:
    """The source files (relative to the checkout) whose code runs inside benchmark ``name``'s
    timed regions: its experiment module and what it reaches in :data:`TIMED_PACKAGES`."""
    start = benchmark(name).module
    seen, todo = {start}, [start]
    while todo:
        module = todo.pop()
        for imported in _imports(module, _module_file(module)):
            if imported not in seen and _timed(imported):
                seen.add(imported)
                todo.append(imported)
    files = set()
    for module in seen:
        path = _module_file(module)
        files.add(path)
        compiled = path.with_name(path.stem + "_compiled.pyx")
        if compiled.is_file():
            files.add(compiled)
    return tuple(sorted(str(p.relative_to(_PACKAGE_ROOT.parent)) for p in files))


@cache
def code_fingerprint(name: str, size: str = REFERENCE_SIZE) -> str:
    """A 16-hex-digit hash of benchmark ``name``'s timed source files and its size settings."""
    digest = hashlib.sha256()
    for rel in timed_modules(name):
        digest.update(rel.encode() + b"\0" + (_PACKAGE_ROOT.parent / rel).read_bytes() + b"\0")
    settings = json.dumps(size_settings(name, size), sort_keys=True, default=list)
    digest.update(settings.encode())
    return digest.hexdigest()[:16]


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=_PACKAGE_ROOT.parent, capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _version() -> str | None:
    """The installed skewlab's version (from its package metadata)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("skewlab")
    except PackageNotFoundError:
        return None


def provenance(name: str, size: str = REFERENCE_SIZE) -> dict[str, Any]:
    """Where, when and by which code a run of benchmark ``name`` is being measured."""
    commit = _git("rev-parse", "HEAD")
    dirty = None
    if commit is not None:
        dirty = bool(_git("status", "--porcelain", "--", *timed_modules(name)))
    return {
        "machine": this_machine(),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "skewlab_version": _version(),
        "commit": commit,
        "dirty": dirty,
        "code_fingerprint": code_fingerprint(name, size),
        "timed_modules": list(timed_modules(name)),
    }


def save_reference(result: Any, directory: Path | None = None) -> Path:
    """Write ``result`` (a full-size :class:`~skewlab.experiments.results.BenchResult`) as its
    benchmark's reference; its rows are kept when their JSON is at most :data:`MAX_ROWS_BYTES`.

    The provenance is taken now, so call it right after the run, from the checkout that ran it.
    """
    check_reference_size(result.size)
    bench = benchmark(result.experiment)
    rows = json.dumps(result.rows, default=json_default)
    kept = len(rows) <= MAX_ROWS_BYTES
    body = {
        "experiment": bench.id,
        "size": result.size,
        "provenance": provenance(bench.id, result.size),
        "summary": result.summary,
        "rows": json.loads(rows) if kept else None,
        "rows_left_out": None if kept else f"{len(rows):,} bytes",
    }
    path = reference_path(bench.id, directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body, indent=1, default=json_default) + "\n")
    return path


def load_reference(name: str, directory: Path | None = None) -> dict[str, Any] | None:
    """Benchmark ``name``'s shipped reference (``None`` if it has none yet).

    Example::

        >>> load_reference("value_state", Path("/nonexistent")) is None
        True
    """
    path = reference_path(name, directory)
    return json.loads(path.read_text()) if path.is_file() else None


def reference_status(reference: dict[str, Any] | None) -> str:
    """``"current"``, ``"missing"`` or :data:`STALE` (measured by other timed code).

    Example::

        >>> reference_status(None)
        'missing'
        >>> reference_status({"experiment": "value_state", "size": "full",
        ...                   "provenance": {"code_fingerprint": "0" * 16}})
        'reference predates a change to the timed code: re-measure'
    """
    if reference is None:
        return "missing"
    measured = reference.get("provenance", {}).get("code_fingerprint")
    now = code_fingerprint(reference["experiment"], reference.get("size", REFERENCE_SIZE))
    return "current" if measured == now else STALE
