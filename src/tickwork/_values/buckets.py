"""Bucket bounds of the ``/metrics`` histograms, and the bucket an observation falls in.

The store counts each observation into its bucket as the event happens (in the event's
transaction), so the bounds are fixed here, below the store, and shared with the
migration that seeds the counters (its ``CASE`` lists the same bounds) and with the
scrape, which turns the per-bucket counts into Prometheus' cumulative ones.

Bucket ``i`` holds the observations above ``bounds[i - 1]`` and at most ``bounds[i]``;
bucket ``len(bounds)`` holds those above every bound (Prometheus' ``+Inf``). Changing a
bound would mix old counts into new buckets: add a new histogram instead.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

__all__ = ["LATENESS_MS", "RUN_MS", "STEP_MS", "bucket_of", "seconds"]

#: how long after its occurrence a scheduled run was created
LATENESS_MS = (100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000, 900_000,
               3_600_000)  # fmt: skip
#: an ended run, from its first start to its end
RUN_MS = (10, 50, 100, 500, 1_000, 5_000, 10_000, 30_000, 60_000, 300_000, 1_800_000,
          3_600_000, 86_400_000)  # fmt: skip
#: one try of a step, from its start to its end
STEP_MS = (1, 5, 10, 50, 100, 500, 1_000, 5_000, 10_000, 60_000, 300_000, 3_600_000)


def bucket_of(bounds_ms: Sequence[int], value_ms: int) -> int:
    """The index of the smallest bound ``>= value_ms``; ``len(bounds_ms)`` above them all."""
    return bisect_left(bounds_ms, value_ms)


def seconds(bounds_ms: Sequence[int]) -> tuple[float, ...]:
    """The bounds in seconds, as Prometheus shows them."""
    return tuple(bound / 1000 for bound in bounds_ms)
