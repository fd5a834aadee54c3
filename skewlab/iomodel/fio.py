"""Import ``fio --output-format=json`` results as disk profiles.

Any fio run of random reads and writes at one block size becomes a
:class:`~skewlab.iomodel.profiles.DiskProfile`: the mean latency per direction (fio's
``lat``), IOPS, min / max, the latency histogram in fio's buckets where a job did only that
direction, and fio's percentile table where there is a single job. A missing or malformed field
is a one-line :class:`~skewlab.errors.SkewlabInputError` that names it.

Example::

    >>> from skewlab.paths import project_root
    >>> profile = profile_from_fio_json(project_root() / "tests/fixtures/fio-randrw-8k.json")
    >>> profile.block_size, round(profile.read.mean_us)
    (8192, 63)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skewlab.errors import SkewlabInputError
from skewlab.iomodel.profiles import (
    DiskProfile,
    LatencyDistribution,
    buckets_from_fio_maps,
    parse_size,
    read_json,
)

__all__ = ["profile_from_fio_json"]


def _join(where: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{where}[{part}]"
    return f"{where}.{part}" if where else part


def _get(data: Any, path: Sequence[str | int], where: str = "") -> Any:
    """``data[path[0]][path[1]]...`` or a SkewlabInputError naming the first missing field."""
    node = data
    shown = where
    for part in path:
        shown = _join(shown, part)
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            raise SkewlabInputError(f"fio result has no {shown}") from None
    return node


def _number(data: Any, path: Sequence[str | int], where: str = "") -> float:
    value = _get(data, path, where)
    if isinstance(value, bool) or not isinstance(value, int | float):
        shown = where
        for part in path:
            shown = _join(shown, part)
        raise SkewlabInputError(f"fio result field {shown} is not a number: {value!r}")
    return float(value)


def _fio_job_bs(result: Mapping[str, Any], job: Mapping[str, Any], direction: str) -> str | None:
    """fio's bs option for a direction (``"8k"``, or ``"4k,8k"`` for read,write), if given."""
    for options in (job.get("job options") or {}, result.get("global options") or {}):
        for key in ("bs", "blocksize"):
            if key in options:
                parts = str(options[key]).split(",")
                index = 0 if direction == "read" else 1
                return parts[index] if index < len(parts) and parts[index] else parts[0]
    return None


