"""Disk profiles: what one state read and one state write cost on a disk.

A :class:`DiskProfile` is a read and a write :class:`LatencyDistribution` measured at one block
size ("disk profile" is what a state access costs; a *size* -- tiny / quick / full -- is how big a
run is: :mod:`skewlab.experiments`). A distribution keeps what fio prints: the mean, the IOPS,
the latency histogram in fio's fixed buckets (``lat (usec): 250=0.02%, 500=0.73%, ...``), fio's
percentiles where known, and a sentence that says where the numbers come from.

Which mean the model uses
    fio prints two means per direction: ``clat`` (completion latency: from the moment the kernel
    has the request until it completes) and ``lat`` (total latency: from the moment fio starts to
    submit it). A state backend waits for the whole access, so :attr:`LatencyDistribution.mean_us`
    is fio's **lat** mean; the clat mean is kept beside it (``clat_mean_us``) for reference. On the
    seed's EBS runs the two differ by 0.3 us and 0.57 us out of 6,161 us and 7,707 us.

Buckets
    fio's histogram has fixed buckets. A bucket printed as ``750=5.60%`` under ``lat (usec)`` holds
    the I/Os that took at least the previous boundary (500 us) and less than 750 us. The last
    bucket, ``>=2000`` under ``lat (msec)``, is open-ended. In memory a bucket is a pair
    ``(upper bound in us, percent)`` with ``math.inf`` for that tail; in a profile's JSON file the
    buckets are stored the way fio's own JSON stores them (``{"usec": {"250": 0.02, ...},
    "msec": {..., ">=2000": 0.01}}``) so a transcription can be checked against fio's output line
    by line.

Shipped disk profiles live in ``data/latency/<name>.json`` (``ebs-article``: the seed's two fio
runs; ``local``: written by ``skewlab probe-disk``). Any ``fio --output-format=json`` result can be
imported with :func:`skewlab.iomodel.fio.profile_from_fio_json`.

Example::

    >>> from skewlab.iomodel.profiles import load_disk_profile
    >>> profile = load_disk_profile("ebs-article")
    >>> profile.block_size, profile.read.mean_us, profile.write.mean_us
    (8192, 6161.17, 7707.56)

The names before "disk profile" was the word (``LatencyProfile``, ``load_profile``,
``list_profiles``) still work for one release, as aliases of the new ones.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from skewlab.errors import SkewlabInputError
from skewlab.paths import data_dir

__all__ = [
    "FIO_BUCKET_UPPER_US",
    "FIO_PERCENTILES",
    "MEAN_KIND",
    "DiskProfile",
    "LatencyDistribution",
    "LatencyProfile",
    "bucket_label",
    "buckets_from_fio_maps",
    "buckets_from_samples",
    "check_block_size",
    "latency_dir",
    "list_disk_profiles",
    "list_profiles",
    "load_disk_profile",
    "load_profile",
    "parse_size",
    "read_json",
    "save_profile",
]

#: Which of fio's means a distribution's ``mean_us`` is (see the module docstring).
MEAN_KIND = "lat"

#: fio's histogram buckets, unit by unit, with the labels fio prints for them.
_FIO_BUCKET_LABELS: dict[str, tuple[str, ...]] = {
    "nsec": ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"),
    "usec": ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"),
    "msec": ("2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"),
}
_UNIT_US = {"nsec": 1e-3, "usec": 1.0, "msec": 1e3}
_UNIT_SHORT = {"nsec": "ns", "usec": "us", "msec": "ms"}


def _fio_buckets() -> list[tuple[str, str, float]]:
    """(unit, label, upper bound in us) for every fio bucket, in increasing order."""
    rows = []
    for unit, labels in _FIO_BUCKET_LABELS.items():
        for label in labels:
            upper = math.inf if label.startswith(">=") else float(label) * _UNIT_US[unit]
            rows.append((unit, label, upper))
    return rows


_FIO_BUCKETS = _fio_buckets()

#: Upper bounds (us) of fio's histogram buckets, increasing; the last is ``inf`` (``>=2000`` ms).
FIO_BUCKET_UPPER_US: tuple[float, ...] = tuple(upper for _, _, upper in _FIO_BUCKETS)
_LOWER_US = {
    upper: (FIO_BUCKET_UPPER_US[i - 1] if i else 0.0) for i, upper in enumerate(FIO_BUCKET_UPPER_US)
}

#: The percentiles fio reports by default (``--percentile_list``).
FIO_PERCENTILES: tuple[float, ...] = (
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9,
    99.95, 99.99,
)  # fmt: skip


def bucket_label(upper_us: float) -> str:
    """fio's label of the bucket whose upper bound is ``upper_us``, with its unit.

    Example::

        >>> bucket_label(750.0), bucket_label(4000.0), bucket_label(math.inf)
        ('750us', '4ms', '>=2000ms')
    """
    for unit, label, upper in _FIO_BUCKETS:
        if upper == upper_us:
            return f"{label}{_UNIT_SHORT[unit]}"
    raise SkewlabInputError(f"{upper_us} us is not the upper bound of one of fio's buckets")


def bucket_lower_us(upper_us: float) -> float:
    """The lower bound (us) of fio's bucket with upper bound ``upper_us``.

    Example::

        >>> bucket_lower_us(750.0), bucket_lower_us(2000.0), bucket_lower_us(math.inf)
        (500.0, 1000.0, 2000000.0)
    """
    try:
        return _LOWER_US[upper_us]
    except KeyError:
        raise SkewlabInputError(
            f"{upper_us} us is not the upper bound of one of fio's buckets"
        ) from None


def buckets_from_samples(latencies_us: Iterable[float]) -> tuple[tuple[float, float], ...]:
    """Histogram of latencies (us) in fio's buckets: ``((upper_us, percent), ...)``, non-empty only.

    A latency equal to a boundary falls into the next bucket, as in fio (a bucket is
    ``[lower, upper)``).

    Example::

        >>> buckets_from_samples([300.0, 400.0, 600.0, 2500.0])
        ((500.0, 50.0), (750.0, 25.0), (4000.0, 25.0))
    """
    values = np.asarray(list(latencies_us), dtype=float)
    if values.size == 0:
        return ()
    uppers = np.asarray(FIO_BUCKET_UPPER_US)
    index = np.searchsorted(uppers, values, side="right")
    counts = np.bincount(index, minlength=len(uppers))
    return tuple(
        (float(uppers[i]), float(100.0 * counts[i] / values.size))
        for i in range(len(uppers))
        if counts[i]
    )


def buckets_from_fio_maps(maps: Mapping[str, Mapping[str, float]], where: str):
    """``{"usec": {"250": 0.02}, "msec": {...}}`` -> ``((250.0, 0.02), ...)`` in fio's order.

    Example::

        >>> buckets_from_fio_maps({"usec": {"750": 5.6}, "msec": {"4": 90.0}}, "x")
        ((750.0, 5.6), (4000.0, 90.0))
    """
    by_key = {(unit, label): upper for unit, label, upper in _FIO_BUCKETS}
    out = []
    for unit, labels in maps.items():
        if unit not in _FIO_BUCKET_LABELS:
            raise SkewlabInputError(f"{where}: unknown bucket unit {unit!r} (nsec, usec or msec)")
        for label, percent in labels.items():
            if (unit, str(label)) not in by_key:
                raise SkewlabInputError(f"{where}: {label!r} is not one of fio's {unit} buckets")
            percent = float(percent)
            if not percent >= 0:
                raise SkewlabInputError(f"{where}.{unit}.{label}: percent must be >= 0")
            out.append((by_key[(unit, str(label))], percent))
    return tuple(sorted(out))


def _buckets_to_fio_maps(buckets: Sequence[tuple[float, float]]) -> dict[str, dict[str, float]]:
    maps: dict[str, dict[str, float]] = {}
    for upper, percent in buckets:
        for unit, label, bound in _FIO_BUCKETS:
            if bound == upper:
                maps.setdefault(unit, {})[label] = percent
                break
    return maps


def parse_size(text: str | int) -> int:
    """A size in bytes from ``8192``, ``"8k"``, ``"8KiB"`` or ``"1m"`` (k = 1024, as fio's default).

    Example::

        >>> parse_size("8k"), parse_size("8192"), parse_size(4096), parse_size("1MiB")
        (8192, 8192, 4096, 1048576)
    """
    if isinstance(text, int):
        value = text
    else:
        match = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)(?:i?[bB])?\s*", str(text))
        if not match:
            raise SkewlabInputError(f"not a size: {text!r} (try 8192 or 8k)")
        power = {"": 0, "k": 1, "m": 2, "g": 3}[match.group(2).lower()]
        value = int(match.group(1)) * 1024**power
    if value <= 0:
        raise SkewlabInputError(f"a size must be positive, got {text!r}")
    return value


@dataclass(frozen=True)
class LatencyDistribution:
    """The latency of one kind of access (read or write) at one block size.

    ``mean_us`` is fio's ``lat`` mean (see :data:`MEAN_KIND`). ``buckets`` is fio's histogram as
    ``((upper bound us, percent), ...)`` (``math.inf`` for the ``>=2000`` ms tail); ``percentiles``
    is fio's percentile table as ``((percent, us), ...)``. Either may be empty.

    Example::

        >>> d = LatencyDistribution(mean_us=400.0, buckets=((250.0, 20.0), (500.0, 60.0),
        ...                                                  (750.0, 20.0)))
        >>> d.quantile_us(50)
        375.0
    """

    mean_us: float
    iops: float | None = None
    buckets: tuple[tuple[float, float], ...] = ()
    percentiles: tuple[tuple[float, float], ...] = ()
    clat_mean_us: float | None = None
    min_us: float | None = None
    max_us: float | None = None
    stdev_us: float | None = None
    samples: int | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if not (math.isfinite(self.mean_us) and self.mean_us > 0):
            raise SkewlabInputError(f"a mean latency must be positive, got {self.mean_us}")
        buckets = tuple((float(u), float(p)) for u, p in self.buckets)
        for upper, percent in buckets:
            bucket_lower_us(upper)  # validates that it is one of fio's
            if not percent >= 0:
                raise SkewlabInputError(f"bucket percent must be >= 0, got {percent}")
        if buckets and sum(p for _, p in buckets) <= 0:
            raise SkewlabInputError("bucket percents add up to 0")
        object.__setattr__(self, "buckets", tuple(sorted(buckets)))
        pct = tuple(sorted((float(p), float(v)) for p, v in self.percentiles))
        for p, v in pct:
            if not (0 <= p <= 100 and v >= 0):
                raise SkewlabInputError(f"bad percentile entry ({p}, {v})")
        object.__setattr__(self, "percentiles", pct)

    @property
    def distribution_source(self) -> str:
        """What sampling uses: ``"percentiles"``, ``"buckets"`` or ``"mean only"``.

        fio's percentile table, where a profile has one, is finer than its buckets (a bucket
        such as [50, 100) us can hold 96 % of the I/Os), so it is preferred.
        """
        if self.percentiles:
            return "percentiles"
        if self.buckets:
            return "buckets"
        return "mean only"

    def _bucket_bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lower, upper, probability) per bucket, clipped to [min_us, max_us] where that fits.

        The open ``>=2000`` ms bucket ends at ``max_us`` when that lies beyond 2 s, and is a
        point at 2 s otherwise (so the tail is, if anything, under-estimated).
        """
        upper = np.array([u for u, _ in self.buckets], dtype=float)
        lower = np.array([bucket_lower_us(u) for u in upper], dtype=float)
        prob = np.array([p for _, p in self.buckets], dtype=float)
        prob = prob / prob.sum()
        tail = np.isinf(upper)
        upper[tail] = lower[tail]
        if self.max_us is not None:
            upper[tail] = np.maximum(lower[tail], self.max_us)
        lo = lower if self.min_us is None else np.maximum(lower, self.min_us)
        hi = upper if self.max_us is None else np.minimum(upper, np.maximum(self.max_us, lower))
        fits = lo <= hi
        return np.where(fits, lo, lower), np.where(fits, hi, upper), prob

    def quantile_us(self, percent: float) -> float | None:
        """The ``percent``-th percentile (us) of the distribution, exactly, without sampling.

        From fio's percentiles where known: linear between the listed points (and out to
        ``min_us`` and ``max_us``). Else from the buckets: the cumulative distribution is linear
        inside each bucket (a uniform spread between its bounds). ``None`` when only the mean is
        known.

        Example::

            >>> LatencyDistribution(100.0, buckets=((250.0, 50.0), (500.0, 50.0))).quantile_us(50)
            250.0
        """
        if not 0 <= percent <= 100:
            raise SkewlabInputError(f"a percentile must be in [0, 100], got {percent}")
        if self.percentiles:
            ps, vs = self._percentile_points()
            return float(np.interp(percent, ps, vs))
        if self.buckets:
            lower, upper, prob = self._bucket_bounds()
            cum = np.concatenate([[0.0], np.cumsum(prob)])
            q = percent / 100.0
            i = int(np.searchsorted(cum, q, side="left"))
            i = min(max(i, 1), len(prob))
            frac = 0.0 if prob[i - 1] == 0 else (q - cum[i - 1]) / prob[i - 1]
            frac = min(max(frac, 0.0), 1.0)
            return float(lower[i - 1] + frac * (upper[i - 1] - lower[i - 1]))
        return None

    def _percentile_points(self) -> tuple[np.ndarray, np.ndarray]:
        ps = [p for p, _ in self.percentiles]
        vs = [v for _, v in self.percentiles]
        if ps[0] > 0:
            ps.insert(0, 0.0)
            vs.insert(0, self.min_us if self.min_us is not None else vs[0])
        if ps[-1] < 100:
            ps.append(100.0)
            vs.append(self.max_us if self.max_us is not None else vs[-1])
        return np.asarray(ps), np.maximum.accumulate(np.asarray(vs))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` latencies (us) drawn from fio's percentiles (inverse CDF, linear between
        points), else from the buckets (uniform inside a bucket), else all equal to the mean.

        Example::

            >>> import numpy as np
            >>> d = LatencyDistribution(600.0, buckets=((750.0, 100.0),))
            >>> x = d.sample(np.random.default_rng(0), 1000)
            >>> bool(500 <= x.min() and x.max() < 750)
            True
        """
        if self.percentiles:
            ps, vs = self._percentile_points()
            return np.interp(rng.random(n) * 100.0, ps, vs)
        if self.buckets:
            lower, upper, prob = self._bucket_bounds()
            index = rng.choice(len(prob), size=n, p=prob)
            return lower[index] + (upper[index] - lower[index]) * rng.random(n)
        return np.full(n, self.mean_us)

    def bucket_mean_us(self) -> float | None:
        """The mean implied by the buckets alone (each bucket at its midpoint); ``None`` if none.

        A check on a transcription: it should land near ``mean_us`` unless the tail dominates.

        Example::

            >>> LatencyDistribution(1.0, buckets=((500.0, 50.0), (750.0, 50.0))).bucket_mean_us()
            500.0
        """
        if not self.buckets:
            return None
        lower, upper, prob = self._bucket_bounds()
        return float(np.sum(prob * (lower + upper) / 2.0))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (buckets in fio's own ``{"usec": {...}, "msec": {...}}`` layout)."""
        out: dict[str, Any] = {"mean_us": self.mean_us}
        for name in ("clat_mean_us", "iops", "min_us", "max_us", "stdev_us", "samples"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.buckets:
            out["buckets"] = _buckets_to_fio_maps(self.buckets)
        if self.percentiles:
            out["percentiles"] = {f"{p:g}": v for p, v in self.percentiles}
        out["source"] = self.source
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "distribution") -> LatencyDistribution:
        """Inverse of :meth:`to_dict`; a missing or bad field raises :class:`SkewlabInputError`."""
        if not isinstance(data, Mapping):
            raise SkewlabInputError(f"{where} must be an object")
        if "mean_us" not in data:
            raise SkewlabInputError(f"{where} has no mean_us")

        def num(name: str) -> float | None:
            value = data.get(name)
            if value is None:
                return None
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SkewlabInputError(f"{where}.{name} must be a number, got {value!r}")
            return float(value)

        buckets = data.get("buckets") or {}
        if not isinstance(buckets, Mapping):
            raise SkewlabInputError(f"{where}.buckets must be an object like {{'usec': {{...}}}}")
        percentiles = data.get("percentiles") or {}
        if not isinstance(percentiles, Mapping):
            raise SkewlabInputError(f"{where}.percentiles must be an object {{percent: us}}")
        samples = data.get("samples")
        return cls(
            mean_us=num("mean_us"),  # type: ignore[arg-type]
            iops=num("iops"),
            buckets=buckets_from_fio_maps(buckets, f"{where}.buckets"),
            percentiles=tuple((float(p), float(v)) for p, v in percentiles.items()),
            clat_mean_us=num("clat_mean_us"),
            min_us=num("min_us"),
            max_us=num("max_us"),
            stdev_us=num("stdev_us"),
            samples=None if samples is None else int(samples),
            source=str(data.get("source", "")),
        )


@dataclass(frozen=True)
class DiskProfile:
    """A disk's read and write latency at one block size (bytes): a disk profile.

    Example::

        >>> read, write = LatencyDistribution(1000.0), LatencyDistribution(3000.0)
        >>> p = DiskProfile("toy", 8192, read, write)
        >>> DiskProfile.from_dict(p.to_dict()) == p
        True
    """

    name: str
    block_size: int
    read: LatencyDistribution
    write: LatencyDistribution
    source: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise SkewlabInputError(f"a profile name must be non-empty, without '/': {self.name!r}")
        if isinstance(self.block_size, bool) or int(self.block_size) <= 0:
            raise SkewlabInputError(f"block_size must be positive, got {self.block_size}")
        object.__setattr__(self, "block_size", int(self.block_size))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "name": self.name,
            "block_size": self.block_size,
            "mean": MEAN_KIND,
            "source": self.source,
            "read": self.read.to_dict(),
            "write": self.write.to_dict(),
            **dict(self.extra),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "profile") -> DiskProfile:
        """Inverse of :meth:`to_dict`; a missing or bad field raises :class:`SkewlabInputError`."""
        if not isinstance(data, Mapping):
            raise SkewlabInputError(f"{where} must be a JSON object")
        for name in ("name", "block_size", "read", "write"):
            if name not in data:
                raise SkewlabInputError(f"{where} has no {name}")
        if data.get("mean", MEAN_KIND) != MEAN_KIND:
            raise SkewlabInputError(f"{where}: mean must be {MEAN_KIND!r}, got {data['mean']!r}")
        known = {"name", "block_size", "mean", "source", "read", "write"}
        return cls(
            name=str(data["name"]),
            block_size=parse_size(data["block_size"]),
            read=LatencyDistribution.from_dict(data["read"], f"{where}.read"),
            write=LatencyDistribution.from_dict(data["write"], f"{where}.write"),
            source=str(data.get("source", "")),
            extra={k: v for k, v in data.items() if k not in known},
        )


def latency_dir() -> Path:
    """``<root>/data/latency``: where shipped and measured disk profiles live.

    Example::

        >>> latency_dir().name
        'latency'
    """
    return data_dir() / "latency"


def list_disk_profiles() -> list[str]:
    """Names of the disk profiles in :func:`latency_dir`, sorted.

    Example::

        >>> "ebs-article" in list_disk_profiles()
        True
    """
    directory = latency_dir()
    if not directory.is_dir():
        return []
    return sorted(p.stem for p in directory.glob("*.json"))


def read_json(path: Path, what: str) -> Any:
    """The JSON in ``path``; a missing, unreadable or malformed file is a one-line
    :class:`~skewlab.errors.SkewlabInputError` naming ``what`` it should have been."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SkewlabInputError(f"no such {what} file: {path}") from None
    except OSError as exc:
        raise SkewlabInputError(f"cannot read {what} file {path}: {exc.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SkewlabInputError(f"{what} file {path} is not valid JSON: {exc}") from None


def load_disk_profile(name_or_path: str | Path) -> DiskProfile:
    """A disk profile by shipped name (``data/latency/<name>.json``) or by path to a JSON file.

    An unknown name raises :class:`SkewlabInputError` listing the known ones.

    Example::

        >>> load_disk_profile("ebs-article").write.iops
        1037.0
        >>> load_disk_profile("floppy")
        Traceback (most recent call last):
        ...
        skewlab.errors.SkewlabInputError: unknown disk profile 'floppy'; known: ebs-article...
    """
    text = str(name_or_path)
    looks_like_path = isinstance(name_or_path, Path) or text.endswith(".json") or "/" in text
    if looks_like_path:
        path = Path(text).expanduser()
    else:
        path = latency_dir() / f"{text}.json"
        if not path.is_file():
            known = ", ".join(list_disk_profiles()) or "none"
            hint = " (make 'local' with: skewlab probe-disk)" if text == "local" else ""
            raise SkewlabInputError(f"unknown disk profile {text!r}; known: {known}{hint}")
    return DiskProfile.from_dict(read_json(path, "disk profile"), where=path.name)


def save_profile(profile: DiskProfile, path: str | Path) -> Path:
    """Write the disk profile ``profile`` as JSON to ``path`` (parents created); returns the path.

    Example::

        >>> import tempfile, pathlib
        >>> p = load_disk_profile("ebs-article")
        >>> out = save_profile(p, pathlib.Path(tempfile.mkdtemp()) / "copy.json")
        >>> load_disk_profile(out) == p
        True
    """
    path = Path(path).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(profile.to_dict(), indent=2) + "\n", encoding="utf-8")
    return path


def check_block_size(profile: DiskProfile, block_size: int | str | None) -> int:
    """The block size to model with: the profile's own; any other is refused.

    A profile is a measurement at one block size, and small random I/O is bound by latency, not by
    bytes: 16 KiB does not take twice as long as 8 KiB, nor the same. Rather than invent a scaling
    law, skewlab asks for a profile measured at the size wanted (``fio --bs=...`` or
    ``skewlab probe-disk --block-size ...``).

    Example::

        >>> check_block_size(load_disk_profile("ebs-article"), "8k")
        8192
    """
    if block_size is None:
        return profile.block_size
    size = parse_size(block_size)
    if size != profile.block_size:
        raise SkewlabInputError(
            f"disk profile {profile.name!r} was measured at {profile.block_size}-byte blocks, not "
            f"{size}; latency does not scale with bytes, so measure a profile at {size} bytes "
            f"(skewlab probe-disk --block-size {size}, or fio --bs={size})"
        )
    return size


# The names before "disk profile" was the word: deprecated, kept for one release.
#: Deprecated alias of :class:`DiskProfile`.
LatencyProfile = DiskProfile
#: Deprecated alias of :func:`load_disk_profile`.
load_profile = load_disk_profile
#: Deprecated alias of :func:`list_disk_profiles`.
list_profiles = list_disk_profiles
