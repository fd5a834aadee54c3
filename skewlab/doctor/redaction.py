"""Keys as stable hashes, for a diagnosis that leaves the machine (a ticket, a chat): the same key
gets the same hash in every output and every run, and no key's value is printed. (Google Cloud
Dataflow likewise logs a hot key's value only when asked to.)

Example::

    >>> redact_key("user-42") == redact_key("user-42") != redact_key("user-43")
    True
    >>> redact_key("user-42")
    'key#9048e1940c'
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from typing import Any

from skewlab.doctor.schema import Diagnosis

__all__ = ["redact", "redact_key"]


def redact_key(key: Any) -> str | None:
    """``key`` as ``key#`` and 10 hex digits of its SHA-256 (its type and text); null stays null."""
    if key is None:
        return None
    digest = hashlib.sha256(f"{type(key).__name__}:{key}".encode()).hexdigest()
    return f"key#{digest[:10]}"


def redact(report: Diagnosis) -> Diagnosis:
    """A copy of a diagnosis with every key value replaced by :func:`redact_key`: the hot keys,
    the sketch's, the peak's. Counts, shares and loads are unchanged; the original is not
    touched.

    Example::

        >>> from skewlab.doctor.schema import EXAMPLE, Diagnosis
        >>> report = Diagnosis.from_json(EXAMPLE)
        >>> redact(report).hot_keys.top[0].key == redact_key("a"), report.hot_keys.top[0].key
        (True, 'a')
    """
    hot = report.hot_keys
    top = tuple(dataclasses.replace(row, key=redact_key(row.key)) for row in hot.top)
    sketch = copy.deepcopy(hot.sketch)
    for item in (sketch or {}).get("hot") or []:
        item["key"] = redact_key(item["key"])
    peak = report.peak and dataclasses.replace(report.peak, key=redact_key(report.peak.key))
    return report.replace(
        input=dataclasses.replace(report.input, keys_redacted=True),
        hot_keys=dataclasses.replace(hot, top=top, sketch=sketch),
        peak=peak,
    )