def _fio_latency_maps(job: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    maps = {}
    for unit, key in (("nsec", "latency_ns"), ("usec", "latency_us"), ("msec", "latency_ms")):
        if isinstance(job.get(key), Mapping):
            maps[unit] = {str(k): float(v) for k, v in job[key].items()}
    return maps


@dataclass(frozen=True)
class _JobPart:
    """One fio job's share of one direction: where it is, its result and job, and the
    direction's section with its I/O count."""

    where: str
    result: Mapping[str, Any]
    job: Mapping[str, Any]
    section: Mapping[str, Any]
    ios: float


def _jobs_that_did(results: Sequence[tuple[str, Mapping[str, Any]]], direction: str):
    """Every job with ``direction.total_ios > 0`` (an error if there is none, or one failed)."""
    parts = []
    for label, result in results:
        jobs = _get(result, ["jobs"], label)
        if not isinstance(jobs, list) or not jobs:
            raise SkewlabInputError(f"fio result has no {_join(_join(label, 'jobs'), 0)}")
        for i, job in enumerate(jobs):
            where = _join(_join(label, "jobs"), i)
            section = _get(job, [direction], where)
            ios = _number(section, ["total_ios"], _join(where, direction))
            if ios > 0:
                if job.get("error", 0):
                    raise SkewlabInputError(
                        f"fio {where} ({job.get('jobname')}) ended with error {job['error']}"
                    )
                parts.append(_JobPart(where, result, job, section, ios))
    if not parts:
        raise SkewlabInputError(
            f"fio result has no {direction} I/O (no job with {direction}.total_ios > 0); a profile "
            "needs reads and writes: run --rw=randrw, or a read job and a write job"
        )
    return parts


def _block_size(parts: list[_JobPart], direction: str) -> int:
    """The one block size of the jobs: their ``bs`` option, else ``io_bytes / total_ios``."""
    sizes = set()
    for part in parts:
        bs = _fio_job_bs(part.result, part.job, direction)
        if bs is not None:
            sizes.add(parse_size(bs))
        elif part.section.get("io_bytes"):
            base = _join(part.where, direction)
            sizes.add(round(_number(part.section, ["io_bytes"], base) / part.ios))
        else:
            raise SkewlabInputError(
                f"fio result has no {part.where}.job options.bs (nor a global bs)"
            )
    if len(sizes) != 1:
        raise SkewlabInputError(f"fio {direction} jobs use different block sizes: {sorted(sizes)}")
    return sizes.pop()


def _pooled_means(parts: list[_JobPart], direction: str) -> dict[str, Any]:
    """Means weighted by I/O count (``lat`` and, where every job has it, ``clat``), summed
    IOPS, and the smallest min / largest max, in microseconds."""
    total = sum(part.ios for part in parts)
    mean_ns = clat_ns = iops = 0.0
    clat_known = True
    mins, maxs = [], []
    for part in parts:
        base, section = _join(part.where, direction), part.section
        mean_ns += _number(section, ["lat_ns", "mean"], base) * part.ios / total
        if isinstance(section.get("clat_ns"), Mapping) and "mean" in section["clat_ns"]:
            clat_ns += _number(section, ["clat_ns", "mean"], base) * part.ios / total
        else:
            clat_known = False
        iops += _number(section, ["iops"], base)
        for key, found in (("min", mins), ("max", maxs)):
            value = section["lat_ns"].get(key)
            if isinstance(value, int | float) and value > 0:
                found.append(value / 1000.0)
    return {
        "mean_us": mean_ns / 1000.0,
        "iops": iops,
        "clat_mean_us": clat_ns / 1000.0 if clat_known else None,
        "min_us": min(mins) if mins else None,
        "max_us": max(maxs) if maxs else None,
        "samples": int(total),
    }


def _pooled_buckets(parts: list[_JobPart], direction: str) -> tuple[tuple[float, float], ...]:
    """fio's histogram is per job, so it belongs to this direction only in jobs that did
    nothing else; pooled over such jobs, weighted by their I/O counts (else none)."""
    other = "write" if direction == "read" else "read"
    single = all(
        float((part.job.get(other) or {}).get("total_ios", 0)) == 0
        and float((part.job.get("trim") or {}).get("total_ios", 0)) == 0
        for part in parts
    )
    if not single or not all(_fio_latency_maps(part.job) for part in parts):
        return ()
    total = sum(part.ios for part in parts)
    pooled: dict[float, float] = {}
    for part in parts:
        weight = 1.0 if len(parts) == 1 else part.ios / total
        for upper, pct in buckets_from_fio_maps(_fio_latency_maps(part.job), part.where):
            pooled[upper] = pooled.get(upper, 0.0) + pct * weight
    return tuple((u, p) for u, p in sorted(pooled.items()) if p > 0)


def _single_job_percentiles(parts: list[_JobPart]) -> tuple[tuple, str | None, float | None]:
    """``(percentiles, which table, stdev us)`` of a single job: ``lat_ns``'s table when fio ran
    with ``--lat_percentiles=1``, else ``clat_ns``'s (fio's default). Percentiles and standard
    deviations of several jobs cannot be pooled: then none."""
    if len(parts) != 1:
        return (), None, None
    section = parts[0].section
    percentiles: tuple[tuple[float, float], ...] = ()
    kind_found = None
    for kind in ("lat_ns", "clat_ns"):
        table = (section.get(kind) or {}).get("percentile")
        if isinstance(table, Mapping) and table:
            percentiles = tuple((float(p), float(v) / 1000.0) for p, v in table.items())
            kind_found = kind
            break
    stddev = section["lat_ns"].get("stddev")
    stdev_us = stddev / 1000.0 if isinstance(stddev, int | float) else None
    return percentiles, kind_found, stdev_us


def _fio_direction(results: Sequence[tuple[str, Mapping[str, Any]]], direction: str) -> tuple:
    """(LatencyDistribution, block size) for one direction, pooled over the jobs that did it."""
    parts = _jobs_that_did(results, direction)
    block_size = _block_size(parts, direction)
    means = _pooled_means(parts, direction)
    buckets = _pooled_buckets(parts, direction)
    percentiles, pct_kind, stdev_us = _single_job_percentiles(parts)
    names = ", ".join(f"{part.where} ({part.job.get('jobname', '?')})" for part in parts)
    source = (
        f"fio {direction}: {names}; {means['samples']} I/Os; mean = lat_ns.mean"
        + (f"; percentiles from {pct_kind}" if pct_kind else "")
        + ("; buckets = fio's latency histogram" if buckets else "")
    )
    distribution = LatencyDistribution(
        buckets=buckets, percentiles=percentiles, stdev_us=stdev_us, source=source, **means
    )
    return distribution, block_size


def profile_from_fio_json(
    path_or_dict: str | Path | Mapping[str, Any] | Sequence[str | Path | Mapping[str, Any]],
    name: str | None = None,
) -> DiskProfile:
    """Import ``fio --output-format=json`` output (one result, or several, e.g. a read run and a
    write run) as a profile.

    Reads come from the jobs with ``read.total_ios > 0``, writes from those with
    ``write.total_ios > 0`` (a ``randrw`` job gives both). The mean is ``lat_ns.mean`` (clat's is
    kept as ``clat_mean_us``), pooled over jobs by I/O count; IOPS are summed; the block size is
    the ``bs`` job or global option (else ``io_bytes / total_ios``). Buckets come from fio's
    latency histogram of jobs that did only that direction; percentiles from ``lat_ns`` (with
    ``--lat_percentiles=1``) or ``clat_ns`` of a single job. A missing field raises
    :class:`SkewlabInputError` naming it, e.g. ``fio result has no jobs[0].read.lat_ns.mean``.

    Example::

        >>> from skewlab.paths import project_root
        >>> p = profile_from_fio_json(project_root() / "tests/fixtures/fio-randrw-8k.json")
        >>> p.name, p.block_size
        ('fio-randrw-8k', 8192)
    """
    items = (
        list(path_or_dict)
        if isinstance(path_or_dict, Sequence) and not isinstance(path_or_dict, str)
        else [path_or_dict]
    )
    if not items:
        raise SkewlabInputError("no fio result given")
    results: list[tuple[str, Mapping[str, Any]]] = []
    stems = []
    for k, item in enumerate(items):
        if isinstance(item, Mapping):
            data = item
            stems.append("fio")
        else:
            path = Path(item).expanduser()
            data = read_json(path, "fio result")
            stems.append(path.stem)
        if not isinstance(data, Mapping):
            raise SkewlabInputError("fio result must be a JSON object with jobs")
        label = "" if len(items) == 1 else f"result[{k}]"
        results.append((label, data))
    read, read_bs = _fio_direction(results, "read")
    write, write_bs = _fio_direction(results, "write")
    if read_bs != write_bs:
        raise SkewlabInputError(
            f"fio reads use {read_bs}-byte blocks and writes {write_bs}-byte blocks; "
            "a profile has one block size"
        )
    versions = sorted({str(r.get("fio version", "fio")) for _, r in results})
    source = f"{', '.join(versions)} --output-format=json: {', '.join(stems)}"
    return DiskProfile(
        name=name or "-".join(dict.fromkeys(stems)),
        block_size=read_bs,
        read=read,
        write=write,
        source=source,
    )
