"""The chapter registry is whole: every chapter has its notebook, sizes, modules; every
benchmark its measurement, summary, headline ratios and options -- a chapter missing a part
fails here, not in a report."""

from __future__ import annotations

import importlib
import inspect
import json
import re

import pytest

from skewlab import paths
from skewlab.cli import main
from skewlab.errors import SkewlabInputError
from skewlab.experiments.chapters import (
    BENCHMARKS,
    CHAPTERS,
    SIZES,
    benchmark,
    chapter,
    headline_ratios,
    size_settings,
)
from skewlab.viz import summary_formatter

SIZED = sorted({c.id for c in CHAPTERS if c.sizes} | set(BENCHMARKS)
               | {n for c in CHAPTERS for n in c.extra_sizes})  # fmt: skip


def test_ids_are_unique_and_numbers_run_from_zero():
    ids = [c.id for c in CHAPTERS] + [b.id for b in BENCHMARKS.values() if b.id not in
                                      {c.id for c in CHAPTERS}]  # fmt: skip
    aliases = [a for b in BENCHMARKS.values() for a in b.aliases]
    assert len(set(ids)) == len(ids) and not set(aliases) & set(ids)
    assert len(set(aliases)) == len(aliases)
    assert [c.number for c in CHAPTERS] == list(range(len(CHAPTERS)))
    assert all(re.fullmatch(r"[a-z][a-z_]*", i) for i in ids)


@pytest.mark.parametrize("chapter_id", [c.id for c in CHAPTERS])
def test_every_chapter_has_its_notebook_viz_and_experiment_modules(chapter_id):
    c = chapter(chapter_id)
    notebook = paths.notebooks_dir() / c.notebook
    assert notebook.is_file(), f"no notebook {c.notebook}"
    importlib.import_module(c.viz_module)
    if c.experiment_module:
        importlib.import_module(c.experiment_module)
        # a module outside today's convention is named in the registry, never found by its id
        default = c.experiment_module == f"skewlab.experiments.{c.id}"
        assert default or c.experiment_module.startswith("skewlab.doctor.")
    else:
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(f"skewlab.experiments.{c.id}")
    assert c.sizes or c.benchmarks, f"{c.id}: no sizes for its notebook"
    nb = json.loads(notebook.read_text())
    code = "\n".join("".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "code")
    reads = f'size_settings("{c.id}", size)' in code
    reads = reads or re.search(r"run_experiment\(\s*size\b", code)
    assert reads, f"{c.notebook} reads no settings of {c.id} at its size"
    for b in c.benchmarks:
        assert b.chapter == c.id


@pytest.mark.parametrize("chapter_id", [c.id for c in CHAPTERS])
def test_every_notebook_sets_up_before_it_starts_spark(chapter_id):
    """``viz.setup_notebook()`` in the imports cell, before any Spark: a notebook asked to run
    over Spark Connect is refused there, in one line, before any work."""
    nb = json.loads((paths.notebooks_dir() / chapter(chapter_id).notebook).read_text())
    code = ["".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "code"]
    imports = code[1]  # the cell after the parameters cell
    assert "viz.setup_notebook()" in imports, f"{chapter_id}: no setup in its imports cell"
    before = "\n".join(code[:1]) + imports.split("viz.setup_notebook()")[0]
    assert "spark" not in before, before


@pytest.mark.parametrize("chapter_id", [c.id for c in CHAPTERS if c.measures])
def test_an_experiment_module_measures_and_its_viz_module_presents(chapter_id):
    module = importlib.import_module(chapter(chapter_id).experiment_module)
    shown = [n for n in vars(module) if n.startswith(("format_", "describe"))]
    shown += [n for n in vars(module) if n.endswith(("_LABELS", "_summary", "_text"))]
    assert not shown, f"{module.__name__}: presentation ({shown}) belongs in {chapter_id}'s viz"


@pytest.mark.parametrize("name", SIZED)
def test_every_sized_part_has_every_size_growing_or_equal(name):
    settings = [size_settings(name, s) for s in SIZES]
    assert all(settings) and settings[0].keys() == settings[1].keys() == settings[2].keys()
    for key, tiny in settings[0].items():
        if isinstance(tiny, int | float) and not isinstance(tiny, bool):
            assert tiny <= settings[2][key] or key in {"skew", "utilization", "source_rate"}, (
                f"{name}.{key}: tiny is larger than full"
            )


@pytest.mark.parametrize("bench_id", list(BENCHMARKS))
def test_every_benchmark_has_its_measurement_summary_headlines_and_options(bench_id):
    b = benchmark(bench_id)
    run = b.run_function()
    params = inspect.signature(run).parameters
    assert list(params)[:2] == ["size", "runs"], f"{b.module}.run_experiment(size, runs, ...)"
    for keyword in ("parallelism", "progress", "spark", *(o.dest for o in b.options)):
        assert keyword in params, f"{b.module}.run_experiment has no {keyword!r}"
    printed = summary_formatter(b)
    assert callable(printed) and printed.__module__ == b.viz_module == chapter(b.chapter).viz_module
    headlines = headline_ratios(bench_id)
    assert isinstance(headlines, dict)
    assert all(v is None or v > 0 for v in headlines.values())


def test_bench_options_come_from_the_registry_and_former_names_still_work(capsys):
    for b in BENCHMARKS.values():
        for name in (b.id, *b.aliases):
            with pytest.raises(SystemExit) as info:
                main(["bench", name, "--help"])
            assert info.value.code == 0
            out = capsys.readouterr().out
            assert all(o.flag in out for o in b.options), name
            assert "--size" in out and "--profile" not in out
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    out = capsys.readouterr().out
    assert all(b in out for b in BENCHMARKS) and "value-state" not in out


