"""The ``_metadata`` file: written atomically, refused in one line when missing or foreign."""

from __future__ import annotations

import pytest

from skewlab.errors import SkewlabInputError
from skewlab.state.metadata_file import METADATA_FILE, read_metadata, write_metadata


def test_metadata_round_trips_and_leaves_no_temporary_file(tmp_path):
    write_metadata(tmp_path, {"kind": "k", "format_version": 1, "x": [1, 2]})
    assert read_metadata(tmp_path, kind="k", version=1, where="w")["x"] == [1, 2]
    assert [p.name for p in tmp_path.iterdir()] == [METADATA_FILE]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: (d / "f").write_text("x") and d / "f", "w is a file, not a directory"),
        (lambda d: d / "missing", "w does not exist"),
        (lambda d: d, "w has no _metadata file"),
        (lambda d: (d / METADATA_FILE).write_text('{"kind": "k", "form') and d, "truncated"),
        (lambda d: (d / METADATA_FILE).write_text('{"kind": "q"}') and d, "is not a k's"),
        (
            lambda d: (d / METADATA_FILE).write_text('{"kind": "k", "format_version": 9}') and d,
            "format version 9 is unknown; this skewlab reads version 1",
        ),
    ],
)
def test_bad_metadata_is_refused_with_one_line(tmp_path, setup, message):
    with pytest.raises(SkewlabInputError) as err:
        read_metadata(setup(tmp_path), kind="k", version=1, where="w")
    assert message in str(err.value) and "\n" not in str(err.value)
