"""Every notebook of the lab executed in one shared kernel and rendered to an HTML report.

Example::

    >>> result = render_report("quick", out="reports")  # doctest: +SKIP
    >>> result.ok, result.index  # doctest: +SKIP
    (True, PosixPath('reports/index.html'))
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from skewlab import paths
from skewlab.engine.session import JAVA_OPTIONS_ENV, check_spark_environment
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import SIZES
from skewlab.report.glossary import write_glossary
from skewlab.report.index import write_index
from skewlab.report.kernel import SharedKernel, report_environment
from skewlab.report.notebook import (
    KERNEL_ARGUMENTS,
    NotebookReport,
    notebook_parameters,
    render_notebook,
)
from skewlab.report.timing import format_timings
from skewlab.state.metadata_file import write_json_atomically
from skewlab.validation import check_choice, check_writable_dir

__all__ = [
    "BUDGET_SECONDS",
    "QUICK_JIT",
    "REPORT_JAVA_OPTIONS",
    "ReportResult",
    "notebook_paths",
    "render_report",
    "report_java_options",
    "select_notebooks",
]


#: What a whole report may take, per size, in seconds: the quick report's budget on the slower
#: of the 2-core machines of docs/report.md (a newcomer's first page). A size without one: none.
BUDGET_SECONDS = {"quick": 120.0}

#: The quick JIT compiler only, with the code cache a tiered JVM would have (the quick JIT's
#: default 48 MB fills in a JVM that runs every notebook): for runs of seconds, whose time is
#: mostly the JVM's start and warm-up (a tiny or quick report, the tests).
QUICK_JIT = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"

#: The options Spark's JVM starts with in a report, per size, unless ``$SKEWLAB_JAVA_OPTIONS``
#: is set (even to ""): the quick JIT where every job lasts seconds (measured against the
#: default JIT in docs/report.md; every ratio a report concludes has both sides in that JVM);
#: the full size, as ``skewlab bench``, with the default.
REPORT_JAVA_OPTIONS = {"tiny": QUICK_JIT, "quick": QUICK_JIT, "full": ""}


def report_java_options(size: str) -> str:
    """The extra options Spark's JVM starts with in a report of ``size``
    (:data:`REPORT_JAVA_OPTIONS`), or ``$SKEWLAB_JAVA_OPTIONS`` when it is set.

    Example::

        >>> REPORT_JAVA_OPTIONS["quick"]
        '-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m'
        >>> report_java_options("full")  # with $SKEWLAB_JAVA_OPTIONS unset  # doctest: +SKIP
        ''
    """
    check_choice("report size (--size)", size, SIZES)
    return os.environ.get(JAVA_OPTIONS_ENV, REPORT_JAVA_OPTIONS[size])


@dataclass
class ReportResult:
    """Every notebook's outcome and the index page."""

    size: str
    index: Path
    notebooks: list[NotebookReport] = field(default_factory=list)
    seconds: float = 0.0
    #: the extra options Spark's JVM ran with (read from the kernel's JVM; what was asked,
    #: :func:`report_java_options`, if no notebook started Spark)
    java_options: str = ""

    @property
    def ok(self) -> bool:
        return all(nb.ok for nb in self.notebooks)

    @property
    def failures(self) -> list[NotebookReport]:
        return [nb for nb in self.notebooks if not nb.ok]

    def claims(self) -> str:
        """Per notebook, how many of its claims held in this run and in the reference."""
        return "\n".join(f"{nb.name:28s} {nb.claims_line()}" for nb in self.notebooks if nb.claims)

    def timings(self) -> str:
        """Where the time went, per notebook (:func:`~skewlab.report.timing.format_timings`)."""
        return format_timings([(nb.name, nb.timing) for nb in self.notebooks if nb.timing])

    def timings_record(self) -> dict:
        """Where the time went, as ``timings.json`` keeps it: the report's seconds, its size's
        budget and whether it took longer, the JVM's options, and per notebook its
        :class:`~skewlab.report.timing.NotebookTiming` seconds and slowest cell.

        Example::

            >>> from skewlab.report.timing import NotebookTiming
            >>> nb = NotebookReport("00_hot_keys", "t", "s", Path("x.html"), 10.0,
            ...                     timing=NotebookTiming(10.0, 2.0, 3.0, 7.5, 0.4, (3, 4.0)))
            >>> record = ReportResult("quick", Path("index.html"), [nb], 10.0).timings_record()
            >>> record["budget_seconds"], record["over_budget"]
            (120.0, False)
            >>> record["notebooks"]["00_hot_keys"]["cells"], record["notebooks"]["00_hot_keys"]["slowest_cell"]
            (4.5, [3, 4.0])
        """  # noqa: E501
        notebooks = {}
        for nb in self.notebooks:
            entry: dict = {"ok": nb.ok, "total": nb.seconds}
            if nb.timing is not None:  # its total is the notebook's seconds
                entry.update(nb.timing.as_dict())
                entry["slowest_cell"] = list(nb.timing.slowest) if nb.timing.slowest else None
            notebooks[nb.name] = entry
        return {
            "size": self.size,
            "seconds": self.seconds,
            "budget_seconds": BUDGET_SECONDS.get(self.size),
            "over_budget": self.budget_line() is not None,
            "java_options": self.java_options,
            "notebooks": notebooks,
        }

    def java_options_line(self) -> str | None:
        """A line naming the extra options Spark's JVM ran with, ``None`` without any.

        Example::

            >>> print(ReportResult("quick", Path("index.html"), java_options=QUICK_JIT)
            ...       .java_options_line())  # doctest: +ELLIPSIS
            Spark's JVM ran with SKEWLAB_JAVA_OPTIONS='-XX:TieredStopAtLevel=1 ...' (the quick JIT: ...)
        """  # noqa: E501
        if not self.java_options:
            return None
        why = (
            "the quick JIT: at this size every job lasts seconds, and both sides of each ratio ran "
            "in this JVM; skewlab bench and --size full use the default"
            if self.java_options == QUICK_JIT
            else "as $SKEWLAB_JAVA_OPTIONS says"
        )
        return f"Spark's JVM ran with {JAVA_OPTIONS_ENV}={self.java_options!r} ({why})"

    def budget_line(self) -> str | None:
        """A line when a whole report (every notebook) took longer than its size's budget
        (:data:`BUDGET_SECONDS`); ``None`` within it, for a size without one, or for a report of
        some notebooks only.

        Example::

            >>> every = [NotebookReport(p.stem, "t", "s", Path("x.html"), 21.0)
            ...          for p in notebook_paths()]
            >>> slow = ReportResult("quick", Path("index.html"), every, seconds=236.0)
            >>> print(slow.budget_line())  # doctest: +ELLIPSIS
            this report took 236 s, over the quick size's budget of 120 s (2 cores); ...
            >>> ReportResult("quick", Path("index.html"), seconds=99.0).budget_line() is None
            True
        """
        budget = BUDGET_SECONDS.get(self.size)
        every = [nb.name for nb in self.notebooks] == [p.stem for p in notebook_paths()]
        if budget is None or not every or self.seconds <= budget:
            return None
        slowest = max(self.notebooks, key=lambda nb: nb.seconds)
        return (
            f"this report took {self.seconds:.0f} s, over the {self.size} size's budget of "
            f"{budget:.0f} s (2 cores); its slowest notebook, {slowest.name}, took "
            f"{slowest.seconds:.0f} s: the table above says where the time went, and "
            "docs/report.md what the budget is measured on"
        )


