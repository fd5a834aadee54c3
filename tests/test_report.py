"""The report pipeline: every notebook really executes through papermill (the tiny size) and
renders offline; a failing notebook is named with its cell; the terminal shows progress only."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from skewlab.cli import main
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import BENCHMARKS, CHAPTERS, size_settings
from skewlab.experiments.claims import chapter_claims
from skewlab.report import notebook_paths, render_notebook, render_report, select_notebooks

pytestmark = pytest.mark.notebook

EXTERNAL_RESOURCE = re.compile(r"<(?:script|link|img)\b[^>]*\b(?:src|href)=\"(?:https?:)?//", re.I)


def test_notebooks_are_stored_clean_and_parameterised():
    paths = notebook_paths()
    assert [p.name for p in paths] == [c.notebook for c in CHAPTERS]  # one notebook a chapter
    for path in paths:
        nb = json.loads(path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(not c.get("outputs") and not c.get("execution_count") for c in code), path
        # nbformat 4.5: every cell has its own id (a missing one warns today, fails tomorrow)
        ids = [c.get("id") for c in nb["cells"]]
        assert all(ids) and len(set(ids)) == len(ids), f"{path.name}: a cell without its own id"
        tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{path.name}: one cell tagged 'parameters'"
        assigned = set(re.findall(r"^(\w+)\s*=", "".join(tagged[0]["source"]), re.M))
        assert "size" in assigned, f"{path.name}: the report passes a size"
        text = "".join("".join(c["source"]) for c in code)
        for lesson in re.findall(r"size_settings\(\"(\w+)\"", text):
            assert size_settings(lesson, "tiny"), f"{path.name}: no sizes for {lesson!r}"


def test_notebooks_import_from_the_public_api_only():
    for path in notebook_paths():
        nb = json.loads(path.read_text())
        text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        imports = re.findall(r"^\s*(?:from|import)\s+([\w.]+)", text, re.M)
        assert imports and set(imports) <= {"skewlab"}, f"{path.name}: {sorted(set(imports))}"


@pytest.mark.long
def test_every_notebook_executes_and_renders_self_contained_html(tiny_report):
    assert [nb.name for nb in tiny_report.notebooks] == [p.stem for p in notebook_paths()]
    failures = {nb.name: nb.error for nb in tiny_report.notebooks if not nb.ok}
    assert not failures
    for nb in tiny_report.notebooks:
        page = nb.html.read_text(encoding="utf-8")
        assert page.count("Plotly.newPlot") >= 1, nb.name
        assert page.count("plotly.js v") == 1, f"{nb.name}: plotly.js inlined exactly once"
        assert not EXTERNAL_RESOURCE.search(page), f"{nb.name} loads something from the network"
        assert "Traceback" not in page
        executed = nbformat.read(str(nb.html.parent / "executed" / f"{nb.name}.ipynb"), 4)
        assert all(c.get("execution_count") for c in executed.cells if c.cell_type == "code")


@pytest.mark.long
def test_index_links_every_notebook_with_a_summary(tiny_report):
    index = tiny_report.index.read_text(encoding="utf-8")
    assert 'data-state="complete"' in index and "Incomplete" not in index
    for nb in tiny_report.notebooks:
        assert f'href="{nb.name}.html"' in index
        assert nb.summary and nb.summary in index.replace("&#x27;", "'")


@pytest.mark.long
def test_every_measuring_chapter_shows_its_claims_and_the_index_counts_them(tiny_report):
    index = tiny_report.index.read_text(encoding="utf-8")
    claims = json.loads(tiny_report.index.with_name("claims.json").read_text())
    for chapter in CHAPTERS:
        if not chapter.benchmarks:
            continue
        nb = next(n for n in tiny_report.notebooks if n.name == chapter.notebook[:-6])
        shown = {c["id"] for c in claims["notebooks"][nb.name]}
        assert shown == {c.id for c in chapter_claims(chapter.id)}, nb.name
        assert nb.claims_line() and nb.claims_line() in index
        assert all(c["reference"] is not None for c in nb.claims if c["source"] in BENCHMARKS)
        assert "skewlab-claims" in nb.html.read_text(encoding="utf-8")
    # a claim over a benchmark is also checked on its shipped reference, and says so
    buffering = {c["id"]: c for c in claims["notebooks"]["03_buffering"]}
    assert buffering["buffer_wins_at_20_keys"]["reference"] == "held"


@pytest.mark.long
def test_each_page_shows_one_parameters_cell_a_code_toggle_and_the_glossary(tiny_report):
    assert "key group" in (tiny_report.index.parent / "glossary.html").read_text()
    assert 'href="glossary.html"' in tiny_report.index.read_text(encoding="utf-8")
    for nb in tiny_report.notebooks:
        page = nb.html.read_text(encoding="utf-8")
        assert 'id="skewlab-toggle-code"' in page and 'href="glossary.html"' in page
        # papermill's injected values are written into the notebook's own parameters cell
        assert page.count("Parameters (papermill overrides these") == 1, nb.name
        assert "injected-parameters" not in page, nb.name
        text = html.unescape(re.sub(r"<[^>]+>", "", page))
        assert 'size = "tiny"  # tiny | quick | full' in text, nb.name


def test_a_failing_notebook_is_named_with_its_cell_and_the_rest_still_render(tmp_path):
    good, bad = tmp_path / "a_good.ipynb", tmp_path / "b_bad.ipynb"
    for path, body in ((good, "x = 1 + 1\nx"), (bad, "raise RuntimeError('boom')")):
        nb = new_notebook(cells=[new_markdown_cell("# T\n\nA test notebook."), new_code_cell(body)])
        nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "P"}
        nbformat.write(nb, str(path))
    result = render_report("tiny", out=tmp_path / "out", notebooks=[good, bad], progress=False)
    assert not result.ok
    assert [nb.name for nb in result.failures] == ["b_bad"]
    assert "cell index 1" in result.failures[0].error
    assert "RuntimeError: boom" in result.failures[0].error
    assert (tmp_path / "out" / "a_good.html").exists() and (
        tmp_path / "out" / "b_bad.html"
    ).exists()
    assert "failed" in result.index.read_text()


def test_the_report_imports_papermill_without_compiling_the_iri_grammars():
    # jsonschema compiles rfc3987-syntax's grammars at its import when that package is
    # installed: a fresh process importing the report has not loaded them, and may still
    # import the package itself afterwards
    import importlib.util
    import subprocess

    if importlib.util.find_spec("rfc3987_syntax") is None:
        pytest.skip("rfc3987-syntax is not installed: there is nothing to keep from loading")
    code = (
        "import sys, skewlab.report\n"
        "print('rfc3987_syntax' in sys.modules, 'jsonschema' in sys.modules)\n"
        "import rfc3987_syntax\n"
        "print(rfc3987_syntax.is_valid_syntax('iri', 'https://example.org/a'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["False", "True", "True"], done.stderr


def test_report_refuses_bad_arguments(tmp_path, capsys):
    with pytest.raises(SkewlabInputError, match=r"unknown report size \(--size\) 'huge'"):
        render_report("huge", out=tmp_path)
    target = tmp_path / "file"
    target.write_text("x")
    assert main(["report", "--out", str(target)]) == 2
    assert "exists and is a file" in capsys.readouterr().err


def test_the_kernel_keeps_its_warnings_out_of_the_terminal(tmp_path, capfd):
    # a kernel on papermill's loopback TCP connection warns "running over TCP without encryption"
    path = tmp_path / "quiet.ipynb"
    nb = new_notebook(cells=[new_markdown_cell("# Q\n\nQuiet."), new_code_cell("1 + 1")])
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "P"}
    nbformat.write(nb, str(path))
    report = render_notebook(path, tmp_path / "out", {})
    captured = capfd.readouterr()
    assert report.ok and (tmp_path / "out" / "quiet.html").exists()
    assert "without encryption" not in captured.err + captured.out


def _notebook(path, *sources):
    nb = new_notebook(cells=[new_markdown_cell(f"# {path.stem}\n\nA test notebook.")])
    nb.cells += [new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "P"}
    nbformat.write(nb, str(path))
    return path


def test_one_kernel_runs_every_notebook_from_a_fresh_namespace(tmp_path):
    first = _notebook(tmp_path / "a.ipynb", "import os\nx = 41\npid = os.getpid()\npid")
    second = _notebook(
        tmp_path / "b.ipynb",
        "import os\ntry:\n    x\nexcept NameError:\n    pass\nelse:\n"
        "    raise AssertionError('x leaked')",
        "os.getpid()",
    )
    result = render_report("tiny", out=tmp_path / "out", notebooks=[first, second], progress=False)
    assert result.ok, [nb.error for nb in result.failures]
    a, b = (
        nbformat.read(str(tmp_path / "out" / "executed" / n), 4) for n in ("a.ipynb", "b.ipynb")
    )
    # the same kernel process ran both, and each notebook's cells are numbered from 1
    assert a.cells[1].outputs[0]["data"] == b.cells[2].outputs[0]["data"]
    assert [c.execution_count for c in b.cells if c.cell_type == "code"] == [1, 2]
    # the first notebook waited for the kernel to start, the second did not
    timings = [nb.timing for nb in result.notebooks]
    assert timings[0].kernel > 0 and timings[1].kernel == 0
    assert all(t.total >= t.kernel + t.code + t.render for t in timings)
    table = result.timings().splitlines()
    assert table[0].split()[:7] == [
        "notebook",
        "total",
        "kernel",
        "spark",
        "cells",
        "render",
        "other",
    ]
    assert [line.split()[0] for line in table[1:]] == ["a", "b", "all"]
    # timings.json beside the index keeps what the table prints, for a script to read
    record = json.loads((tmp_path / "out" / "timings.json").read_text())
    assert list(record["notebooks"]) == ["a", "b"]
    assert record["seconds"] == result.seconds and record["budget_seconds"] is None
    assert record["over_budget"] is False and record["java_options"] == result.java_options
    for line in table[1:3]:
        name, *printed = line.split()[:7]
        kept = record["notebooks"][name]
        columns = ("total", "kernel", "spark", "cells", "render", "other")
        assert printed == [f"{kept[c]:.1f}" for c in columns], name
        cell, seconds = kept["slowest_cell"]
        assert kept["ok"] and line.endswith(f"[{cell}] {seconds:.1f} s"), line


_ONE_CONNECTED_CLIENT = """
import sys
from pathlib import Path
import papermill as pm
from skewlab.report.engine import ENGINE
from skewlab.report.kernel import SharedKernel

