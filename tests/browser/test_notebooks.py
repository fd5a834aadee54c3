"""Every notebook with a live widget, in JupyterLab in Chromium, at the tiny profile: opened,
run with Run All, then each control moved as a person moves it; each move must change the
linked chart or text the way the control says (the value it names appears in the title, a trace
or the text). No "Error displaying widget", no traceback in any output, no page error in the
browser console, and every chart legible (traces, tick labels, no legend over an axis title)."""

from __future__ import annotations

import re
import time

import pytest

from skewlab.experiments.exercises import chapter_exercises

from .lab import LabNotebook, NotebookQueue, kernel_list_races, unexplained_errors

pytestmark = [pytest.mark.browser, pytest.mark.e2e]


def _title(nb: LabNotebook, i: int = 0) -> str:
    return nb.charts()[i]["title"]


def _number(pattern: str, text: str) -> float:
    return float(re.search(pattern, text).group(1).replace(",", ""))


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def drive_prediction(nb: LabNotebook) -> None:
    """The prediction: the reveal waits; a guess typed into the slider's readout and locked in
    appears in the reveal beside this run's figure."""
    question = nb.page.locator(".skewlab-prediction").first
    answer = nb.page.locator(".skewlab-reveal").first
    assert "Lock in your prediction above" in answer.inner_text()
    readout = question.locator(".widget-readout")
    readout.click()
    nb.page.keyboard.press("Control+A")
    nb.page.keyboard.type("3")
    nb.page.keyboard.press("Enter")
    t = time.perf_counter()
    question.get_by_role("button", name="Lock in").click()
    nb.expect(
        "type 3 into the guess's readout, click Lock in",
        "the reveal reads 'You predicted 3' and gives this run's figure",
        lambda: "You predicted 3" in answer.inner_text() and "this run:" in answer.inner_text(),
        t,
    )


def drive_exercise(nb: LabNotebook, chapter: str) -> None:
    """The chapter's first exercise: its cell's first line changed to the answer its own
    solve() finds, run with Shift+Enter; the check below it says right."""
    e = chapter_exercises(chapter)[0]
    cell = nb.page.locator(".jp-CodeCell", has_text=f'"{e.id}", answer').first
    assert "not answered yet" in cell.locator(".jp-OutputArea").inner_text()
    cell.locator(".cm-line").first.click()
    nb.page.keyboard.press("Home")
    nb.page.keyboard.press("Shift+End")
    nb.page.keyboard.type(f"answer = {e.solve()!r}")
    t = time.perf_counter()
    nb.page.keyboard.press("Shift+Enter")
    nb.expect(
        f"set answer = {e.solve()!r} in exercise {e.id}'s cell, Shift+Enter",
        "its output says '-> right:'",
        lambda: "-> right:" in cell.locator(".jp-OutputArea").inner_text(),
        t,
    )


def drive_step_through(nb: LabNotebook) -> None:
    """The step-through: next twice, previous once, then Play; each shows the step it names,
    its chart drawing that step (the figure's ``meta``) and titled with what the step did (a new
    title at each step)."""
    widget = nb.step_through

    def shown() -> int:
        return int(_number(r"^step (\d+) of", widget.locator(".widget-html").first.inner_text()))

    first = nb.step_title()
    assert shown() == 1 == nb.step_drawn()
    t = time.perf_counter()
    widget.get_by_role("button", name="next").click()
    widget.get_by_role("button", name="next").click()
    nb.expect(
        "click next twice on the step-through",
        "it reads 'step 3 of', its chart draws step 3 and its title is no longer the first step's",
        lambda: shown() == 3 == nb.step_drawn() and nb.step_title() != first,
        t,
        widget,
    )
    third = nb.step_title()
    t = time.perf_counter()
    widget.get_by_role("button", name="previous").click()
    nb.expect(
        "click previous on the step-through",
        "it reads 'step 2 of', its chart draws step 2 and its title changed again",
        lambda: shown() == 2 == nb.step_drawn() and nb.step_title() not in (first, third),
        t,
        widget,
    )
    t = time.perf_counter()
    widget.locator(".widget-play button").first.click()  # the Play widget's play button
    nb.expect(
        "click play on the step-through",
        "the step it reads moves on past step 3",
        lambda: shown() > 3,
        t,
        widget,
    )
    widget.locator(".widget-play button").nth(1).click()  # pause: the steps stay put


def drive_00(nb: LabNotebook) -> None:
    drive_prediction(nb)
    drive_step_through(nb)
    drive_exercise(nb, "hot_keys")
    before = _number(r"carries ([\d.]+)%", _title(nb))
    t = time.perf_counter()
    nb.type_into_slider("Zipf skew s", "2.5")
    nb.expect(
        "type 2.5 into the Zipf skew slider",
        "legend names 'zipf s=2.5' and the hottest tweet's share in the title grows",
        lambda: (
            "zipf s=2.5" in nb.charts()[0]["legend"]
            and _number(r"carries ([\d.]+)%", _title(nb)) > before
        ),
        t,
    )
    t = time.perf_counter()
    nb.press_on_slider("Zipf skew s", "ArrowLeft")
    nb.expect(
        "ArrowLeft on the Zipf skew slider's handle",
        "readout 2.4 and legend names 'zipf s=2.4'",
        lambda: nb.readout("Zipf skew s") == "2.40" and "zipf s=2.4" in nb.charts()[0]["legend"],
        t,
    )


