"""The report pipeline: every notebook really executes through papermill (the tiny profile) and
renders offline; a failing notebook is named with its cell; the terminal shows progress only."""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from skewlab.cli import main
from skewlab.errors import SkewlabInputError
from skewlab.experiments.profiles import SETTINGS
from skewlab.report import notebook_paths, render_notebook, render_report

pytestmark = pytest.mark.notebook

EXTERNAL_RESOURCE = re.compile(r"<(?:script|link|img)\b[^>]*\b(?:src|href)=\"(?:https?:)?//", re.I)


def test_notebooks_are_stored_clean_and_parameterised():
    paths = notebook_paths()
    assert [p.name for p in paths][:2] == ["00_hot_keys.ipynb", "01_ebs_latency_math.ipynb"]
    for path in paths:
        nb = json.loads(path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(not c.get("outputs") and not c.get("execution_count") for c in code), path
        tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, f"{path.name}: one cell tagged 'parameters'"
        assigned = set(re.findall(r"^(\w+)\s*=", "".join(tagged[0]["source"]), re.M))
        assert "profile" in assigned, f"{path.name}: the report passes a profile"
        text = "".join("".join(c["source"]) for c in code)
        for lesson in re.findall(r"profile_settings\(\"(\w+)\"", text):
            assert lesson in SETTINGS, f"{path.name}: no sizes for {lesson!r} in the profiles table"


def test_notebooks_import_from_the_public_api_only():
    for path in notebook_paths():
        nb = json.loads(path.read_text())
        text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        imports = re.findall(r"^\s*(?:from|import)\s+([\w.]+)", text, re.M)
        assert imports and set(imports) <= {"skewlab"}, f"{path.name}: {sorted(set(imports))}"


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


def test_index_links_every_notebook_with_a_summary(tiny_report):
    index = tiny_report.index.read_text(encoding="utf-8")
    for nb in tiny_report.notebooks:
        assert f'href="{nb.name}.html"' in index
        assert nb.summary and nb.summary in index.replace("&#x27;", "'")


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


def test_report_refuses_bad_arguments(tmp_path, capsys):
    with pytest.raises(SkewlabInputError, match=r"unknown report profile \(--profile\) 'huge'"):
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
