"""``skewlab doctor --follow``: the hot keys of a stream of files, held against exact counts of
what was written -- a writer process drops files while the doctor runs; every window's and the
run's hot keys, bounds and ages checked against pandas over the files each window read."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from skewlab.cli import main
from skewlab.doctor import live_hot_keys as follow_module
from skewlab.doctor.live_hot_keys import STATE_FILE, FollowState, follow
from skewlab.doctor.redaction import redact_key

THRESHOLD = 0.2
#: records per file: 50 cold keys 4 times each; from the third file on, 200 of one hot key; the
#: second file has 20 records without a key
COLD = [f"k{j % 50}" for j in range(200)]


def records_of(i: int) -> pd.DataFrame:
    keys = COLD + (["hot"] * 200 if i >= 2 else []) + ([None] * 20 if i == 1 else [])
    return pd.DataFrame({"page": keys, "n": range(len(keys))})


def write(folder: Path, i: int) -> None:
    """One file, whole: written aside and renamed in (a file source may list a half file)."""
    part = folder / f".f{i}.json.tmp"
    records_of(i).to_json(part, orient="records", lines=True)
    part.rename(folder / f"f{i}.json")


WRITER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from test_follow import write
folder, started = Path(sys.argv[1]), Path(sys.argv[2])
while not started.exists():  # the doctor's first window is counted
    time.sleep(0.1)
for i in range(1, 5):
    time.sleep(1.2)
    write(folder, i)
"""


def exact(files) -> Counter:
    counts = Counter()
    for f in files:
        i = int(Path(f.removeprefix("file:")).stem[1:])
        counts.update(k for k in records_of(i)["page"] if k is not None)
    return counts


def expected_hot(counts: Counter, threshold: float = THRESHOLD) -> set[str]:
    total = sum(counts.values())
    return {k for k, n in counts.items() if n >= threshold * total}


def check_window(
    window: dict, ages: dict[str, list[int]], counts: Counter | None = None, threshold=THRESHOLD
) -> None:
    """A window's figures against the exact counts of what it read (default: of the files it
    names), and each hot key's age against the windows before it (``ages``: key -> the windows
    it was hot in)."""
    counts = exact(window["files"]) if counts is None else counts
    assert window["records"] - window["null_keys"] == sum(counts.values())
    reported = {h["key"]: h for h in window["hot"]}
    assert expected_hot(counts, threshold) <= set(reported)  # no hot key missed
    for key, h in reported.items():
        assert h["lower"] <= counts[key] <= h["upper"]
        ages.setdefault(key, []).append(window["window"])
        run = 1
        while window["window"] - run in ages[key]:
            run += 1
        assert (h["windows_hot"], h["hot_since"]) == (run, window["window"] - run + 1)


@pytest.mark.long
def test_a_writer_drops_files_while_the_doctor_follows_and_ctrl_c_prints_the_summary(tmp_path):
    folder, checkpoint = tmp_path / "incoming", tmp_path / "checkpoint"
    folder.mkdir()
    write(folder, 0)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    doctor = subprocess.Popen(
        [sys.executable, "-m", "skewlab", "doctor", "--follow", str(folder), "--key", "page",
         "--window", "1", "--threshold", str(THRESHOLD), "--json", "--redact",
         "--checkpoint-dir", str(checkpoint)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), str(checkpoint / STATE_FILE),
         str(Path(__file__).parent)],
    )  # fmt: skip
    windows, seen = [], set()
    deadline = time.monotonic() + 120
    while len(seen) < 5 and time.monotonic() < deadline:
        line = doctor.stdout.readline()
        if not line:
            break
        windows.append(json.loads(line))
        seen |= set(windows[-1]["files"])
    assert writer.wait(timeout=60) == 0
    doctor.send_signal(signal.SIGINT)
    out, err = doctor.communicate(timeout=60)
    assert doctor.returncode == 0, err[-2000:]
    windows += [json.loads(line) for line in out.splitlines() if line.strip()]
    # --redact: every key a stable hash; mapped back to check the counts
    named = {redact_key(k): k for k in {*COLD, "hot"}}
    for w in windows:
        for h in (*w["hot"], *w["run_hot"]):
            h["key"] = named[h["key"]]
    assert "hot " not in err and redact_key("hot") in err
    # every file read once, by one window, the windows numbered in order
    files = [f for w in windows for f in w["files"]]
    assert sorted(files) == sorted(set(files)) and len(files) == 5
    assert [w["window"] for w in windows] == list(range(len(windows)))
    assert len(windows) >= 3  # the files arrived over several windows
    ages: dict[str, list[int]] = {}
    for w in windows:
        check_window(w, ages)
    last = windows[-1]
    total = exact(files)
    assert last["run_records"] == sum(total.values()) + 20 and last["run_null_keys"] == 20
    run_hot = {h["key"]: h for h in last["run_hot"]}
    assert expected_hot(total) == {"hot"} <= set(run_hot)
    assert all(h["lower"] <= total[k] <= h["upper"] for k, h in run_hot.items())
    assert "stopped by Ctrl-C" in err and "summary: " in err and "Traceback" not in err