def drive_01(nb: LabNotebook) -> None:
    drive_prediction(nb)
    drive_exercise(nb, "ebs_latency")
    # the sliders open at the profile's means (6,161.17 and 7,707.56 us), and so does the chart
    assert (nb.readout("read latency (us)"), nb.readout("write latency (us)")) == ("6,161", "7,708")
    assert _title(nb).startswith("Per-key ceiling at read 6,161 us, write 7,708 us")
    t = time.perf_counter()
    nb.type_into_slider("buffer size per key", "500")
    nb.expect(
        "type 500 into the buffer size slider",
        "x tick label 'buffered (B=500)'",
        lambda: "buffered (B=500)" in nb.charts()[0]["ticks"]["x"],
        t,
    )
    t = time.perf_counter()
    nb.press_on_slider("read latency (us)", "ArrowRight", times=2)
    nb.expect(
        "ArrowRight twice on the read latency slider",
        "the title names the slider's new readout (us)",
        lambda: (
            nb.readout("read latency (us)") != "6,161"
            and f"read {nb.readout('read latency (us)')} us" in _title(nb)
        ),
        t,
    )


def drive_02(nb: LabNotebook) -> None:
    drive_prediction(nb)
    drive_step_through(nb)
    drive_exercise(nb, "salting")
    t = time.perf_counter()
    nb.type_into_slider("salt buckets", "8")
    nb.expect(
        "type 8 into the salt buckets slider",
        "title starts '8 salt buckets' and the table over-counts (salted_sum >= views)",
        lambda: (
            _title(nb).startswith("8 salt buckets")
            and all(_int(r["salted_sum"]) >= _int(r["views"]) for r in nb.table())
        ),
        t,
    )


def drive_03(nb: LabNotebook) -> None:
    drive_prediction(nb)
    drive_step_through(nb)
    drive_exercise(nb, "buffering")
    assert nb.charts() == []  # nothing runs before Run
    nb.press_on_slider("distinct tweets", "ArrowRight")  # 20 -> 10
    nb.press_on_slider("max_count", "ArrowLeft")  # 1,000 -> 100
    t = time.perf_counter()
    nb.click("Run")
    nb.expect(
        "ArrowRight on distinct tweets (10), ArrowLeft on max_count (100), click Run",
        "title starts '10 tweets:' and the latency table's buffered row has max_count 100",
        lambda: (
            _title(nb).startswith(f"{nb.readout('distinct tweets')} tweets:")
            and _title(nb).startswith("10 tweets:")
            and [r["max_count"] for r in nb.table() if r["strategy"] == "buffered"] == ["100"]
        ),
        t,
    )


def drive_04(nb: LabNotebook) -> None:
    drive_prediction(nb)
    drive_step_through(nb)
    drive_exercise(nb, "state_cache")
    t = time.perf_counter()
    nb.type_into_slider("cache entries", "1000")
    nb.expect(
        "type 1000 into the cache entries slider",
        "legend names 'this run: 1000 entries' and the text starts '1000 entries: hit ratio'",
        lambda: (
            "this run: 1000 entries" in nb.charts()[0]["legend"]
            and "1000 entries: hit ratio" in nb.explorer_text()
        ),
        t,
    )


def drive_05(nb: LabNotebook) -> None:
    drive_prediction(nb)
    drive_exercise(nb, "sorted_input")


def drive_06(nb: LabNotebook) -> None:
    drive_prediction(nb)
    drive_step_through(nb)
    drive_exercise(nb, "rescaling")
    t = time.perf_counter()
    nb.press_on_slider("p' (after)", "ArrowRight")
    nb.expect(
        "ArrowRight on the p' (after) slider",
        "readout 5 and title 'Rescaling 3 -> 5 subtasks'",
        lambda: nb.readout("p' (after)") == "5" and _title(nb).startswith("Rescaling 3 -> 5 "),
        t,
    )


def drive_07(nb: LabNotebook) -> None:
    drive_prediction(nb)
    drive_exercise(nb, "backlog")
    t = time.perf_counter()
    nb.type_into_slider("Zipf skew (0: uniform)", "0.5")
    nb.expect(
        "type 0.5 into the Zipf skew slider",
        "the catch-up curve's trace is named '..., skew 0.5'",
        lambda: any("skew 0.5" in name for name in nb.charts()[0]["traces"]),
        t,
    )
    options = nb.control("strategy").locator("option").all_inner_texts()
    other = options[-1]
    t = time.perf_counter()
    nb.pick("strategy", other)
    nb.expect(
        f"pick '{other}' in the strategy dropdown",
        f"the catch-up curve's trace is named '{other}, skew 0.5 ...'",
        lambda: any(name.startswith(f"{other}, skew 0.5") for name in nb.charts()[0]["traces"]),
        t,
    )


