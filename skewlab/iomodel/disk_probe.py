"""Measure this machine's disk the way the seed measured EBS: random 8 KiB reads and writes.

:func:`probe_disk` creates a temporary file (``size_mb`` MiB, filled with random bytes), then for
at most ``seconds`` alternates one random read and one random write of ``block_size`` bytes at
block-aligned offsets, one request at a time (queue depth 1, like a state backend serving one
record), timing each. It uses ``O_DIRECT`` with page-aligned buffers (from ``mmap``) so that the
page cache does not answer for the disk, as ``fio --direct=1`` does. Where the filesystem refuses
``O_DIRECT`` (tmpfs, some overlay or network filesystems, macOS), it falls back to buffered I/O
with ``fdatasync`` after every write and ``posix_fadvise(DONTNEED)`` before every read, and says
so with a warning: reads may then still come from a cache. The file is removed in every case.

The result is a :class:`~skewlab.iomodel.profiles.DiskProfile` in the same shape as an
imported fio run: means, IOPS (I/Os of that kind per second of wall time, fio's convention for
a mixed job), min/max/stdev, fio's default percentiles and fio's latency buckets.

Example::

    >>> from skewlab.iomodel.disk_probe import probe_disk
    >>> profile = probe_disk(size_mb=2, seconds=0.2, progress=False)
    >>> profile.read.mean_us > 0
    True
"""

from __future__ import annotations

import datetime as _dt
import mmap
import os
import tempfile
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from skewlab.errors import SkewlabInputError
from skewlab.iomodel.profiles import (
    FIO_PERCENTILES,
    DiskProfile,
    LatencyDistribution,
    buckets_from_samples,
    latency_dir,
    load_disk_profile,
)
from skewlab.validation import check_number, check_whole

__all__ = [
    "MAX_OPS",
    "MAX_SECONDS",
    "MAX_SIZE_MB",
    "local_disk_profile",
    "local_profile",
    "probe_disk",
]

#: Largest test file, in MiB.
MAX_SIZE_MB = 4096
#: Longest measurement, in seconds.
MAX_SECONDS = 600.0
#: Most reads (and as many writes) one probe makes, whatever the time.
MAX_OPS = 2_000_000
_MIB = 1024 * 1024


def _validate(size_mb: float, seconds: float, block_size: int) -> tuple[int, float, int]:
    check_number("size (MiB)", size_mb, minimum=1, maximum=MAX_SIZE_MB)
    check_number("seconds", seconds, above=0)
    check_number("seconds", seconds, maximum=MAX_SECONDS)
    check_whole("block size", block_size, 512, 16 * _MIB)
    if block_size % 512:
        raise SkewlabInputError(f"block size must be a multiple of 512, got {block_size}")
    size = int(size_mb * _MIB) // block_size * block_size
    if size < 2 * block_size:
        raise SkewlabInputError(f"a {size_mb:g} MiB file holds fewer than 2 blocks of {block_size}")
    return size, float(seconds), block_size


def _fill(path: Path, size: int, rng: np.random.Generator) -> None:
    """Write ``size`` random bytes (so every block is allocated) and sync them."""
    chunk = rng.bytes(min(size, 4 * _MIB))
    with open(path, "wb") as handle:
        left = size
        while left:
            n = min(left, len(chunk))
            handle.write(chunk[:n])
            left -= n
        handle.flush()
        os.fsync(handle.fileno())


def _open_direct(path: Path, probe: mmap.mmap) -> int:
    """``os.open`` with ``O_DIRECT``, checked by one aligned read; raises OSError if refused."""
    flag = getattr(os, "O_DIRECT", None)
    if flag is None:
        raise OSError("this platform has no O_DIRECT")
    fd = os.open(path, os.O_RDWR | flag)
    try:
        os.preadv(fd, [probe], 0)
    except OSError:
        os.close(fd)
        raise
    return fd


def _distribution(latencies_us: np.ndarray, wall_seconds: float, how: str) -> LatencyDistribution:
    values = np.asarray(latencies_us, dtype=float)
    percentiles = np.percentile(values, FIO_PERCENTILES)
    return LatencyDistribution(
        mean_us=float(values.mean()),
        iops=float(values.size / wall_seconds),
        buckets=tuple((u, round(p, 4)) for u, p in buckets_from_samples(values)),
        percentiles=tuple(zip(FIO_PERCENTILES, (float(v) for v in percentiles), strict=True)),
        min_us=float(values.min()),
        max_us=float(values.max()),
        stdev_us=float(values.std(ddof=1)) if values.size > 1 else 0.0,
        samples=int(values.size),
        source=how,
    )