def _follow(folder, checkpoint, **kw):
    got = []
    state = follow(folder, "page", window_seconds=0.5, threshold=THRESHOLD, idle_seconds=1.5,
                   checkpoint_dir=checkpoint, on_window=got.append, **kw)  # fmt: skip
    return state, [w.to_json() for w in got]


def test_a_restarted_follow_resumes_without_counting_a_file_or_a_replayed_batch_twice(
    spark, tmp_path
):
    folder, checkpoint = tmp_path / "incoming", tmp_path / "checkpoint"
    folder.mkdir()
    write(folder, 0)
    write(folder, 1)
    first, before = _follow(folder, checkpoint, spark=spark)
    assert first.stopped_by.startswith("no new records") and first.windows == len(before) >= 1
    # Spark forgets it committed the last micro-batch: it replays it on restart, and the
    # doctor, which counted it, must not count it again
    folder_of_commits = checkpoint / "query" / "commits"
    last = max(int(p.name) for p in folder_of_commits.iterdir() if p.name.isdigit())
    (folder_of_commits / str(last)).unlink()
    (folder_of_commits / f".{last}.crc").unlink(missing_ok=True)
    write(folder, 2)
    write(folder, 3)
    second, after = _follow(folder, checkpoint, spark=spark)
    files = [f for w in before + after for f in w["files"]]
    assert sorted(files) == sorted(set(files)) and len(files) == 4
    assert [w["window"] for w in before + after] == list(range(second.windows))
    total = exact(files)
    last = after[-1]
    assert last["run_records"] == sum(total.values()) + 20
    assert {h["key"] for h in last["run_hot"]} == expected_hot(total) == {"hot"}
    ages: dict[str, list[int]] = {}
    for w in before + after:
        check_window(w, ages)
    assert FollowState.load(checkpoint / STATE_FILE).batch_id == second.batch_id


def test_memory_stays_bounded_the_history_and_the_sketch_whatever_the_streams_length(
    spark, tmp_path, monkeypatch
):
    monkeypatch.setattr(follow_module, "HISTORY", 2)
    folder, checkpoint = tmp_path / "incoming", tmp_path / "checkpoint"
    folder.mkdir()
    # 20,000 distinct keys: far more than the sketch's 2**10 counters
    many = pd.DataFrame({"page": [f"u{j}" for j in range(20_000)] + ["hot"] * 10_000})
    many.to_json(folder / "many.json", orient="records", lines=True)
    state, windows = _follow(folder, checkpoint, spark=spark, lg_max_map_size=10)
    sizes = []
    for i in range(2):
        write(folder, 10 + i)
        more, got = _follow(folder, checkpoint, spark=spark, lg_max_map_size=10)
        sizes.append((checkpoint / STATE_FILE).stat().st_size)
        windows += got
    assert len(more.history) == 2 < len(windows)
    # the run's sketch keeps at most 3/4 of 2**10 counters however many keys went by
    from datasketches import frequent_strings_sketch

    sketch = frequent_strings_sketch.deserialize(more.run_sketch)
    assert sketch.num_active_items <= 0.75 * 2**10
    assert max(sizes) < 2 * min(sizes)
    assert windows[-1]["run_hot"][0]["key"] == "hot"


