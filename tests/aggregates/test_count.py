"""The count digest: exact, order-free, and adding over subtasks."""

from __future__ import annotations

from skewlab.aggregates.count import CountDigest, DigestSink, count_digest


def test_digest_detects_a_single_wrong_count():
    counts = {"a": 3, "b": 4}
    assert count_digest(counts) != count_digest({"a": 4, "b": 3})
    sink = DigestSink()
    for key, count in counts.items():
        sink.add(key, count)
    assert sink.digest() == count_digest(counts)
    assert CountDigest(1, 2, 3) + CountDigest(1, 1, -3) == CountDigest(2, 3, 0)