notebook = Path(sys.argv[1])
with SharedKernel(cwd=notebook.parent) as kernel:
    kernel.prepare()
    shared = kernel.notebook_client()
    for client in (shared, None, shared):  # None: papermill connects a client of its own
        pm.execute_notebook(str(notebook), str(notebook.with_name("out.ipynb")),
                            kernel_name="python3", progress_bar=False, engine_name=ENGINE,
                            km=kernel.manager, kernel_client=client, execution_timeout=20)
        print("shared" if client else "own", flush=True)
    assert kernel.notebook_client() is shared  # one per kernel process
"""


def test_notebooks_run_through_one_connected_client_beside_any_other(tmp_path):
    notebook = _notebook(tmp_path / "a.ipynb", "1 + 1")
    done = subprocess.run([sys.executable, "-c", _ONE_CONNECTED_CLIENT, str(notebook)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    # the shared client still hears its cells after another client heard the kernel too
    assert done.stdout.split() == ["shared", "own", "shared"]


def _kernel_spec(monkeypatch, tmp_path, name, shell):
    """A kernel named ``name`` that runs ``shell`` before the ordinary Python kernel."""
    spec = tmp_path / "jupyter" / "kernels" / name
    spec.mkdir(parents=True)
    launch = f'{shell}; exec "{sys.executable}" -m ipykernel_launcher -f "$0"'
    argv = ["/bin/sh", "-c", launch, "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": name}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))


@pytest.mark.skipif(os.name == "nt", reason="the kernel spec starts through /bin/sh")
def test_a_kernel_slow_to_start_is_waited_for_and_one_that_exits_is_named_dead(
    monkeypatch, tmp_path
):
    from skewlab.report import SharedKernel

    # a busy machine: the kernel answers nothing for its first seconds (its heartbeat
    # neither), which is a slow start, not a death
    _kernel_spec(monkeypatch, tmp_path, "slow", "sleep 2")
    with SharedKernel("slow") as kernel:
        kernel.prepare()
        assert kernel.take_start_seconds() >= 2
    _kernel_spec(monkeypatch, tmp_path, "gone", "exit 3")
    with SharedKernel("gone") as kernel, pytest.raises(RuntimeError, match="died"):
        kernel.prepare()


@pytest.mark.long
def test_a_kernel_that_started_spark_ends_its_jvm_and_then_exits_by_itself(tmp_path):
    from skewlab.report import SharedKernel

    with SharedKernel(cwd=tmp_path) as kernel:
        kernel.prepare()
        jvm_pid = kernel._evaluate(
            "__import__('pyspark').SparkContext._gateway.proc.pid",
            "import skewlab\nskewlab.get_spark().range(3).count()",
        )
        process = kernel.manager.provisioner.process
        kernel.end_spark()  # as render_report does after its last notebook
    # ended by itself, not terminated by its manager (-15) after waiting for the JVM
    assert process.returncode == 0
    assert not os.path.exists(f"/proc/{jvm_pid}")


def test_a_notebook_that_kills_the_kernel_fails_and_the_next_gets_a_new_one(tmp_path):
    dies = _notebook(tmp_path / "a_dies.ipynb", "import os\nos._exit(3)")
    after = _notebook(tmp_path / "b_after.ipynb", "1 + 1")
    result = render_report("tiny", out=tmp_path / "out", notebooks=[dies, after], progress=False)
    assert [nb.name for nb in result.failures] == ["a_dies"]
    assert result.notebooks[1].ok and result.notebooks[1].timing.kernel > 0  # it paid a restart


def test_a_report_whose_last_notebook_kills_the_kernel_still_ends_and_names_its_jvm_options(
    tmp_path,
):
    from skewlab.report.render import report_java_options

    dies = _notebook(tmp_path / "a_dies.ipynb", "import os\nos._exit(3)")
    result = render_report("tiny", out=tmp_path / "out", notebooks=[dies], progress=False)
    assert [nb.name for nb in result.failures] == ["a_dies"]
    # no JVM to read them back from: the options that were asked for
    assert result.java_options == report_java_options("tiny")


@pytest.mark.long
def test_every_chapter_page_asks_its_question_at_the_top_and_answers_it_from_its_claims(
    tiny_report,
):
    for nb in tiny_report.notebooks:
        record = next(c for c in CHAPTERS if c.notebook[:-6] == nb.name)
        page = html.unescape(nb.html.read_text(encoding="utf-8"))
        asked = page.find(record.question)
        assert asked != -1, f"{nb.name}: its question is not on its page"
        if record.answered_by:  # the claims table's answer, after everything above it
            answered = page.find("The question:", page.find("skewlab-answer"))
            assert answered > asked and record.question in page[answered:], nb.name


@pytest.mark.long
def test_the_tiny_report_starts_spark_once_and_says_where(tiny_report):
    spark = [nb.timing.spark for nb in tiny_report.notebooks]
    assert spark[0] > 0 and all(s == 0 for s in spark[1:])  # 00 starts Spark, the rest share it
    assert tiny_report.notebooks[0].timing.kernel > 0
    assert all(nb.timing.kernel == 0 for nb in tiny_report.notebooks[1:])


def test_notebooks_are_picked_by_number_or_name_in_the_labs_order(capsys):
    picked = select_notebooks("5, 03_buffering.ipynb,03")
    assert [p.name for p in picked] == [
        "03_buffering.ipynb",
        "05_sorted_input.ipynb",
    ]
    assert picked == [p for p in notebook_paths() if p.stem[:2] in {"03", "05"}]
    with pytest.raises(
        SkewlabInputError, match=r"no notebook '3x' \(--notebooks\): use a number 00-"
    ):
        select_notebooks(["3x"])
    assert main(["report", "--notebooks", "03,99", "--size", "tiny"]) == 2
    assert "no notebook '99'" in capsys.readouterr().err


_INTERRUPTED_RENDER = """
import sys
from skewlab.report import render_report

