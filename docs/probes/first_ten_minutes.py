"""A newcomer's first ten minutes, measured as docs/report.md records them: the README's two
commands in fresh clones, the report cold.

Each run makes a fresh clone of a commit in a folder of its own, with the ``shared`` folder
beside it (the layout CI gives), installs it the README's way (``python3 -m venv .venv &&
.venv/bin/pip install -q -e '.[test]'``, timed), then times one of the README's commands from
outside::

    python docs/probes/first_ten_minutes.py report OUT.jsonl --runs 3   # ~2.5 min a run
    python docs/probes/first_ten_minutes.py tests OUT.jsonl --runs 3    # ~6 min a run
    python docs/probes/first_ten_minutes.py table OUT.jsonl

``report``: the page cache is dropped before ``skewlab report`` (as root; a run says whether it
could), so its first notebooks read skewlab, pyspark and the JVM from disk as after an install
on a fresh machine. One JSON line per run: the machine's CPU probe (``python3 -c "sum(i*i for i
in range(2*10**7))"``, three times: which kind of 2-core VM this is, docs/report.md), the
install's seconds, the report's seconds as it prints them and the whole command's, each
notebook's seconds and slowest cell (the report's ``timings.json``) and per chapter the claims
it concluded live and those shown from the reference (its ``claims.json``). ``tests``: the
README's test command (``.venv/bin/python -m pytest``) in the clone: its wall seconds and
pytest's counts. ``table``: the runs as markdown tables, per kind of run.

Options: ``--repo PATH`` (the repository to clone; default: this checkout), ``--commit REV``
(default: its ``HEAD``), ``--shared PATH`` (default: ``shared`` beside the repository),
``--python EXE`` (the interpreter the venv is made with; default ``python3``), ``--keep`` (leave
each clone in place, and say where; a run that fails always does). Run it on a quiet machine:
nothing else running.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
CPU_PROBE = "sum(i*i for i in range(2*10**7))"
INSTALL = "{python} -m venv .venv && .venv/bin/pip install -q -e '.[test]'"


def cpu_probe_seconds(python: str = "python3", times: int = 3) -> list[float]:
    """The CPU probe's wall seconds, ``times`` runs: about 1.1-1.3 s on the faster 2-core VMs
    of docs/report.md, 2.1-2.8 s on the slower.

    >>> cpu_probe_seconds()  # doctest: +SKIP
    [1.09, 1.07, 1.13]
    """
    out = []
    for _ in range(times):
        began = time.perf_counter()
        subprocess.run([python, "-c", CPU_PROBE], check=True)
        out.append(round(time.perf_counter() - began, 2))
    return out


def clean_clone(repo: Path, commit: str, shared: Path | None, into: Path) -> Path:
    """Clone ``repo`` at ``commit`` to ``into/main``, with ``into/shared`` a link to ``shared``
    (when given): the layout of a CI run. Returns the clone."""
    into.mkdir(parents=True, exist_ok=True)
    if shared is not None:
        (into / "shared").symlink_to(shared.resolve(), target_is_directory=True)
    clone = into / "main"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", commit], check=True)
    return clone


def drop_page_cache() -> bool:
    """Write dirty pages out and drop the page cache; False where this user may not."""
    subprocess.run(["sync"], check=True)
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        return False
    return True


def timed(command: str, cwd: Path, log: Path) -> tuple[float, int]:
    """Run a shell ``command`` in ``cwd``, its output to ``log``: (wall seconds, exit code)."""
    began = time.perf_counter()
    with log.open("wb") as out:
        code = subprocess.run(command, shell=True, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    return round(time.perf_counter() - began, 2), code.returncode


def report_figures(reports: Path) -> dict:
    """What a report wrote about itself (``timings.json``, ``claims.json`` in ``reports``):
    its seconds as printed, whether it was over budget, each notebook's seconds and slowest
    cell, and per chapter each claim's verdict in this run and how many claims carry the
    reference's."""
    timings = json.loads((reports / "timings.json").read_text())
    claims = json.loads((reports / "claims.json").read_text())["notebooks"]
    chapters = {
        name: {"this_run": [c["this_run"] for c in shown],
               "reference": sum(c.get("reference") is not None for c in shown)}
        for name, shown in claims.items() if shown
    }  # fmt: skip
    return {
        "report_seconds": round(timings["seconds"], 2),
        "over_budget": timings["over_budget"],
        "notebooks": {n: round(t["total"], 2) for n, t in timings["notebooks"].items()},
        "slowest_cell": {n: t.get("slowest_cell") for n, t in timings["notebooks"].items()},
        "failed": [n for n, t in timings["notebooks"].items() if not t["ok"]],
        "claims": chapters,
    }


PYTEST_COUNTS = re.compile(r"(\d+) (passed|failed|skipped|errors?|deselected)")


def pytest_counts(output: str) -> dict[str, int]:
    """pytest's closing counts, from its last summary line.

    >>> pytest_counts("== 1672 passed, 63 skipped in 276.70s (0:04:36) ==")
    {'passed': 1672, 'skipped': 63}
    """
    summary = [line for line in output.splitlines() if re.search(r" in [\d.]+s", line)]
    if not summary:
        return {}
    return {kind: int(n) for n, kind in PYTEST_COUNTS.findall(summary[-1])}


