"""Prometheus metrics at ``/metrics``, read from the counters the database keeps.

The store counts each event as it happens, in the event's own transaction, into a small
table (``_store/counters.py``), so the figures are the fleet's: the server need not run a
worker to report every worker's runs and firings, a restart loses nothing, and a scrape
costs the same however much history is kept. Nothing is recounted from runs, steps or
history, so counters and histogram buckets only grow, as Prometheus expects, even when
those rows are pruned or a schedule is deleted. The store keeps a histogram's count per
bucket (bounds in ``_buckets``); the scrape turns them into Prometheus' cumulative ones.

- ``tickwork_schedule_firings_total{decision}``: occurrences by what became of them
  (started, skipped_overlap, dropped_catchup, missed_paused, triggered...).
- ``tickwork_firing_lateness_seconds{workflow}``: a scheduled run's creation minus its
  occurrence: how late the scheduler fired it (0 for a run decided ahead).
- ``tickwork_deadline_misses_total{key}``: runs of each schedule with a ``deadline``
  that had not completed that long after their occurrence (each counted once, when the
  miss is recorded; a deleted schedule's series stays, as counters do).
- ``tickwork_runs{workflow,status}``: unfinished runs now (pending, sleeping, running);
  for ended statuses, the runs that ever ended so (never lowered by pruning).
- ``tickwork_schedules{state}``: schedules by state (a gauge).
- ``tickwork_events_total{name}``: events emitted, by name (counted in the emit's
  transaction; an emit of an id already stored counts nothing).
- ``tickwork_runs_waiting``: runs waiting for an event now (``tickwork_runs`` summed).
- ``tickwork_run_duration_seconds{workflow,status}``: ended runs, first start to end.
- ``tickwork_step_duration_seconds{status}``: each try of a step, its start to its end
  (a step that failed twice, then completed, is 2 failed and 1 completed).

Nobody serving (DESIGN §8), read from the workers' records and the schedules at the
scrape (three columns of the schedules' rows, not every schedule built whole), so an
alert can fire when the fleet is down:

- ``tickwork_workers{pool}``: live workers serving each pool, for every pool a worker seen
  within the day serves or an active schedule uses (0: nobody serves it).
- ``tickwork_schedules_overdue``: active schedules whose next occurrence is past the grace,
  undecided (``ScheduleInfo.overdue_by``).
- ``tickwork_schedule_overdue_seconds{key}``: how late each of those is; overdue
  schedules only, so the series stay few (a fired schedule's series goes away).

Each app gets its own ``CollectorRegistry`` (never the global one), so several apps in
one process do not collide.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import accumulate

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from .._engine import Engine
from .._values import buckets as buckets
from .._values.models import Histogram, Stats

__all__ = ["CONTENT_TYPE_LATEST", "EngineCollector", "metrics_registry", "render_metrics"]

# Bucket bounds in seconds.
LATENESS_BUCKETS = buckets.seconds(buckets.LATENESS_MS)
RUN_BUCKETS = buckets.seconds(buckets.RUN_MS)
STEP_BUCKETS = buckets.seconds(buckets.STEP_MS)


def _buckets(histogram: Histogram, bounds: Sequence[float]) -> list[tuple[str, float]]:
    """Per-bucket counts (the last above every bound) as Prometheus' cumulative ones."""
    cumulative = list(accumulate(histogram.counts))
    labels = [*(repr(float(b)) for b in bounds), "+Inf"]
    return [(label, float(c)) for label, c in zip(labels, cumulative, strict=True)]