render_report("tiny", out=sys.argv[1], notebooks=sys.argv[2:], progress=False)
"""


def test_a_report_stopped_with_ctrl_c_leaves_an_index_that_says_so(tmp_path):
    """A real SIGINT to a real ``render_report`` in the middle of its second notebook: the
    previous run's index is gone and this run's says how far it got."""
    import signal
    import subprocess
    import sys
    import time

    first = _notebook(tmp_path / "a_first.ipynb", "1 + 1")
    slow = _notebook(tmp_path / "b_slow.ipynb", "import time\ntime.sleep(600)")
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_text(
        '<title>skewlab report</title><p id="status" data-state="complete">old run</p>'
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", _INTERRUPTED_RENDER, str(out), str(first), str(slow)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 240
    while not (out / "a_first.html").exists() and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.2)
    time.sleep(2)  # the second notebook's cell is running
    proc.send_signal(signal.SIGINT)
    output = proc.communicate(timeout=120)[0]
    assert proc.returncode != 0, output
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "old run" not in index
    assert 'data-state="interrupted"' in index
    assert "interrupted after 1 of 2 notebooks" in index
    assert 'href="a_first.html"' in index and "b_slow" not in index
    assert not list(out.glob("*.partial"))


def test_a_report_never_writes_into_a_directory_of_a_users_files(tmp_path, capsys):
    """--out pointed at a folder of the user's (a typo of --out ~/docs): refused before any
    work, the user's index.html untouched; a folder a report wrote is reused."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.html").write_text("<title>my notes</title>")
    assert main(["report", "--size", "tiny", "--notebooks", "00", "--out", str(docs)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"skewlab report: error: output directory '{docs}' is not empty and holds no skewlab "
        "report (no .skewlab-report): choose a new or empty directory (--out); a report replaces "
        "only the files of a report it wrote"
    )
    assert (docs / "index.html").read_text() == "<title>my notes</title>"
    first = _notebook(tmp_path / "a_first.ipynb", "1 + 1")
    out = tmp_path / "out"
    assert render_report("tiny", out=out, notebooks=[first], progress=False).ok
    assert (out / ".skewlab-report").exists()
    assert render_report("tiny", out=out, notebooks=[first], progress=False).ok  # its own: reused


def test_a_report_starts_spark_with_the_quick_jit_at_the_short_sizes_unless_told_else(
    monkeypatch,
):
    from skewlab.engine.session import JAVA_OPTIONS_ENV
    from skewlab.report.kernel import report_environment
    from skewlab.report.render import QUICK_JIT, report_java_options

    monkeypatch.delenv(JAVA_OPTIONS_ENV, raising=False)
    assert [report_java_options(s) for s in ("tiny", "quick", "full")] == [QUICK_JIT] * 2 + [""]
    with pytest.raises(SkewlabInputError, match="report size"):
        report_java_options("huge")
    monkeypatch.setenv(JAVA_OPTIONS_ENV, "")  # set, even empty: the person running it decides
    assert report_java_options("quick") == ""
    monkeypatch.setenv(JAVA_OPTIONS_ENV, "-Xss4m")
    with report_environment(java_options=QUICK_JIT):  # what the kernel started inside sees
        assert os.environ[JAVA_OPTIONS_ENV] == QUICK_JIT
    assert os.environ[JAVA_OPTIONS_ENV] == "-Xss4m"


@pytest.mark.long
def test_the_tiny_report_says_which_options_its_spark_jvm_ran_with(tiny_report):
    from skewlab.report.render import QUICK_JIT

    # read back from the kernel's running JVM (the tests' JVMs all run the quick JIT)
    assert tiny_report.java_options == QUICK_JIT
    assert "the quick JIT" in tiny_report.java_options_line()
    index = tiny_report.index.read_text(encoding="utf-8")
    assert "TieredStopAtLevel=1" in index