def notebook_paths(directory: Path | None = None) -> list[Path]:
    """The lab's notebooks, in their numbered order."""
    directory = directory or paths.notebooks_dir()
    return sorted(p for p in directory.glob("*.ipynb") if not p.name.startswith("."))


def _number(name: str) -> int | None:
    """A notebook's number: the digits before its first ``_`` (``None`` without them)."""
    prefix = name.split("_", 1)[0]
    return int(prefix) if prefix.isdigit() else None


def select_notebooks(names: str | list[str], directory: Path | None = None) -> list[Path]:
    """The notebooks named by ``names`` (a list, or one comma-separated string), each by its
    number (``3`` or ``03``), its chapter id (``backlog``) or its file name with or without
    ``.ipynb``, in the lab's numbered order.

    Example::

        >>> [p.name for p in select_notebooks("3,05_sorted_input,backlog")]
        ['03_buffering.ipynb', '05_sorted_input.ipynb', '07_backlog.ipynb']
        >>> select_notebooks("3x")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: no notebook '3x' (--notebooks): use a number 00-10 or a name such as 03_buffering
    """  # noqa: E501
    available = notebook_paths(directory)
    if isinstance(names, str):
        names = names.split(",")
    wanted = [n.strip().removesuffix(".ipynb") for n in names if n.strip()]
    if not wanted:
        raise SkewlabInputError("--notebooks names no notebook: give numbers such as 03,05")
    chosen = set()
    for name in wanted:
        match = [
            p
            for p in available
            if name in (p.stem, p.stem.split("_", 1)[-1]) or _number(p.stem) == _number(name)
        ]
        if not match:
            numbers = [p.stem.split("_", 1)[0] for p in available]
            example = available[min(3, len(available) - 1)].stem
            raise SkewlabInputError(
                f"no notebook {name!r} (--notebooks): use a number {numbers[0]}-{numbers[-1]} "
                f"or a name such as {example}"
            )
        chosen.update(match)
    return [p for p in available if p in chosen]


#: the file that marks a directory as a skewlab report's (written when a report starts)
REPORT_MARKER = ".skewlab-report"