@pytest.mark.parametrize(
    ("make", "args", "says"),
    [
        (lambda d: None, ["--key", "page"], "no such folder to follow"),
        (lambda d: d.mkdir(), ["--key", "page"], "no readable files"),
        (lambda d: write(d.mkdir() or d, 0), ["--key", "page", "--threshold", "1"], "below 1"),
        (lambda d: write(d.mkdir() or d, 0), ["--key", "page", "--threshold", "0"], "threshold"),
        (lambda d: write(d.mkdir() or d, 0), ["--key", "page", "--window", "0"], "window"),
        (lambda d: write(d.mkdir() or d, 0), [], "--key is required with --follow"),
        (
            lambda d: write(d.mkdir() or d, 0),
            ["--key", "user"],
            "no key column 'user' in f0.json: its columns are n, page",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2_before_spark_starts(
    tmp_path, capsys, monkeypatch, make, args, says
):
    monkeypatch.setenv("SKEWLAB_SPARK_MASTER", "local[abc]")  # had Spark started, this error
    folder = tmp_path / "incoming"
    make(folder)
    assert main(["doctor", "--follow", str(folder), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and says in err and "Spark master" not in err, err


def test_a_key_column_the_files_lack_is_named_with_their_columns_in_every_format(tmp_path):
    from skewlab.doctor.live_hot_keys import check_follow_inputs
    from skewlab.errors import SkewlabInputError

    for fmt, save in (
        ("parquet", lambda f, p: f.to_parquet(p, index=False)),
        ("csv", lambda f, p: f.to_csv(p, index=False)),
        ("jsonl", lambda f, p: f.to_json(p, orient="records", lines=True)),
    ):
        folder = tmp_path / fmt
        folder.mkdir()
        save(records_of(0), folder / f"f0.{'json' if fmt == 'jsonl' else fmt}")
        assert check_follow_inputs(folder, 0.1, 1.0, None, "page") == (folder, fmt)
        with pytest.raises(SkewlabInputError, match="no key column 'user' in f0.* n, page$"):
            check_follow_inputs(folder, 0.1, 1.0, None, "user")


def test_file_drops_give_one_part_a_window_and_the_board_figure_and_text_say_its_windows(
    spark, tmp_path
):
    from skewlab.doctor.live_hot_keys import FileDrops
    from skewlab.doctor.state_and_follow import FollowSection
    from skewlab.doctor.viz import HotKeysBoard, describe_follow, follow_figure

    frame = pd.concat([records_of(i) for i in range(3)], ignore_index=True)
    drops = FileDrops(spark.createDataFrame(frame.astype({"page": object})), parts=3,
                      order_by="n", folder=tmp_path / "incoming")  # fmt: skip
    board = HotKeysBoard(then=drops.after_window)
    cache_sizes = []  # Spark's file listing cache: off while the follow runs, then as it was

    def on_window(window) -> None:
        cache_sizes.append(spark.conf.get(follow_module.FILE_STATUS_CACHE))
        board.update(window)

    before = spark.conf.get(follow_module.FILE_STATUS_CACHE)
    follow(drops.folder, "page", window_seconds=0.5, threshold=THRESHOLD, idle_seconds=1,
           on_window=on_window, spark=spark)  # fmt: skip
    assert cache_sizes == ["0"] * 3 and spark.conf.get(follow_module.FILE_STATUS_CACHE) == before
    assert drops.dropped == 3 and [len(w.files) for w in board.windows] == [1, 1, 1]
    for w in board.windows:  # each part's records, exactly, and its hot keys' bounds
        part = pd.read_parquet(w.files[0].removeprefix("file:"))
        assert w.records == len(part) and w.null_keys == int(part["page"].isna().sum())
        counts = Counter(part["page"].dropna())
        assert expected_hot(counts) <= {h.key for h in w.hot}
        assert all(h.lower <= counts[h.key] <= h.upper for h in w.hot)
    section = FollowSection(tuple(board.windows), THRESHOLD)
    assert FollowSection.from_json(section.to_json()) == section  # as a reference keeps it
    fig = follow_figure(section)
    for trace in fig.data:
        assert list(trace.y) == [
            next((h.share for h in w.hot if h.key == trace.name), None) for w in board.windows
        ]
    text = describe_follow(section)
    assert text.startswith(f"This run's follow: 3 windows, {len(frame):,} records")
    assert "<pre>" in board.widget.value and "window 2" in board.widget.value


def test_files_in_partition_folders_count_and_hidden_ones_do_not(tmp_path):
    from skewlab.doctor.live_hot_keys import check_follow_inputs
    from skewlab.errors import SkewlabInputError

    (tmp_path / "_spark_metadata").mkdir()
    (tmp_path / "_spark_metadata" / "0").write_text("v1")
    (tmp_path / ".f1.json.tmp").write_text("{}")
    with pytest.raises(SkewlabInputError, match="no readable files"):
        check_follow_inputs(tmp_path, 0.1, 1.0, None)
    (tmp_path / "date=2026-11-30").mkdir()
    write(tmp_path / "date=2026-11-30", 0)
    assert check_follow_inputs(tmp_path, 0.1, 1.0, None) == (tmp_path, "jsonl")


def test_a_checkpoint_dir_of_someone_elses_files_is_refused_before_spark_starts(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("SKEWLAB_SPARK_MASTER", "local[abc]")  # had Spark started, this error
    folder, theirs = tmp_path / "incoming", tmp_path / "mine"
    folder.mkdir()
    write(folder, 0)
    theirs.mkdir()
    (theirs / "notes.txt").write_text("a user's file")
    args = ["doctor", "--follow", str(folder), "--key", "page", "--checkpoint-dir", str(theirs)]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "holds files a follow did not write (notes.txt)" in err, err
    assert sorted(p.name for p in theirs.iterdir()) == ["notes.txt"]
    assert (theirs / "notes.txt").read_text() == "a user's file"


def test_file_drops_never_write_into_a_folder_of_someone_elses_files(tmp_path):
    from skewlab.doctor.live_hot_keys import FileDrops
    from skewlab.errors import SkewlabInputError

    theirs = tmp_path / "part-000.parquet"
    theirs.write_text("a user's file")
    with pytest.raises(SkewlabInputError, match="is not empty"):
        FileDrops(None, folder=tmp_path)  # refused before the records are read
    assert theirs.read_text() == "a user's file"


def test_the_rate_source_streams_a_key_that_turns_hot_and_the_doctor_names_it_with_its_age(
    spark,
):
    from skewlab.doctor.live_hot_keys import RateSource

    rate = RateSource.parse("rate:2000:2")  # 2,000 records a second, 'hot' from the 2nd second
    windows, stop = [], threading.Event()

    def on_window(window) -> None:
        windows.append(window.to_json())
        if window.run_records >= 5 * rate.rows_per_second:  # 'hot' for 3 seconds or more
            stop.set()

    state = follow("rate:2000:2", "key", window_seconds=0.5, threshold=0.1, on_window=on_window,
                   stop=stop, spark=spark)  # fmt: skip
    assert state.stopped_by == "asked" and len(windows) >= 3
    # the source numbers its records 0, 1, ...: a window read the next run of numbers
    ages: dict[str, list[int]] = {}
    start = 0
    for w in windows:
        counts = Counter(rate.key(v) for v in range(start, start + w["records"]))
        start += w["records"]
        check_window(w, ages, counts, threshold=0.1)
        assert w["files"] == []
    total = Counter(rate.key(v) for v in range(start))
    run_hot = {h["key"]: h for h in windows[-1]["run_hot"]}
    assert set(run_hot) == {"hot"} and run_hot["hot"]["lower"] <= total["hot"]
    assert total["hot"] <= run_hot["hot"]["upper"]
    # it turned hot in the window that read the 2nd second's records, and stayed hot
    turned = next(i for i, w in enumerate(windows) if w["hot"])
    assert sum(w["records"] for w in windows[: turned + 1]) > 2 * rate.rows_per_second
    assert windows[-1]["hot"][0]["hot_since"] == turned
    assert windows[-1]["hot"][0]["windows_hot"] == len(windows) - turned


@pytest.mark.parametrize(
    ("source", "args", "says"),
    [
        ("rate:abc", [], "'rate:abc' is not a rate source: use rate:N"),
        ("rate:0", [], "is not a rate source"),
        ("rate:10:2:3", [], "is not a rate source"),
        ("rate:100", ["--key", "page"], "the rate source's key column is 'key'"),
        ("rate:100", ["--format", "csv"], "--format is for files"),
    ],
)
def test_a_bad_rate_source_is_one_line_exit_2_before_spark_starts(
    capsys, monkeypatch, source, args, says
):
    monkeypatch.setenv("SKEWLAB_SPARK_MASTER", "local[abc]")  # had Spark started, this error
    assert main(["doctor", "--follow", source, *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and says in err and "Spark master" not in err, err


def _follow_remote(url: str, folder: Path, checkpoint: Path, read=(), then=None):
    """``--follow`` through the server until every file in ``folder`` but those ``read``
    before (and those ``then`` writes after the first window) has been read; then Ctrl-C.
    The windows and stderr."""
    doctor = subprocess.Popen(
        [sys.executable, "-m", "skewlab", "doctor", "--follow", str(folder), "--key", "page",
         "--window", "1", "--threshold", str(THRESHOLD), "--json",
         "--checkpoint-dir", str(checkpoint), "--remote", url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    windows, seen = [], set(read)
    deadline = time.monotonic() + 180
    try:
        while time.monotonic() < deadline:
            line = doctor.stdout.readline()
            if not line:
                break
            windows.append(json.loads(line))
            seen |= {Path(f.removeprefix("file:")).name for f in windows[-1]["files"]}
            if then is not None:
                then()
                then = None
            if seen >= {p.name for p in folder.iterdir() if not p.name.startswith(".")}:
                break
    finally:
        doctor.send_signal(signal.SIGINT)
        out, err = doctor.communicate(timeout=120)
    assert doctor.returncode == 0, err[-3000:]
    return windows + [json.loads(line) for line in out.splitlines() if line.strip()], err


@pytest.mark.e2e  # a Spark Connect server's JVM of its own: CI runs it (--e2e)
def test_a_stream_followed_through_spark_connect_names_its_hot_keys_and_resumes(
    spark, connect_server, tmp_path
):
    from skewlab.doctor.live_hot_keys import FollowState, _Follower
    from skewlab.doctor.options import DoctorOptions
    from skewlab.state.key_groups import compute_default_max_parallelism

    folder, checkpoint = tmp_path / "incoming", tmp_path / "checkpoint"
    folder.mkdir()
    write(folder, 0)
    write(folder, 1)
    first, err = _follow_remote(
        connect_server, folder, checkpoint, then=lambda: (write(folder, 2), write(folder, 3))
    )
    assert "stopped by Ctrl-C" in err and "Traceback" not in err
    write(folder, 4)  # a restart with the same checkpoint: no file counted twice
    read = {Path(f.removeprefix("file:")).name for w in first for f in w["files"]}
    second, _ = _follow_remote(connect_server, folder, checkpoint, read)
    windows = first + second
    files = [f for w in windows for f in w["files"]]
    assert sorted(files) == sorted(set(files)) and len(files) == 5
    assert [w["window"] for w in windows] == list(range(len(windows))) and len(first) >= 2
    ages: dict[str, list[int]] = {}
    for w in windows:
        check_window(w, ages)  # exact counts inside the bounds, no hot key missed, the ages
    total = exact(files)
    assert windows[-1]["run_records"] == sum(total.values()) + 20
    assert {h["key"] for h in windows[-1]["run_hot"]} == {"hot"}
    # each hot key placed where the embedded session places it (Spark's partition by Spark)
    largest = DoctorOptions().largest_parallelism
    follower = _Follower(
        spark, "page", "string", threshold=THRESHOLD, lg=10, parallelism=largest,
        max_parallelism=compute_default_max_parallelism(largest), partitions=largest,
        state=FollowState(lg_max_map_size=10), state_path=None, on_window=None,
    )  # fmt: skip
    for w in windows:
        for h in (*w["hot"], *w["run_hot"]):
            assert h["places"] == follower._placed([h["key"]])[h["key"]]
