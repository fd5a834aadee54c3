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
import hashlib
from typing import Any

__all__ = ["redact", "redact_key"]


def redact_key(key: Any) -> str | None:
    """``key`` as ``key#`` and 10 hex digits of its SHA-256 (its type and text); null stays null."""
    if key is None:
        return None
    digest = hashlib.sha256(f"{type(key).__name__}:{key}".encode()).hexdigest()
    return f"key#{digest[:10]}"


def redact(report: dict[str, Any]) -> dict[str, Any]:
    """A copy of a diagnosis (:func:`~skewlab.doctor.diagnosis.diagnose`'s dict) with every key
    value replaced by :func:`redact_key`: the hot keys, the sketch's, the peak's. Counts, shares
    and loads are unchanged; the original is not touched.

    Example::

        >>> report = {"hot_keys": {"top": [{"rank": 1, "key": "a", "records": 8}]},
        ...           "peak": {"key": "a", "peak_records": 3}}
        >>> redact(report)["hot_keys"]["top"][0]["key"] == redact(report)["peak"]["key"]
        True
        >>> report["hot_keys"]["top"][0]["key"]
        'a'
    """
    out = copy.deepcopy(report)
    hot = out.get("hot_keys") or {}
    for row in hot.get("top") or []:
        row["key"] = redact_key(row["key"])
    sketch = hot.get("sketch") or {}
    for item in sketch.get("hot") or []:
        item["key"] = redact_key(item["key"])
    if out.get("peak"):
        out["peak"]["key"] = redact_key(out["peak"]["key"])
    out.setdefault("input", {})["keys_redacted"] = True
    return out