def one_run(kind: str, args: argparse.Namespace, commit: str) -> dict:
    """One clone, its install, and the README's ``kind`` command timed: one JSON row."""
    work = Path(tempfile.mkdtemp(prefix=f"skewlab-first-{kind}-"))
    row: dict = {"kind": kind, "commit": commit,
                 "at": datetime.now(UTC).isoformat(timespec="seconds"),
                 "cpu_probe_seconds": cpu_probe_seconds(args.python)}  # fmt: skip
    kept = args.keep  # a run that fails keeps its clone and logs, and says where
    try:
        clone = clean_clone(args.repo, commit, args.shared, work)
        row["install_seconds"], code = timed(
            INSTALL.format(python=args.python), clone, work / "install.log"
        )
        if code != 0:
            kept = True
            raise SystemExit(f"the install failed ({code}): see {work / 'install.log'}")
        if kind == "report":
            row["page_cache_dropped"] = drop_page_cache()
            row["whole_seconds"], row["exit"] = timed(
                ".venv/bin/skewlab report", clone, work / "report.log"
            )
            row.update(report_figures(clone / "reports"))
        else:
            row["whole_seconds"], row["exit"] = timed(
                ".venv/bin/python -m pytest", clone, work / "tests.log"
            )
            row["counts"] = pytest_counts((work / "tests.log").read_text(errors="replace"))
        kept = kept or row["exit"] != 0
    except BaseException:
        kept = True
        raise
    finally:
        if kept:
            row["kept"] = str(work)
            print(f"kept {work} (its clone and the commands' logs)", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return row


def spread(values: list[float], fmt: str = ".1f") -> str:
    """``median [min..max]``.

    >>> spread([80.7, 75.3, 87.0])
    '80.7 [75.3..87.0]'
    """
    return f"{statistics.median(values):{fmt}} [{min(values):{fmt}}..{max(values):{fmt}}]"


def table(rows: list[dict]) -> str:
    """The runs as markdown: the report's runs (each run, then per notebook and per chapter's
    live claims), then the test command's.

    >>> row = {"kind": "tests", "commit": "b6a67c5aa", "at": "2026-12-07T16:30:00+00:00",
    ...        "cpu_probe_seconds": [1.1, 1.07], "install_seconds": 55.0, "exit": 0,
    ...        "whole_seconds": 276.7, "counts": {"passed": 1672, "skipped": 63}}
    >>> print(table([row]).splitlines()[-1])
    | 1 | 2026-12-07 16:30 | b6a67c5 | 1.07-1.10 | 55 | 276.7 | 1672 passed, 63 skipped |
    """
    from skewlab.report.notebook import verdict_counts  # the words skewlab report prints

    out = []
    reports = [r for r in rows if r["kind"] == "report"]
    tests = [r for r in rows if r["kind"] == "tests"]

    def head(r: dict, i: int) -> str:
        cpu = r["cpu_probe_seconds"]
        return (f"| {i} | {r['at'][:16].replace('T', ' ')} | {r['commit'][:7]} "
                f"| {min(cpu):.2f}-{max(cpu):.2f} | {r['install_seconds']:.0f}")  # fmt: skip

    if reports:
        out += ["| run | at (UTC) | commit | CPU probe, s | install, s | report as printed, s "
                "| whole command, s | over budget | page cache dropped | failed |",
                "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for i, r in enumerate(reports, 1):
            out.append(
                f"{head(r, i)} | {r['report_seconds']:.1f} | {r['whole_seconds']:.1f} "
                f"| {'yes' if r['over_budget'] else 'no'} "
                f"| {'yes' if r['page_cache_dropped'] else 'no'} "
                f"| {', '.join(r['failed']) or '-'} |"
            )
        runs = " | ".join(str(i) for i in range(1, len(reports) + 1))
        out += ["", f"| notebook, s | {runs} | median [min..max] |",
                "|---" * (len(reports) + 2) + "|"]  # fmt: skip
        for name in reports[0]["notebooks"]:
            seconds = [r["notebooks"][name] for r in reports]
            cells = " | ".join(f"{s:.1f}" for s in seconds)
            out.append(f"| {name} | {cells} | {spread(seconds)} |")
        out += ["", f"| claims this run concluded live | {runs} | shown from the reference |",
                "|---" * (len(reports) + 2) + "|"]  # fmt: skip
        for name, first in reports[0]["claims"].items():
            cells = " | ".join(verdict_counts(r["claims"][name]["this_run"]) for r in reports)
            out.append(f"| {name} | {cells} | {first['reference']} of {len(first['this_run'])} |")
    if tests:
        out += [""] if out else []
        out += ["| run | at (UTC) | commit | CPU probe, s | install, s | test command, s "
                "| pytest |", "|---|---|---|---|---|---|---|"]  # fmt: skip
        for i, r in enumerate(tests, 1):
            counts = ", ".join(f"{n} {k}" for k, n in r["counts"].items()) or "no summary"
            out.append(f"{head(r, i)} | {r['whole_seconds']:.1f} | {counts} |")
    return "\n".join(out)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("report", "tests", "table"))
    parser.add_argument("out", type=Path, help="the JSON lines file (appended to)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repo", type=Path, default=CHECKOUT)
    parser.add_argument("--commit", default="HEAD")
    parser.add_argument("--shared", type=Path, default=None)
    parser.add_argument("--python", default="python3")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    if args.what == "table":
        rows = [json.loads(line) for line in args.out.read_text().splitlines() if line.strip()]
        print(table(rows))
        return
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, not {args.runs}")
    if args.shared is None and (args.repo.resolve().parent / "shared").is_dir():
        args.shared = args.repo.resolve().parent / "shared"
    commit = subprocess.run(["git", "-C", str(args.repo), "rev-parse", args.commit],
                            check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    with args.out.open("a") as log:
        for _ in range(args.runs):
            row = one_run(args.what, args, commit)
            log.write(json.dumps(row) + "\n")
            log.flush()
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