class EngineCollector(Collector):
    """Reads ``Engine.console.stats`` on each ``collect()`` (each scrape)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def collect(self) -> Iterator[Metric]:
        stats = self.engine.console.stats()
        firings = CounterMetricFamily(
            "tickwork_schedule_firings",
            "Schedule occurrences by what became of them",
            labels=["decision"],
        )
        for decision, count in sorted(stats.firings.items()):
            firings.add_metric([decision], count)
        yield firings
        misses = CounterMetricFamily(
            "tickwork_deadline_misses",
            "Runs of a schedule that had not completed its deadline after their occurrence",
            labels=["key"],
        )
        for key, count in sorted(stats.deadline_misses.items()):
            misses.add_metric([key], count)
        yield misses
        runs = GaugeMetricFamily(
            "tickwork_runs",
            "Unfinished runs by status; for ended statuses, runs that ever ended so",
            labels=["workflow", "status"],
        )
        for (workflow, status), count in sorted(stats.runs.items()):
            runs.add_metric([workflow, status], count)
        yield runs
        yield from self._events(stats)
        schedules = GaugeMetricFamily("tickwork_schedules", "Schedules by state", labels=["state"])
        for state, count in sorted(stats.schedules.items()):
            schedules.add_metric([state], count)
        yield schedules
        yield from self._serving(stats)
        yield self._histogram(
            "tickwork_firing_lateness_seconds",
            "Creation of a scheduled run minus its occurrence",
            ["workflow"],
            {(w,): h for w, h in stats.lateness.items()},
            LATENESS_BUCKETS,
        )
        yield self._histogram(
            "tickwork_run_duration_seconds",
            "Ended runs, from first start to end",
            ["workflow", "status"],
            {(w, s): h for (w, s), h in stats.run_durations.items()},
            RUN_BUCKETS,
        )
        yield self._histogram(
            "tickwork_step_duration_seconds",
            "Each try of a step, from its start to its end",
            ["status"],
            {(s,): h for s, h in stats.step_durations.items()},
            STEP_BUCKETS,
        )

    def _events(self, stats: Stats) -> Iterator[Metric]:
        """Events emitted per name (counted in each emit's transaction), runs waiting."""
        emitted = CounterMetricFamily("tickwork_events", "Events emitted, by name", labels=["name"])
        for name, count in sorted(self.engine.console.event_counts().items()):
            emitted.add_metric([name], count)
        yield emitted
        waiting = sum(n for (_, status), n in stats.runs.items() if status == "waiting")
        yield GaugeMetricFamily(
            "tickwork_runs_waiting", "Runs waiting for an event now", value=waiting
        )

    def _serving(self, stats: Stats) -> Iterator[Metric]:
        """Live workers per pool, overdue schedules (see the module's docstring)."""
        live = dict.fromkeys(stats.active_pools, 0)
        for worker in self.engine.list_workers():
            for pool in worker.pools:
                live[pool] = live.get(pool, 0) + worker.alive
        family = GaugeMetricFamily(
            "tickwork_workers", "Live workers serving each pool", labels=["pool"]
        )
        for pool, count in sorted(live.items()):
            family.add_metric([pool], count)
        yield family
        yield GaugeMetricFamily(
            "tickwork_schedules_overdue",
            "Active schedules whose next occurrence is past, undecided: no worker fired it",
            value=len(stats.overdue),
        )
        lateness = GaugeMetricFamily(
            "tickwork_schedule_overdue_seconds",
            "How late an overdue schedule's next occurrence is (overdue schedules only)",
            labels=["key"],
        )
        for key, late in sorted(stats.overdue.items()):
            lateness.add_metric([key], late.total_seconds())
        yield lateness

    @staticmethod
    def _histogram(
        name: str,
        documentation: str,
        labels: list[str],
        histograms: dict[tuple[str, ...], Histogram],
        bounds: Sequence[float],
    ) -> HistogramMetricFamily:
        family = HistogramMetricFamily(name, documentation, labels=labels)
        for values, histogram in sorted(histograms.items()):
            family.add_metric(
                list(values), _buckets(histogram, bounds), sum_value=histogram.sum_ms / 1000
            )
        return family


def metrics_registry(engine: Engine) -> CollectorRegistry:
    """A registry of its own holding the engine's collector."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(EngineCollector(engine))
    return registry


def render_metrics(registry: CollectorRegistry) -> bytes:
    """The Prometheus text exposition of ``registry`` (blocking: it reads the database)."""
    return generate_latest(registry)