def probe_disk(
    size_mb: float = 64,
    seconds: float = 10,
    block_size: int = 8192,
    directory: str | Path | None = None,
    progress: bool = True,
    *,
    name: str = "local",
    seed: int = 0,
) -> DiskProfile:
    """Measure random ``block_size`` reads and writes on a temporary file in ``directory``.

    ``directory`` defaults to the system's temporary directory (where Spark's local dirs, and so
    the state backends' files, live by default). Sizes are bounded (1 MiB to
    :data:`MAX_SIZE_MB`, at most :data:`MAX_SECONDS`); bad values raise
    :class:`~skewlab.errors.SkewlabInputError`. Falls back to buffered I/O with a warning where
    ``O_DIRECT`` is refused. Each latency includes the Python call around the system call (a few
    microseconds), which matters only on very fast devices.

    Example::

        >>> p = probe_disk(size_mb=2, seconds=0.2, progress=False)
        >>> p.name, p.block_size
        ('local', 8192)
    """
    size, seconds, block_size = _validate(size_mb, seconds, block_size)
    where = Path(directory if directory is not None else tempfile.gettempdir()).expanduser()
    if not where.is_dir():
        raise SkewlabInputError(f"no such directory for the probe: {where}")
    rng = np.random.default_rng(seed)
    fd_tmp, tmp_name = tempfile.mkstemp(prefix="skewlab-probe-", suffix=".dat", dir=where)
    os.close(fd_tmp)
    path = Path(tmp_name)
    buffers = (mmap.mmap(-1, block_size), mmap.mmap(-1, block_size))  # read, write: aligned
    buffers[1].write(rng.bytes(block_size))
    fd = -1
    try:
        _fill(path, size, rng)
        fd, direct = _open_for_probe(path, where, buffers[0])
        label = f"probing {where} ({'O_DIRECT' if direct else 'buffered'})"
        with _progress(seconds, label, progress) as tick:
            reads, writes, wall = _measure(
                fd, direct, size // block_size, block_size, seconds, rng, buffers, tick
            )
    finally:
        if fd >= 0:
            os.close(fd)
        for buffer in buffers:
            buffer.close()
        path.unlink(missing_ok=True)
    mode = "O_DIRECT" if direct else "buffered + fdatasync (O_DIRECT refused)"
    when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    how = (
        f"skewlab probe-disk, {when}: {block_size}-byte random reads and writes alternating at "
        f"queue depth 1 on a {size // _MIB} MiB file in {where}, {mode}, {wall:.1f} s"
    )
    read = _distribution(np.asarray(reads) / 1000.0, wall, f"{how}; {len(reads)} reads")
    write = _distribution(np.asarray(writes) / 1000.0, wall, f"{how}; {len(writes)} writes")
    return DiskProfile(name=name, block_size=block_size, read=read, write=write, source=how)


def _open_for_probe(path: Path, where: Path, probe: mmap.mmap) -> tuple[int, bool]:
    """``(fd, direct)``: ``O_DIRECT`` where the filesystem allows it, else buffered I/O (with a
    warning: reads may then come from a cache)."""
    try:
        return _open_direct(path, probe), True
    except OSError as exc:
        reason = exc.strerror or str(exc)
        warnings.warn(
            f"O_DIRECT is not available in {where} ({reason}); measuring buffered I/O with "
            "fdatasync after each write and posix_fadvise(DONTNEED) before each read instead: "
            "reads may still be served from a cache",
            RuntimeWarning,
            stacklevel=3,
        )
        return os.open(path, os.O_RDWR), False


@contextmanager
def _progress(seconds: float, label: str, enabled: bool):
    """A progress bar over the measuring time; yields ``tick(elapsed seconds)``."""
    with tqdm(
        total=round(seconds, 1),
        unit="s",
        desc=label,
        disable=not enabled,
        bar_format="{l_bar}{bar}| {n:.1f}/{total:.1f} s",
    ) as bar:
        shown = [0.0]

        def tick(elapsed: float) -> None:
            if elapsed - shown[0] >= 0.1 or elapsed >= seconds:
                step = max(0.0, min(elapsed, seconds) - shown[0])
                bar.update(round(step, 3))
                shown[0] += step

        yield tick
        tick(seconds)


def _measure(fd, direct, blocks, block_size, seconds, rng, buffers, tick):
    """Alternate one random read and one random write until ``seconds`` (or :data:`MAX_OPS`);
    returns ``(read ns, write ns, wall seconds)``."""
    read_buf, write_buf = buffers
    sync = getattr(os, "fdatasync", os.fsync)
    fadvise = getattr(os, "posix_fadvise", None) if not direct else None
    clock = time.perf_counter_ns
    reads: list[int] = []
    writes: list[int] = []
    start = time.perf_counter()
    while True:
        elapsed = time.perf_counter() - start
        if (elapsed >= seconds and reads) or len(reads) >= MAX_OPS:
            break
        tick(elapsed)
        offsets = rng.integers(0, blocks, size=2) * block_size
        read_at, write_at = int(offsets[0]), int(offsets[1])
        if fadvise is not None:
            fadvise(fd, read_at, block_size, os.POSIX_FADV_DONTNEED)
        t0 = clock()
        got = os.preadv(fd, [read_buf], read_at)
        reads.append(clock() - t0)
        if got != block_size:
            raise OSError(f"short read of {got} bytes at {read_at}")
        t0 = clock()
        got = os.pwritev(fd, [write_buf], write_at)
        if not direct:
            sync(fd)
        writes.append(clock() - t0)
        if got != block_size:
            raise OSError(f"short write of {got} bytes at {write_at}")
    return reads, writes, time.perf_counter() - start


def local_disk_profile(
    size_mb: float = 16, seconds: float = 3, progress: bool = True
) -> DiskProfile:
    """This machine's disk profile: ``data/latency/local.json`` if ``skewlab probe-disk`` wrote
    one, else a quick :func:`probe_disk` of ``size_mb`` MiB for ``seconds`` (not saved).

    Example::

        >>> local_disk_profile(size_mb=2, seconds=0.2, progress=False).read.mean_us > 0
        True
    """
    path = latency_dir() / "local.json"
    if path.is_file():
        return load_disk_profile(path)
    return probe_disk(size_mb=size_mb, seconds=seconds, progress=progress, name="local-now")


#: Deprecated alias of :func:`local_disk_profile` (kept for one release).
local_profile = local_disk_profile
