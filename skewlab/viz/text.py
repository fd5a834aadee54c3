"""A share written as a percent the way a sentence about a measurement needs it: never rounded
to 0% when something was there, nor to 100% when something was missing.

Example::

    >>> [percent(v) for v in (0.0, 0.5, 0.135, 0.99995, 2.9e-05, 1.0)]
    ['0%', '50%', '13.5%', '99.995%', '0.0029%', '100%']
    >>> percent(None)
    '-'
"""

from __future__ import annotations

import math

__all__ = ["percent"]


def percent(share: float | None) -> str:
    """``share`` (a fraction) as a percent: one decimal at most where that is exact enough, two
    significant digits for a share under 0.1%, more decimals where one would round it to 100%;
    ``-`` for ``None``."""
    if share is None:
        return "-"
    value = share * 100
    if 0 < abs(value) < 0.1:
        decimals = 1 - math.floor(math.log10(abs(value)))
    else:
        decimals = 1
        while value != 100 and round(value, decimals) == 100 and decimals < 9:
            decimals += 1
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".") + "%"