def drive_08(nb: LabNotebook) -> None:
    drive_prediction(nb)
    drive_exercise(nb, "streaming")
    assert nb.charts() == []  # nothing runs before Run
    nb.press_on_slider("trigger interval (ms)", "ArrowRight")  # 100 -> 250
    t = time.perf_counter()
    nb.click("Run")
    nb.expect(
        "ArrowRight on the trigger interval (250 ms), click Run",
        "both variants' rows in the table say trigger interval 250 ms",
        lambda: (
            [r["trigger interval ms"] for r in nb.table()] == ["250", "250"]
            and nb.readout("trigger interval (ms)") == "250"
        ),
        t,
    )


def drive_09(nb: LabNotebook) -> None:
    drive_prediction(nb)
    drive_exercise(nb, "skew_doctor")
    assert nb.charts() == []  # nothing runs before Run
    nb.press_on_slider("parallelism P", "ArrowRight")  # 8 -> 9
    t = time.perf_counter()
    nb.click("Run")
    nb.expect(
        "ArrowRight on parallelism P (9), click Run",
        "the loads chart's title says P=9 and the text has Flink's line for P=9",
        lambda: (
            nb.readout("parallelism P") == "9"
            and _title(nb).startswith("Where the load lands at P=9")
            and "P=9: busiest subtask" in nb.explorer_text()
        ),
        t,
    )
    nb.pick("engine", "kafka")
    t = time.perf_counter()
    nb.click("Run")
    nb.expect(
        "pick 'kafka' in the engine dropdown, click Run",
        "the loads chart has Kafka's partitions only, and the text says 9 partitions",
        lambda: (
            all(name.startswith("Kafka") for name in nb.charts()[0]["traces"])
            and "Kafka, 9 partitions" in nb.explorer_text()
        ),
        t,
    )


def drive_10(nb: LabNotebook) -> None:
    drive_prediction(nb)
    drive_exercise(nb, "beyond_salting")
    nb.explorer_index = 0  # the routing explorer; the cache admission explorer is the last
    t = time.perf_counter()
    nb.type_into_slider("parallelism p", "64")
    nb.expect(
        "type 64 into the parallelism p slider",
        "the title says p=64 and the table has a row per side",
        lambda: ", p=64," in _title(nb) and len(nb.table()) == 5,
        t,
    )
    t = time.perf_counter()
    nb.type_into_slider("D-Choices d (0: the bound)", "3")
    nb.expect(
        "type 3 into the D-Choices d slider",
        "the title says D-Choices d=3",
        lambda: _title(nb).endswith("D-Choices d=3"),
        t,
    )
    nb.explorer_index = -1
    t = time.perf_counter()
    nb.type_into_slider("cache entries", "250")
    nb.pick("keys", "FLIP-325's keys")
    nb.expect(
        "type 250 into the cache entries slider, pick FLIP-325's keys",
        "the title says FLIP-325's keys at 250 entries and LRU's hit ratio is 0 (FLIP-325's)",
        lambda: (
            _title(nb) == "Simulated hit ratio, FLIP-325's keys, 250 entries"
            and float(nb.table()[0]["hit ratio"]) == 0
        ),
        t,
    )


DRIVERS = {
    "00_hot_keys.ipynb": drive_00,
    "01_ebs_latency.ipynb": drive_01,
    "02_salting.ipynb": drive_02,
    "03_buffering.ipynb": drive_03,
    "04_state_cache.ipynb": drive_04,
    "05_sorted_input.ipynb": drive_05,
    "06_rescaling.ipynb": drive_06,
    "07_backlog.ipynb": drive_07,
    "08_streaming.ipynb": drive_08,
    "09_skew_doctor.ipynb": drive_09,
    "10_beyond_salting.ipynb": drive_10,
}


@pytest.fixture(scope="module")
def notebooks(open_tab, lab):
    """The notebooks of :data:`DRIVERS`, each opened and run one ahead of its test."""
    queue = NotebookQueue(open_tab, lab, list(DRIVERS), ahead=2)
    yield queue
    queue.close()


@pytest.mark.parametrize("name", list(DRIVERS))
def test_notebook_runs_all_and_its_controls_redraw(name, notebooks, interactions):
    nb = notebooks.take(name)
    try:
        seconds = nb.wait_run_all()
        interactions.append(("Run All, every cell ran", name, f"{seconds:.1f} s"))
        assert nb.bad_outputs() == []
        assert nb.status() == ""
        first_render = nb.chart_problems()  # every chart as first drawn, the widget's included
        DRIVERS[name](nb)
        interactions.extend(nb.log)
        shown = nb.explorer if nb.page.locator(".skewlab-explorer").count() else nb.page
        shown.screenshot(path=str(nb.lab.root.parent / f"{name.removesuffix('.ipynb')}.png"))
        assert first_render == []
        assert nb.bad_outputs() == []
        assert nb.status() == ""
        assert nb.chart_problems() == []
        races = kernel_list_races((nb.lab.root.parent / "lab.log").read_text(errors="replace"))
        assert unexplained_errors(nb.page.errors, races) == []
    finally:
        notebooks.done(nb)
