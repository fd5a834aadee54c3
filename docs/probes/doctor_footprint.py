"""How long the doctor takes and how much memory it holds (docs/doctor.md, "How long it takes,
and how much memory"): the whole ``skewlab doctor`` command timed from outside, the driver's
(Python) and Spark's JVM's peak resident memory read from ``/proc/PID/status`` (``VmHWM``)
while it runs.

Three steps, the second on a quiet machine (nothing else running), from the checkout::

    python docs/probes/doctor_footprint.py generate DIR                  # ~6 min: 10^6..10^8
    python docs/probes/doctor_footprint.py measure OUT.jsonl DIR/v1000000 --runs 3 \\
        --checkout now=. --checkout before=/path/to/older/checkout
    python docs/probes/doctor_footprint.py table OUT.jsonl

``generate``: Zipf 1.1 views over 20,000 tweets at 10^6, 10^7 and 10^8 records (seed 3).
``measure``: ``skewlab doctor VIEWS --key tweet_id --json`` (the doctor's defaults), each
checkout in turn per run, each checkout's package put first on ``PYTHONPATH`` (an older
checkout needs the compiled loops beside its sources: copy ``skewlab/**/*.so`` into it); one
JSON line per run: wall seconds, the driver's and the JVM's peak MiB, the exit code and the
report's SHA-256. ``table``: per view set and checkout, the runs' median [min..max].
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SIZES = (1_000_000, 10_000_000, 100_000_000)
POLL_SECONDS = 0.5


def peak_mib(pid: int) -> tuple[str, float] | None:
    """The process's name and its peak resident memory so far (``VmHWM``) in MiB, or ``None``
    once it has gone.

    >>> name, mib = peak_mib(os.getpid())
    >>> mib > 1.0
    True
    """
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    if "VmHWM" not in fields:
        return None  # a zombie: its memory is gone
    kib = int(fields["VmHWM"].split()[0])
    return fields["Name"].strip(), kib / 1024


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children, their children, ...), read from ``/proc``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def run_once(command: list[str], env: dict[str, str], cwd: Path) -> dict:
    """Run ``command``, polling its own and its JVM's peak memory every half second."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    driver = jvm = 0.0
    chunks: list[bytes] = []
    os.set_blocking(proc.stdout.fileno(), False)
    while proc.poll() is None:
        own = peak_mib(proc.pid)
        if own is not None:
            driver = max(driver, own[1])
        for child in descendants(proc.pid):
            seen = peak_mib(child)
            if seen is not None and seen[0] == "java":
                jvm = max(jvm, seen[1])
        chunks.append(proc.stdout.read() or b"")
        time.sleep(POLL_SECONDS)
    chunks.append(proc.stdout.read() or b"")
    wall = time.perf_counter() - t0
    report = b"".join(chunks)
    return {"wall_seconds": round(wall, 2), "driver_peak_mib": round(driver, 1),
            "jvm_peak_mib": round(jvm, 1), "exit": proc.returncode,
            "report_sha256": hashlib.sha256(report).hexdigest()}  # fmt: skip


def measure(out: Path, views: Path, runs: int, checkouts: dict[str, Path]) -> None:
    """``runs`` rounds, each checkout once per round in turn, one JSON line per run."""
    cwd = out.resolve().parent
    with out.open("a") as log:
        for round_ in range(runs):
            for label, checkout in checkouts.items():
                env = dict(os.environ, PYTHONPATH=str(checkout.resolve()))
                # -P: the working directory is not put before PYTHONPATH, so a run started
                # inside one checkout still imports the checkout it is given
                command = [sys.executable, "-P", "-m", "skewlab", "doctor", str(views.resolve()),
                           "--key", "tweet_id", "--json"]  # fmt: skip
                row = run_once(command, env, cwd)
                row.update(views=views.name, checkout=label, round=round_, at=time.time())
                log.write(json.dumps(row) + "\n")
                log.flush()
                print(json.dumps(row), flush=True)


def table(rows: list[dict]) -> str:
    """The runs as a markdown table: per view set and checkout, median [min..max].

    >>> rows = [{"views": "v1", "checkout": "now", "wall_seconds": w, "driver_peak_mib": 170.0,
    ...          "jvm_peak_mib": j, "exit": 0} for w, j in ((20.0, 1000.0), (22.0, 1200.0))]
    >>> print(table(rows).splitlines()[-1])
    | v1 | now | 2 | 21.0 [20.0..22.0] | 170 [170..170] | 1,100 [1,000..1,200] |
    """

    def spread(values: list[float], fmt: str) -> str:
        median = statistics.median(values)
        return f"{median:{fmt}} [{min(values):{fmt}}..{max(values):{fmt}}]"

    lines = ["| view set | checkout | runs | wall, s | driver peak, MiB | JVM peak, MiB |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        if row["exit"] != 0:
            raise SystemExit(f"a run exited {row['exit']}: {row}")
        groups.setdefault((row["views"], row["checkout"]), []).append(row)
    for (views, checkout), group in groups.items():
        lines.append(
            f"| {views} | {checkout} | {len(group)} "
            f"| {spread([r['wall_seconds'] for r in group], '.1f')} "
            f"| {spread([r['driver_peak_mib'] for r in group], ',.0f')} "
            f"| {spread([r['jvm_peak_mib'] for r in group], ',.0f')} |"
        )
    return "\n".join(lines)


def generate(out: Path) -> None:
    """The three view sets, ``out/v1000000`` .. ``out/v100000000``."""
    for n in SIZES:
        subprocess.run([sys.executable, "-m", "skewlab", "generate", "--views", str(n),
                        "--users", "25000", "--tweets", "20000", "--distribution", "zipf",
                        "--skew", "1.1", "--seed", "3", "--out", str(out / f"v{n}")],
                       check=True)  # fmt: skip


def main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] == "generate":
        generate(Path(argv[1]))
    elif len(argv) >= 3 and argv[0] == "measure":
        runs, checkouts, rest = 3, {}, argv[3:]
        while rest:
            flag, value, rest = rest[0], rest[1], rest[2:]
            if flag == "--runs":
                runs = int(value)
            elif flag == "--checkout" and "=" in value:
                label, path = value.split("=", 1)
                checkouts[label] = Path(path)
            else:
                raise SystemExit(f"unknown option {flag} {value}; see the docstring")
        measure(Path(argv[1]), Path(argv[2]), runs, checkouts or {"now": Path(".")})
    elif len(argv) == 2 and argv[0] == "table":
        rows = [json.loads(line) for line in Path(argv[1]).read_text().splitlines()]
        print(table(rows))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
