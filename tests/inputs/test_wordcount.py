"""The WordCount and FLIP-325 inputs, generated in Spark."""

from __future__ import annotations

import pytest

from skewlab.errors import SkewlabInputError
from skewlab.inputs.wordcount import flip325_input, flip325_key, validate_wordcount, wordcount_input


@pytest.mark.parametrize(
    ("n", "k", "key_type", "message"),
    [
        (0, 1, "int", "N \\(records\\) must be a whole number >= 1, got 0"),
        (10, 0, "int", "K \\(distinct keys\\) must be a whole number >= 1, got 0"),
        (10, 11, "int", "K=11 > N=10"),
        (10, 5, "float", "unknown key type 'float'"),
        (2.5, 1, "int", "got 2.5"),
    ],
)
def test_bad_wordcount_parameters_are_one_line_errors(n, k, key_type, message):
    with pytest.raises(SkewlabInputError, match=message) as info:
        validate_wordcount(n, k, key_type)
    assert "\n" not in str(info.value)


def test_wordcount_input_has_exactly_k_words(spark):
    from pyspark.sql import functions as F

    words = wordcount_input(spark, 1_000, 30, "string")
    per_word = words.groupBy("word").count()
    assert per_word.count() == 30
    assert {r["count"] for r in per_word.collect()} == {33, 34}
    assert words.agg(F.countDistinct("seq")).first()[0] == 1_000


def test_flip325_key_selector_and_input(spark):
    assert [flip325_key(x) for x in (0, 1, 999, 1000, 1500, 2000)] == [0, 1, 499, 500, 500, 0]
    rows = flip325_input(spark, 3_000).collect()
    assert [r.word for r in rows] == [flip325_key(r.seq) for r in rows]