def test_unknown_names_are_refused_with_the_choices():
    with pytest.raises(SkewlabInputError, match="unknown benchmark 'nope'"):
        benchmark("nope")
    with pytest.raises(SkewlabInputError, match="no sizes for 'nope'"):
        size_settings("nope", "tiny")
    with pytest.raises(SkewlabInputError, match=r"unknown size \(--size\) 'huge'"):
        size_settings("buffering", "huge")


def test_seed_figures_stand_beside_the_headlines():
    assert headline_ratios("state_cache")["speedup_1000"] == 21.6
    assert round(headline_ratios("sorted_input")["rocksdb_over_sorted"], 2) == 7.46
    assert headline_ratios("buffering")["speedup_at_20_keys"] == 45.0
    assert headline_ratios("rescaling") == dict.fromkeys(headline_ratios("rescaling"))


def test_the_former_bench_name_finds_saved_results_of_both_names(tmp_path):
    from skewlab.experiments.results import latest_result

    (tmp_path / "cache-quick-20261101T000000Z.json").write_text(
        json.dumps({"experiment": "cache", "profile": "quick", "rows": [], "summary": {}})
    )
    assert latest_result("state_cache", tmp_path)["size"] == "quick"


def _table_rows(text: str, first_cell: str) -> list[str]:
    """The first cells of a Markdown table's rows that match ``first_cell`` (a regex)."""
    return re.findall(rf"^\| *({first_cell}) *\|", text, flags=re.MULTILINE)


def test_the_chapter_tables_of_the_readme_and_docs_list_the_registry():
    root = paths.notebooks_dir().parent
    registry = [(f"{c.number:02d}", c.id) for c in CHAPTERS]
    for page in ("README.md", "docs/layout.md"):
        text = (root / page).read_text()
        rows = re.findall(r"^\| (\d\d) \| `([a-z_]+)` \|", text, flags=re.MULTILINE)
        assert rows == registry, f"{page}'s table of chapters is not the registry's"
    notebooks = (root / "docs/notebooks.md").read_text()
    listed = re.findall(r"^\| `(\d\d_[a-z_]+\.ipynb)` \|", notebooks, flags=re.MULTILINE)
    assert listed == [c.notebook for c in CHAPTERS], "docs/notebooks.md's table of chapters"


def test_the_browser_tests_drive_every_notebook_with_controls():
    """Every notebook whose page has controls (an explorer) is driven in Chromium, and the
    browser tests drive only notebooks of the registry."""
    import ast

    source = (paths.notebooks_dir().parent / "tests/browser/test_notebooks.py").read_text()
    (drivers,) = [
        node.value
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["DRIVERS"]
    ]
    driven = {key.value for key in drivers.keys}
    notebooks = {c.notebook for c in CHAPTERS}
    assert driven <= notebooks, f"driven but not in the registry: {driven - notebooks}"
    for name in sorted(notebooks - driven):
        nb = json.loads((paths.notebooks_dir() / name).read_text())
        code = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        assert "_explorer(" not in code, f"{name} has controls that no browser test drives"


@pytest.mark.parametrize(("package", "attribute"), [("skewlab.experiments", "experiment_module"),
                                                    ("skewlab.viz", "viz_module")])  # fmt: skip
def test_the_packages_list_every_chapter_module_the_registry_places_in_them(package, attribute):
    """``skewlab.experiments`` and ``skewlab.viz`` list (``__all__``, their docstring's table)
    every chapter's and benchmark's module that the registry places in them, and no module of
    another package (the skew doctor's live in ``skewlab.doctor``)."""
    module = importlib.import_module(package)
    placed = {getattr(c, attribute) for c in CHAPTERS} | {
        b.module if attribute == "experiment_module" else b.viz_module for b in BENCHMARKS.values()
    }
    mine = {m.rsplit(".", 1)[1] for m in placed if m and m.rsplit(".", 1)[0] == package}
    assert mine <= set(module.__all__), f"{package}.__all__ misses {mine - set(module.__all__)}"
    table = set(re.findall(r"^``([a-z_]+)``", module.__doc__, flags=re.MULTILINE))
    assert mine <= table, f"{package}'s table misses {mine - table}"
    elsewhere = {m.rsplit(".", 1)[1] for m in placed if m and m.rsplit(".", 1)[0] != package}
    assert not (elsewhere - mine) & set(module.__all__)


@pytest.mark.parametrize("chapter_id", [c.id for c in CHAPTERS])
def test_every_chapter_asks_one_question_its_notebook_states_and_its_claims_answer(chapter_id):
    from skewlab.experiments.claims import chapter_claims
    from skewlab.report.notebook import QUESTION_MARK

    record = chapter(chapter_id)
    assert record.question.endswith("?") and record.question.count("?") == 1, record.question
    ids = [c.id for c in chapter_claims(chapter_id)]
    assert set(record.answered_by) <= set(ids), f"{chapter_id}: no such claim"
    assert bool(record.answered_by) == bool(ids), f"{chapter_id}: claims, yet none answers"
    nb = json.loads((paths.notebooks_dir() / record.notebook).read_text(encoding="utf-8"))
    top = "".join(next(c for c in nb["cells"] if c["cell_type"] == "markdown")["source"])
    assert f"{QUESTION_MARK} {record.question}" in top, f"{record.notebook}: not at its top"
