"""Modelled restore time: what a restore's read requests would cost on a disk or an object store.

A restore is a list of read requests, each of some bytes (:class:`skewlab.state.restore.RestoreIO`
keeps them). A :class:`StorageReadModel` prices one request, two ways:

* **a disk, from a disk profile** (seed 000's EBS fio runs, this machine's probe): the profile
  measured random reads of one block at queue depth 1, so a request of ``b`` bytes is modelled as
  ``ceil(b / block_size)`` block reads one after the other, each at the profile's mean read
  latency. Sequential reads on a real volume are faster than random ones, so for long reads this
  is an upper bound; for one-block reads (the per-key index) it is what the profile measured.
* **an object store** (S3-like; where Flink keeps checkpoints, and MediaMath's): a request costs
  a first-byte latency, then its bytes stream at a per-connection bandwidth:
  ``latency + b / bandwidth``. Both are parameters; the defaults are
  :data:`OBJECT_STORE_LATENCY_MS` (100 ms: AWS's S3 guidance gave 100-200 ms of first-byte
  latency for small objects; its later whitepaper says medians "in the tens of milliseconds")
  and :data:`OBJECT_STORE_BANDWIDTH_MB_S` (85 MB/s: AWS's S3 performance guidelines advise one
  concurrent request per 85-90 MB/s of desired throughput).

A new subtask reads its requests one after the other; the new subtasks restore in parallel, so a
job's modelled restore time is the slowest subtask's (:func:`job_restore_seconds`).

Example::

    >>> s3 = object_store_model()
    >>> round(s3.seconds([85_000_000]), 3)              # one 85 MB read: 0.1 s + 1 s
    1.1
    >>> round(s3.seconds([100] * 10), 3)               # ten tiny reads: ten latencies
    1.0
    >>> from skewlab.iomodel.profiles import load_disk_profile
    >>> ebs = StorageReadModel.from_profile(load_disk_profile("ebs-article"))
    >>> round(ebs.seconds([8192, 8193]), 5)            # one block, then two blocks
    0.01848
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from skewlab.iomodel.profiles import DiskProfile
from skewlab.validation import check_number

__all__ = [
    "OBJECT_STORE_BANDWIDTH_MB_S",
    "OBJECT_STORE_LATENCY_MS",
    "StorageReadModel",
    "job_restore_seconds",
    "object_store_model",
]

#: Default first-byte latency of one object-store read request, in milliseconds.
OBJECT_STORE_LATENCY_MS = 100.0
#: Default bandwidth of one object-store connection, in MB/s (10**6 bytes).
OBJECT_STORE_BANDWIDTH_MB_S = 85.0


@dataclass(frozen=True)
class StorageReadModel:
    """How long a storage takes to serve one read request of ``b`` bytes.

    With ``block_size`` (a disk profile): ``ceil(b / block_size)`` reads of
    ``request_latency_us`` each. Without (an object store): ``request_latency_us`` plus
    ``b / bandwidth_bytes_per_s``.

    Example::

        >>> StorageReadModel("toy", 1000.0, bandwidth_bytes_per_s=1e6).request_seconds(500)
        0.0015
    """

    name: str
    request_latency_us: float
    bandwidth_bytes_per_s: float | None = None
    block_size: int | None = None
    source: str = ""

    def __post_init__(self) -> None:
        check_number("request latency (us)", self.request_latency_us, minimum=0)
        if self.bandwidth_bytes_per_s is not None:
            check_number("bandwidth (bytes/s)", self.bandwidth_bytes_per_s, above=0)
        if (self.block_size is None) == (self.bandwidth_bytes_per_s is None):
            raise ValueError("give a block size (a disk profile) or a bandwidth (a store)")

    @classmethod
    def from_profile(cls, profile: DiskProfile) -> StorageReadModel:
        """A disk's model from its disk profile: block reads at the mean read latency."""
        return cls(
            profile.name,
            profile.read.mean_us,
            block_size=profile.block_size,
            source=f"{profile.name}: {profile.block_size}-byte random reads, mean "
            f"{profile.read.mean_us:,.0f} us each (fio's lat mean)",
        )

    def request_seconds(self, size: int) -> float:
        """One request of ``size`` bytes."""
        if self.block_size is not None:
            return max(1, math.ceil(size / self.block_size)) * self.request_latency_us / 1e6
        return self.request_latency_us / 1e6 + size / self.bandwidth_bytes_per_s

    def seconds(self, request_bytes: Iterable[int]) -> float:
        """Requests served one after the other (one restoring subtask)."""
        return sum(self.request_seconds(size) for size in request_bytes)


def object_store_model(
    request_latency_ms: float = OBJECT_STORE_LATENCY_MS,
    bandwidth_mb_per_s: float = OBJECT_STORE_BANDWIDTH_MB_S,
) -> StorageReadModel:
    """An S3-like object store: first-byte latency, then a per-connection bandwidth.

    Example::

        >>> round(object_store_model(20, 50).request_seconds(5_000_000), 6)
        0.12
    """
    latency = check_number("request_latency_ms", request_latency_ms, minimum=0)
    bandwidth = check_number("bandwidth_mb_per_s", bandwidth_mb_per_s, above=0)
    return StorageReadModel(
        f"object-store ({latency:g} ms, {bandwidth:g} MB/s)",
        latency * 1000.0,
        bandwidth_bytes_per_s=bandwidth * 1e6,
        source="per-request first-byte latency and per-connection bandwidth (parameters)",
    )


def job_restore_seconds(
    requests_by_subtask: Mapping[int, Sequence[int]] | Sequence[Sequence[int]],
    model: StorageReadModel,
) -> float:
    """A job's modelled restore time: its subtasks restore in parallel, each reading its
    requests in turn -- the slowest subtask's time.

    Example::

        >>> job_restore_seconds([[100], [100, 100]], object_store_model(10, 100))
        0.020002
    """
    groups = (
        requests_by_subtask.values()
        if isinstance(requests_by_subtask, Mapping)
        else requests_by_subtask
    )  # noqa: E501
    return max((model.seconds(requests) for requests in groups), default=0.0)
