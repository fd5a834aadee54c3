"""Tests of skewlab.state.java_hash: Java's hashCode of String, Integer and Long keys."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skewlab.errors import SkewlabInputError
from skewlab.state.java_hash import (
    java_hash_array,
    java_int_hash,
    java_int_hash_array,
    java_long_hash,
    java_long_hash_array,
    java_string_hash,
    java_string_hash_array,
    java_type_of_spark,
    key_hash,
)

INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
LONG = st.integers(min_value=-(2**63), max_value=2**63 - 1)
TEXT = st.text(max_size=30)  # hypothesis text includes non-BMP characters and surrogates


def _java_int(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def _string_hash_by_formula(units: list[int]) -> int:
    """s[0]*31^(n-1) + ... + s[n-1], wrapped to a Java int, from explicit UTF-16 code units."""
    n = len(units)
    return _java_int(sum(u * 31 ** (n - 1 - i) for i, u in enumerate(units)))


# --------------------------------------------------------------------------------------------
# Java hash codes


def test_java_string_hash_known_values():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97


def test_java_string_hash_non_ascii_by_hand():
    # "héllo": é is U+00E9, one UTF-16 code unit
    units = [0x68, 0xE9, 0x6C, 0x6C, 0x6F]
    assert java_string_hash("h\u00e9llo") == _string_hash_by_formula(units) == 103094734


def test_java_string_hash_surrogate_pair_by_hand():
    # U+1F600 (grinning face) is the surrogate pair D83D DE00 in UTF-16, as Java stores it
    units = [ord("a"), 0xD83D, 0xDE00, ord("b")]
    assert java_string_hash("a\U0001f600b") == _string_hash_by_formula(units) == 57849694
    # two code units, not one code point: differs from hashing the code point
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00
    assert java_string_hash("\U0001f600") != 0x1F600


def test_java_string_hash_wraps_to_signed_32_bits():
    s = "a considerably longer string whose hash overflows many times"
    h = java_string_hash(s)
    assert -(2**31) <= h < 2**31
    assert h == _string_hash_by_formula([ord(c) for c in s])


def test_java_long_hash_known_values():
    # Long.hashCode(v) = (int) (v ^ (v >>> 32))
    assert java_long_hash(0) == 0
    assert java_long_hash(42) == 42
    assert java_long_hash(1 << 32) == 1
    assert java_long_hash(-1) == 0
    assert java_long_hash(-(2**63)) == -(2**31)
    assert java_long_hash(2**63 - 1) == -(2**31)
    assert java_long_hash(123456789012345) == -2045923535


@given(LONG)
def test_java_long_hash_matches_definition(x):
    v = x & 0xFFFFFFFFFFFFFFFF
    assert java_long_hash(x) == _java_int(v ^ (v >> 32))


def test_java_long_hash_rejects_out_of_range():
    with pytest.raises(SkewlabInputError, match="64-bit"):
        java_long_hash(2**63)


def test_java_int_hash_is_the_value_and_refuses_wider_numbers():
    assert [java_int_hash(v) for v in (0, 42, -1, -(2**31), 2**31 - 1)] == [
        0, 42, -1, -(2**31), 2**31 - 1,
    ]  # fmt: skip
    with pytest.raises(SkewlabInputError, match="32-bit"):
        java_int_hash(2**31)


def test_key_hash_dispatch():
    assert key_hash("hello") == java_string_hash("hello")
    assert key_hash(1 << 32) == java_long_hash(1 << 32) == 1
    assert key_hash(np.int64(7)) == 7
    # a 32-bit integer is a Java Integer: hashed as itself, not as a Long
    assert key_hash(np.int32(-5)) == -5 and key_hash(-5) == java_long_hash(-5) == 4
    assert key_hash(np.int16(-1)) == -1 and key_hash(np.int64(-1)) == 0
    with pytest.raises(SkewlabInputError, match="str or int"):
        key_hash(True)
    with pytest.raises(SkewlabInputError, match="str or int"):
        key_hash(1.5)


@settings(max_examples=60)
@given(st.lists(TEXT, max_size=40))
def test_java_string_hash_array_equals_scalar(strings):
    expected = [java_string_hash(s) for s in strings]
    result = java_string_hash_array(strings)
    assert result.dtype == np.int32
    assert result.tolist() == expected


def test_java_string_hash_array_accepts_iterables_and_rejects_non_str():
    assert java_string_hash_array(iter(["hello"])).tolist() == [99162322]
    assert java_string_hash_array([]).shape == (0,)
    with pytest.raises(SkewlabInputError, match="expected str"):
        java_string_hash_array(["a", 1])


@settings(max_examples=60)
@given(st.lists(LONG, max_size=40))
def test_java_long_hash_array_equals_scalar(values):
    result = java_long_hash_array(np.array(values, dtype=np.int64))
    assert result.dtype == np.int32
    assert result.tolist() == [java_long_hash(v) for v in values]


@settings(max_examples=60)
@given(st.lists(INT32, max_size=40))
def test_java_int_hash_array_equals_scalar(values):
    result = java_int_hash_array(np.array(values, dtype=np.int64))
    assert result.dtype == np.int32
    assert result.tolist() == [java_int_hash(v) for v in values]


def test_java_hash_array_follows_the_spark_column_type():
    values = [-1, 1, -(2**31)]
    assert java_type_of_spark("int") == "Integer" and java_type_of_spark("bigint") == "Long"
    assert java_hash_array(values, java_type_of_spark("int")).tolist() == [-1, 1, -(2**31)]
    assert java_hash_array(values, java_type_of_spark("bigint")).tolist() == [
        java_long_hash(v) for v in values
    ]
    with pytest.raises(SkewlabInputError, match="must be string, tinyint, smallint, int or bigint"):
        java_type_of_spark("double")
    with pytest.raises(SkewlabInputError, match="32-bit"):
        java_int_hash_array([2**31])
