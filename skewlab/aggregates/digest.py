"""Digests of a per-tweet result set: one string, equal exactly when every register is.

Example::

    >>> from skewlab.aggregates.reference import reference_aggregate
    >>> a = reference_aggregate([("v1", "u1", "t1")])
    >>> result_digest(a) == result_digest(dict(a))
    True
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Mapping

import numpy as np

from skewlab.aggregates.stats_state import StatsState

__all__ = ["result_digest"]


def result_digest(results: Mapping[str, StatsState]) -> str:
    """A stable digest of a per-tweet result set: same tweets and registers -> same digest.

    Independent of dict order; any register difference changes it.

    Example::

        >>> from skewlab.aggregates.reference import reference_aggregate
        >>> a = reference_aggregate([("v1", "u1", "t1")])
        >>> result_digest(a) == result_digest(dict(a))
        True
    """
    h = hashlib.sha256()
    for tweet_id in sorted(results):
        state = results[tweet_id]
        tid = tweet_id.encode("utf-8")
        h.update(struct.pack(">I", len(tid)))
        h.update(tid)
        h.update(state.views_reg.astype(np.int8, copy=False).tobytes())
        h.update(state.viewers_reg.astype(np.int8, copy=False).tobytes())
    return h.hexdigest()[:32]
