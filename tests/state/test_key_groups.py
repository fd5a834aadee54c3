"""Tests of skewlab.state.key_groups: Flink's key-group assignment, scalar and vectorised."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skewlab.errors import SkewlabInputError
from skewlab.state.java_hash import java_int_hash, java_string_hash_array
from skewlab.state.key_groups import (
    LOWER_BOUND_MAX_PARALLELISM,
    UPPER_BOUND_MAX_PARALLELISM,
    KeyGroupRange,
    assign_key_to_parallel_operator,
    assign_to_key_group,
    assign_to_key_group_array,
    check_parallelism,
    compute_default_max_parallelism,
    compute_key_group_range_for_operator_index,
    compute_operator_index_for_key_group,
    murmur_hash,
    round_up_to_power_of_two,
)

INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)


# --------------------------------------------------------------------------------------------
# An independent transcription of Flink's MathUtils.murmurHash(int), written against the
# Java source in Java's own terms (signed 32-bit ints that overflow, >>> as unsigned shift),
# to check skewlab.state.key_groups.murmur_hash, which works on unsigned values instead.


def _java_int(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= (1 << 31) else x


def _java_mul(a: int, b: int) -> int:
    return _java_int(a * b)


def _java_urshift(x: int, n: int) -> int:  # x >>> n
    return (x & 0xFFFFFFFF) >> n


def _java_rotate_left(x: int, n: int) -> int:  # Integer.rotateLeft
    return _java_int((x << n) | _java_urshift(x, 32 - n))


def flink_murmur_hash_transcribed(code: int) -> int:
    code = _java_mul(code, _java_int(0xCC9E2D51))
    code = _java_rotate_left(code, 15)
    code = _java_mul(code, 0x1B873593)
    code = _java_rotate_left(code, 13)
    code = _java_int(code * 5 + _java_int(0xE6546B64))
    code ^= 4
    code = _java_int(code ^ _java_urshift(code, 16))
    code = _java_mul(code, _java_int(0x85EBCA6B))
    code = _java_int(code ^ _java_urshift(code, 13))
    code = _java_mul(code, _java_int(0xC2B2AE35))
    code = _java_int(code ^ _java_urshift(code, 16))
    if code >= 0:
        return code
    if code != -(2**31):
        return -code
    return 0


def _unsigned_murmur_preimage(target: int) -> int:
    """The int whose murmur mix (before Flink's abs) is ``target`` (the mix is a bijection)."""

    def inv_xorshift(x: int, s: int) -> int:
        result = x
        for _ in range(32 // s + 1):
            result = x ^ (result >> s)
        return result & 0xFFFFFFFF

    def inv_mul(x: int, c: int) -> int:
        return (x * pow(c, -1, 1 << 32)) & 0xFFFFFFFF

    def rotr(x: int, n: int) -> int:
        return ((x >> n) | (x << (32 - n))) & 0xFFFFFFFF

    h = target
    h = inv_xorshift(h, 16)
    h = inv_mul(h, 0xC2B2AE35)
    h = inv_xorshift(h, 13)
    h = inv_mul(h, 0x85EBCA6B)
    h = inv_xorshift(h, 16)
    h ^= 4
    h = inv_mul((h - 0xE6546B64) & 0xFFFFFFFF, 5)
    h = rotr(h, 13)
    h = inv_mul(h, 0x1B873593)
    h = rotr(h, 15)
    h = inv_mul(h, 0xCC9E2D51)
    return _java_int(h)


def _string_hash_by_formula(units: list[int]) -> int:
    """s[0]*31^(n-1) + ... + s[n-1], wrapped to a Java int, from explicit UTF-16 code units."""
    n = len(units)
    return _java_int(sum(u * 31 ** (n - 1 - i) for i, u in enumerate(units)))


# --------------------------------------------------------------------------------------------
# murmur


# murmurHash(i) as printed by a Java 17 program running Flink's MathUtils.murmurHash source
JAVA_MURMUR = {
    0: 593689054,
    1: 68075478,
    -1: 1982413648,
    -(2**31): 1718298732,
    2**31 - 1: 1653689534,
    99162322: 1715862179,
}


@pytest.mark.parametrize("code", sorted(JAVA_MURMUR))
def test_murmur_hash_known_values(code):
    assert murmur_hash(code) == flink_murmur_hash_transcribed(code) == JAVA_MURMUR[code]


@given(INT32)
def test_murmur_hash_equals_transcription(code):
    result = murmur_hash(code)
    assert result == flink_murmur_hash_transcribed(code)
    assert 0 <= result < 2**31


def test_murmur_hash_min_value_maps_to_zero():
    # the one input whose mix is Integer.MIN_VALUE: Flink returns 0 for it (abs would overflow)
    code = _unsigned_murmur_preimage(0x80000000)
    assert flink_murmur_hash_transcribed(code) == 0
    assert murmur_hash(code) == 0
    assert assign_to_key_group_array(np.array([code], dtype=np.int32), 128).tolist() == [0]


def test_assign_to_key_group_known_values():
    # key groups of a real Flink job with max parallelism 128 (String keys)
    assert assign_to_key_group("hello", 128) == 35
    assert assign_to_key_group("", 128) == 94
    assert assign_to_key_group("tweet-123", 128) == 99
    assert assign_to_key_group(42, 128) == 1134849565 % 128  # Java: murmurHash(Long 42)


def test_integer_and_long_keys_of_the_same_number_are_different_keys():
    # Flink hashes an Integer key by its value and a Long key by (int) (v ^ v >>> 32): for
    # negative numbers the two differ, and so do their key groups (pinned below)
    for value in (-1, -5, -123_456):
        as_int = assign_to_key_group(np.int32(value), 128)
        as_long = assign_to_key_group(value, 128)
        assert as_int == murmur_hash(java_int_hash(value)) % 128
        assert as_int != as_long
    assert assign_to_key_group(np.int32(-1), 128) == JAVA_MURMUR[-1] % 128 == 80
    assert assign_to_key_group(-1, 128) == JAVA_MURMUR[0] % 128 == 94


# --------------------------------------------------------------------------------------------
# vectorised == scalar


@settings(max_examples=60)
@given(
    st.lists(INT32, max_size=60), st.integers(min_value=1, max_value=UPPER_BOUND_MAX_PARALLELISM)
)
def test_assign_to_key_group_array_equals_scalar(hashes, max_parallelism):
    result = assign_to_key_group_array(np.array(hashes, dtype=np.int32), max_parallelism)
    assert result.tolist() == [murmur_hash(h) % max_parallelism for h in hashes]


def test_assign_to_key_group_array_keeps_shape_and_accepts_int64():
    hashes = np.array([[0, -1], [2**31 - 1, -(2**31)]], dtype=np.int64)
    result = assign_to_key_group_array(hashes, 128)
    assert result.shape == (2, 2)
    assert result.ravel().tolist() == [murmur_hash(int(h)) % 128 for h in hashes.ravel()]
    with pytest.raises(SkewlabInputError, match="32-bit"):
        assign_to_key_group_array(np.array([2**40]), 128)
    with pytest.raises(SkewlabInputError, match="integers"):
        assign_to_key_group_array(np.array([1.5]), 128)


def test_string_keys_end_to_end_vectorised():
    keys = [f"tweet-{i}" for i in range(2000)] + ["h\u00e9llo", "a\U0001f600b", ""]
    groups = assign_to_key_group_array(java_string_hash_array(keys), 128)
    assert groups.tolist() == [assign_to_key_group(k, 128) for k in keys]


# --------------------------------------------------------------------------------------------
# ranges and operator indexes


def _check_partition(max_parallelism: int, parallelism: int) -> None:
    ranges = [
        compute_key_group_range_for_operator_index(max_parallelism, parallelism, i)
        for i in range(parallelism)
    ]
    # contiguous, non-empty, in order, covering [0, max_parallelism)
    assert ranges[0].start_key_group == 0
    assert ranges[-1].end_key_group == max_parallelism - 1
    for left, right in zip(ranges, ranges[1:], strict=False):
        assert right.start_key_group == left.end_key_group + 1
    assert all(len(r) >= 1 for r in ranges)
    assert sum(len(r) for r in ranges) == max_parallelism
    # every key group belongs to exactly the subtask operator_index_for_key_group names
    for index, key_group_range in enumerate(ranges):
        for key_group in key_group_range:
            assert (
                compute_operator_index_for_key_group(max_parallelism, parallelism, key_group)
                == index
            )


@pytest.mark.parametrize("max_parallelism", [1, 7, 128, 256, 1000])
def test_every_key_group_in_exactly_one_subtask_for_all_parallelisms(max_parallelism):
    for parallelism in range(1, max_parallelism + 1):
        _check_partition(max_parallelism, parallelism)


def test_key_groups_partition_at_upper_bound_sampled():
    rng = random.Random(20240325)
    parallelisms = {1, 2, 3, 4, 5, 7, 128, 1000, 4096, 32767, 32768}
    parallelisms.update(rng.randrange(1, UPPER_BOUND_MAX_PARALLELISM + 1) for _ in range(4))
    for parallelism in sorted(parallelisms):
        _check_partition(UPPER_BOUND_MAX_PARALLELISM, parallelism)


def test_range_formula_is_flinks_ceiling():
    # start = ceil(i*maxP/p), end = ceil((i+1)*maxP/p) - 1
    for max_parallelism, parallelism in [(128, 3), (128, 4), (1000, 7), (10, 10)]:
        for i in range(parallelism):
            r = compute_key_group_range_for_operator_index(max_parallelism, parallelism, i)
            assert r.start_key_group == -(-i * max_parallelism // parallelism)
            assert r.end_key_group == -(-(i + 1) * max_parallelism // parallelism) - 1
    assert compute_key_group_range_for_operator_index(128, 3, 1) == KeyGroupRange(43, 85)


def test_assign_key_to_parallel_operator_agrees_with_ranges():
    for key in ["hello", "tweet-7", 42, -3]:
        index = assign_key_to_parallel_operator(key, 128, 3)
        key_group_range = compute_key_group_range_for_operator_index(128, 3, index)
        assert assign_to_key_group(key, 128) in key_group_range


def test_key_group_range_behaves_like_a_collection():
    r = KeyGroupRange(3, 5)
    assert list(r) == [3, 4, 5]
    assert len(r) == 3
    assert 3 in r and 5 in r and 6 not in r and 2 not in r and "3" not in r
    assert np.int32(4) in r and np.int64(6) not in r
    empty = KeyGroupRange(0, -1)
    assert len(empty) == 0 and list(empty) == [] and 0 not in empty
    with pytest.raises(SkewlabInputError):
        KeyGroupRange(-1, 3)
    with pytest.raises(SkewlabInputError):
        KeyGroupRange(5, 2)
    with pytest.raises(AttributeError):
        r.start_key_group = 0  # frozen


# --------------------------------------------------------------------------------------------
# default max parallelism and parameter checks


def test_round_up_to_power_of_two():
    assert [round_up_to_power_of_two(x) for x in [1, 2, 3, 5, 8, 9, 1000]] == [
        1,
        2,
        4,
        8,
        8,
        16,
        1024,
    ]


def test_compute_default_max_parallelism():
    assert LOWER_BOUND_MAX_PARALLELISM == 128 and UPPER_BOUND_MAX_PARALLELISM == 32768
    assert compute_default_max_parallelism(1) == 128
    assert compute_default_max_parallelism(85) == 128  # 85 + 42 = 127 -> 128
    assert compute_default_max_parallelism(86) == 256  # 86 + 43 = 129 -> 256
    assert compute_default_max_parallelism(100) == 256
    assert compute_default_max_parallelism(20000) == 32768
    assert compute_default_max_parallelism(32768) == 32768
    assert compute_default_max_parallelism(np.int64(100)) == 256
    for bad in [0, -1, 32769, 2.0, True]:
        with pytest.raises(SkewlabInputError, match="parallelism"):
            compute_default_max_parallelism(bad)


def test_check_parallelism_accepts_flinks_bounds():
    check_parallelism(1, 1)
    check_parallelism(4, 128)
    check_parallelism(32768, 32768)
    check_parallelism(3, 5)  # an explicit max parallelism may be below 128
    check_parallelism(np.int64(2), np.int32(4))


@pytest.mark.parametrize(
    ("parallelism", "max_parallelism", "message"),
    [
        (0, 128, "parallelism must be a whole number >= 1, got 0"),
        (-2, 128, "parallelism must be a whole number >= 1, got -2"),
        (1, 0, r"max_parallelism \(Flink's bounds, inclusive\) must be a whole number from 1 to"),
        (1, 32769, "must be a whole number from 1 to 32768, got 32769"),
        (8, 4, r"parallelism \(8\) must not exceed max_parallelism \(4\)"),
        (1.0, 4, "parallelism must be a whole number >= 1, got 1.0"),
        (1, "128", "max_parallelism .* must be a whole number from 1 to 32768, got '128'"),
    ],
)
def test_check_parallelism_errors(parallelism, max_parallelism, message):
    with pytest.raises(SkewlabInputError, match=message) as info:
        check_parallelism(parallelism, max_parallelism)
    assert "\n" not in str(info.value)


def test_range_for_operator_index_checks_its_arguments():
    with pytest.raises(SkewlabInputError, match="operator_index"):
        compute_key_group_range_for_operator_index(128, 4, 4)
    with pytest.raises(SkewlabInputError, match="must not exceed"):
        compute_key_group_range_for_operator_index(4, 8, 0)
