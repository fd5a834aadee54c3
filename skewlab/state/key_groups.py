"""Flink's key-group assignment (``KeyGroupRangeAssignment``) as small pure functions.

Flink never routes a key straight to a subtask. A key is first hashed into one of
``max_parallelism`` *key groups*::

    key_group = MathUtils.murmurHash(key.hashCode()) % max_parallelism

and each of the ``parallelism`` subtasks owns a contiguous range of key groups::

    operator_index = key_group * parallelism // max_parallelism
    range(i)       = [ceil(i * maxP / p), ceil((i + 1) * maxP / p) - 1]

Rescaling moves whole key groups, never single keys, which is why a savepoint can be split
by key-group range. Using Java's ``hashCode`` (:mod:`skewlab.state.java_hash`) and Flink's
``murmurHash`` here makes the numbers identical to those of a real Flink job.

The names mirror Flink's (``assignToKeyGroup`` -> :func:`assign_to_key_group`, ...). The
``*_array`` functions are numpy versions for whole columns; they give exactly the same numbers
as the scalar functions.

Example::

    >>> from skewlab.state.key_groups import assign_to_key_group, assign_key_to_parallel_operator
    >>> assign_to_key_group("hello", 128)
    35
    >>> assign_key_to_parallel_operator("hello", 128, 4)
    1
    >>> compute_key_group_range_for_operator_index(128, 4, 1)
    KeyGroupRange(start_key_group=32, end_key_group=63)
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from skewlab.errors import SkewlabInputError
from skewlab.state.java_hash import key_hash
from skewlab.validation import check_whole

__all__ = [
    "LOWER_BOUND_MAX_PARALLELISM",
    "UPPER_BOUND_MAX_PARALLELISM",
    "KeyGroupRange",
    "assign_key_to_parallel_operator",
    "assign_to_key_group",
    "assign_to_key_group_array",
    "check_parallelism",
    "compute_default_max_parallelism",
    "compute_key_group_range_for_operator_index",
    "compute_operator_index_for_key_group",
    "murmur_hash",
    "round_up_to_power_of_two",
]

#: Flink's ``KeyGroupRangeAssignment.DEFAULT_LOWER_BOUND_MAX_PARALLELISM`` (``1 << 7``): the
#: smallest *default* max parallelism. An explicitly set max parallelism may be lower.
LOWER_BOUND_MAX_PARALLELISM = 128

#: Flink's ``KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM`` (``1 << 15``), inclusive.
UPPER_BOUND_MAX_PARALLELISM = 32768

_MASK32 = 0xFFFFFFFF
_INT_MIN = -(1 << 31)

# --------------------------------------------------------------------------------------------
# Flink's MathUtils


def murmur_hash(code: int) -> int:
    """Flink's ``MathUtils.murmurHash(int)``: murmur3 (seed 0) of one int, made non-negative.

    One murmur3 body round with seed 0, ``h ^= 4`` (the length in bytes), the fmix32 finaliser,
    then ``abs`` -- where ``Integer.MIN_VALUE`` maps to 0, as in Flink.

    Example::

        >>> murmur_hash(0)
        593689054
        >>> murmur_hash(99162322)
        1715862179
    """
    k = (code * 0xCC9E2D51) & _MASK32
    k = ((k << 15) | (k >> 17)) & _MASK32
    k = (k * 0x1B873593) & _MASK32
    k = ((k << 13) | (k >> 19)) & _MASK32
    k = (k * 5 + 0xE6546B64) & _MASK32
    k ^= 4
    k ^= k >> 16
    k = (k * 0x85EBCA6B) & _MASK32
    k ^= k >> 13
    k = (k * 0xC2B2AE35) & _MASK32
    k ^= k >> 16
    if k & 0x80000000:
        # negative as a Java int: Flink returns -code, and 0 for Integer.MIN_VALUE
        return 0 if k == 0x80000000 else 0x100000000 - k
    return k


def round_up_to_power_of_two(x: int) -> int:
    """Flink's ``MathUtils.roundUpToPowerOfTwo`` for positive ``x``.

    Example::

        >>> round_up_to_power_of_two(5), round_up_to_power_of_two(8)
        (8, 8)
    """
    x = operator.index(x)
    return 1 if x <= 1 else 1 << (x - 1).bit_length()


# --------------------------------------------------------------------------------------------
# KeyGroupRangeAssignment


def assign_to_key_group(key: str | int, max_parallelism: int) -> int:
    """Flink's ``assignToKeyGroup``: ``murmur_hash(key_hash(key)) % max_parallelism``.

    Example::

        >>> assign_to_key_group("hello", 128)
        35
    """
    return murmur_hash(key_hash(key)) % max_parallelism


def compute_operator_index_for_key_group(
    max_parallelism: int, parallelism: int, key_group: int
) -> int:
    """Flink's ``computeOperatorIndexForKeyGroup``: ``key_group * parallelism // max_parallelism``.

    Example::

        >>> compute_operator_index_for_key_group(128, 3, 43)
        1
    """
    return key_group * parallelism // max_parallelism


def assign_key_to_parallel_operator(key: str | int, max_parallelism: int, parallelism: int) -> int:
    """Flink's ``assignKeyToParallelOperator``: the subtask index that owns ``key``.

    Example::

        >>> assign_key_to_parallel_operator("hello", 128, 4)
        1
    """
    return compute_operator_index_for_key_group(
        max_parallelism, parallelism, assign_to_key_group(key, max_parallelism)
    )


def assign_to_key_group_array(key_hashes: np.ndarray, max_parallelism: int) -> np.ndarray:
    """:func:`assign_to_key_group` for a whole array of Java hash codes (``int32`` values).

    The murmur hash runs in numpy ``uint32`` arithmetic (which wraps like Java's ``int``);
    the result is an ``int32`` array of key groups with the shape of ``key_hashes``.

    Example::

        >>> from skewlab.state.java_hash import java_string_hash_array
        >>> hashes = java_string_hash_array(["hello", "world"])
        >>> assign_to_key_group_array(hashes, 128).tolist()
        [35, 66]
    """
    arr = np.asarray(key_hashes)
    if arr.dtype != np.int32:
        if arr.dtype.kind not in "iu":
            raise SkewlabInputError(f"key hashes must be integers, got dtype {arr.dtype}")
        if arr.size and (int(arr.min()) < _INT_MIN or int(arr.max()) > _MASK32):
            raise SkewlabInputError("key hashes must be 32-bit Java int values")
        arr = arr.astype(np.int64).astype(np.uint32)  # keeps the low 32 bits
    shape = arr.shape
    h = arr.reshape(-1).view(np.uint32)
    u32 = np.uint32
    h = h * u32(0xCC9E2D51)
    h = (h << u32(15)) | (h >> u32(17))
    h *= u32(0x1B873593)
    h = (h << u32(13)) | (h >> u32(19))
    h *= u32(5)
    h += u32(0xE6546B64)
    h ^= u32(4)
    h ^= h >> u32(16)
    h *= u32(0x85EBCA6B)
    h ^= h >> u32(13)
    h *= u32(0xC2B2AE35)
    h ^= h >> u32(16)
    # Java's abs with Integer.MIN_VALUE -> 0: in uint32, values >= 2**31 are negative ints
    negative = h >= u32(0x80000000)
    h = np.where(negative, u32(0) - h, h)  # -code; MIN_VALUE stays 0x80000000
    h[h == u32(0x80000000)] = 0
    return (h % u32(max_parallelism)).astype(np.int32).reshape(shape)


@dataclass(frozen=True)
class KeyGroupRange:
    """An inclusive range of key groups ``[start_key_group, end_key_group]``, like Flink's.

    ``end_key_group == start_key_group - 1`` is the empty range.

    Example::

        >>> r = KeyGroupRange(32, 63)
        >>> len(r), 40 in r, 64 in r, list(r)[:3]
        (32, True, False, [32, 33, 34])
    """

    start_key_group: int
    end_key_group: int

    def __post_init__(self) -> None:
        if self.start_key_group < 0 or self.end_key_group < self.start_key_group - 1:
            raise SkewlabInputError(
                f"invalid key-group range [{self.start_key_group}, {self.end_key_group}]"
            )

    def __contains__(self, key_group: object) -> bool:
        try:
            index = operator.index(key_group)  # ints and numpy integers
        except TypeError:
            return False
        return self.start_key_group <= index <= self.end_key_group

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.start_key_group, self.end_key_group + 1))

    def __len__(self) -> int:
        return self.end_key_group - self.start_key_group + 1


def check_parallelism(parallelism: int, max_parallelism: int) -> None:
    """Raise :class:`SkewlabInputError` unless ``1 <= parallelism <= max_parallelism <= 32768``.

    Flink accepts any explicitly set max parallelism from 1 to ``UPPER_BOUND_MAX_PARALLELISM``
    (32768, inclusive); the parallelism may not exceed it.

    Example::

        >>> check_parallelism(4, 128)
        >>> check_parallelism(4, 2)
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: parallelism (4) must not exceed max_parallelism (2)
    """
    check_whole("parallelism", parallelism, minimum=1)
    check_whole(
        "max_parallelism (Flink's bounds, inclusive)",
        max_parallelism,
        minimum=1,
        maximum=UPPER_BOUND_MAX_PARALLELISM,
    )
    if parallelism > max_parallelism:
        raise SkewlabInputError(
            f"parallelism ({parallelism}) must not exceed max_parallelism ({max_parallelism})"
        )


def compute_key_group_range_for_operator_index(
    max_parallelism: int, parallelism: int, operator_index: int
) -> KeyGroupRange:
    """Flink's ``computeKeyGroupRangeForOperatorIndex``: the key groups subtask ``i`` owns.

    ``start = ceil(i * maxP / p)`` and ``end = ceil((i + 1) * maxP / p) - 1``, computed in
    integer arithmetic exactly as Flink does.

    Example::

        >>> compute_key_group_range_for_operator_index(128, 3, 0)
        KeyGroupRange(start_key_group=0, end_key_group=42)
        >>> compute_key_group_range_for_operator_index(128, 3, 2)
        KeyGroupRange(start_key_group=86, end_key_group=127)
    """
    check_parallelism(parallelism, max_parallelism)
    if not 0 <= operator_index < parallelism:
        raise SkewlabInputError(
            f"operator_index must be between 0 and {parallelism - 1}, got {operator_index}"
        )
    start = (operator_index * max_parallelism + parallelism - 1) // parallelism
    end = ((operator_index + 1) * max_parallelism - 1) // parallelism
    return KeyGroupRange(start, end)


def compute_default_max_parallelism(parallelism: int) -> int:
    """Flink's ``computeDefaultMaxParallelism``: ``min(max(pow2(p + p // 2), 128), 32768)``.

    Example::

        >>> compute_default_max_parallelism(4), compute_default_max_parallelism(100)
        (128, 256)
    """
    check_whole("parallelism", parallelism, minimum=1, maximum=UPPER_BOUND_MAX_PARALLELISM)
    return min(
        max(round_up_to_power_of_two(parallelism + parallelism // 2), LOWER_BOUND_MAX_PARALLELISM),
        UPPER_BOUND_MAX_PARALLELISM,
    )