def check_report_dir(out_dir: str | Path) -> Path:
    """Refuse an output directory that holds files of anything but a skewlab report, before any
    work: ``skewlab report`` replaces the pages of a report it wrote, never a user's files.

    Allowed: a new or empty directory, or one with :data:`REPORT_MARKER`, or (reports written
    before the marker) an ``index.html`` titled "skewlab report".

    Example::

        >>> check_report_dir(Path.home())  # doctest: +SKIP
        SkewlabInputError: output directory '/root' is not empty and holds no skewlab report ...
    """
    out_dir = Path(out_dir)
    if not out_dir.is_dir() or not any(out_dir.iterdir()) or (out_dir / REPORT_MARKER).exists():
        return out_dir
    index = out_dir / "index.html"
    if index.is_file() and "<title>skewlab report</title>" in index.read_text(errors="replace"):
        return out_dir
    raise SkewlabInputError(
        f"output directory {str(out_dir)!r} is not empty and holds no skewlab report (no "
        f"{REPORT_MARKER}): choose a new or empty directory (--out); a report replaces only the "
        "files of a report it wrote"
    )


def render_report(
    size: str = "quick",
    out: str | Path | None = None,
    *,
    notebooks: list[Path] | None = None,
    progress: bool = True,
    kernel_name: str = "python3",
) -> ReportResult:
    """Execute and render every notebook at one size (its ``size`` parameter).

    The notebooks run one after the other in one Jupyter kernel
    (:class:`~skewlab.report.kernel.SharedKernel`): the kernel, the imports and Spark's JVM
    start once; each notebook starts from a fresh namespace. They do not run side by side:
    their measurements would share the machine's cores.

    Args:
        size: ``quick`` (the default; 140-165 s cold on the slowest of docs/report.md's
            2-core machines, over its budget there of 120 s, and 76-79 s on the fastest),
            ``full`` (the seeds' sizes), or ``tiny`` (what the tests render).
        out: output directory (default ``reports/``); must not be an existing file.
        notebooks: the notebooks to run (default: all of ``notebooks/``).
        progress: show a progress bar.

    Example::

        >>> result = render_report("quick")  # doctest: +SKIP
        >>> result.ok  # doctest: +SKIP
        True
        >>> print(result.timings())  # doctest: +SKIP
    """
    from tqdm.auto import tqdm

    check_choice("report size (--size)", size, SIZES)
    out_dir = Path(out) if out is not None else paths.reports_dir()
    check_writable_dir("output path", out_dir)
    nb_paths = notebook_paths() if notebooks is None else [Path(p) for p in notebooks]
    if not nb_paths:
        raise SkewlabInputError(f"no notebooks found in {paths.notebooks_dir()}")
    missing = [str(p) for p in nb_paths if not p.is_file()]
    if missing:
        raise SkewlabInputError(f"notebook(s) not found: {', '.join(missing)}")
    check_report_dir(out_dir)
    check_spark_environment()  # Java and the master URL, before a kernel starts
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / REPORT_MARKER).write_text(json.dumps({"size": size}) + "\n", encoding="utf-8")
    write_glossary(out_dir)
    result = ReportResult(size=size, index=out_dir / "index.html")
    result.java_options = report_java_options(size)
    started = time.perf_counter()
    bar = tqdm(nb_paths, desc="report", unit="notebook", disable=not progress)
    # the previous run's index goes at once: it would link this run's pages as if complete
    write_index(result, total=len(nb_paths), state="rendering")
    try:
        with (
            report_environment(java_options=result.java_options),
            SharedKernel(
                kernel_name, cwd=nb_paths[0].parent, extra_arguments=KERNEL_ARGUMENTS
            ) as kernel,
        ):
            for nb_path in bar:
                bar.set_postfix_str(nb_path.stem)
                params = notebook_parameters(nb_path, size)
                result.notebooks.append(
                    render_notebook(nb_path, out_dir, params, kernel_name, kernel=kernel)
                )
                write_index(result, total=len(nb_paths), state="rendering")
            ran_with = kernel.spark_java_options()  # what the JVM started with, if it started
            if ran_with is not None:
                result.java_options = ran_with
            kernel.end_spark()  # now, not in the shutdown, which would wait on the JVM
    except BaseException:  # Ctrl-C or a crash: the index says how far this run got
        write_index(result, total=len(nb_paths), state="interrupted")
        raise
    result.seconds = time.perf_counter() - started
    write_index(result)
    write_claims(result)
    write_timings(result)
    return result


def write_claims(result: ReportResult) -> Path:
    """Write ``claims.json`` beside the index: per notebook, every claim it showed with its
    outcome in this run and in the reference (what ``skewlab report`` sums up at the end)."""
    path = result.index.with_name("claims.json")
    notebooks = {nb.name: nb.claims for nb in result.notebooks}
    write_json_atomically(path, {"size": result.size, "notebooks": notebooks})
    return path


def write_timings(result: ReportResult) -> Path:
    """Write ``timings.json`` beside the index: where the report's time went, as the table
    ``skewlab report`` prints at the end says it (:meth:`ReportResult.timings_record`), for a
    script to read (e.g. docs/probes/first_ten_minutes.py)."""
    path = result.index.with_name("timings.json")
    write_json_atomically(path, result.timings_record())
    return path
