"""Prometheus metrics at ``/metrics``, counted from the database at each scrape.

Counting from the store rather than in the process makes the figures the fleet's: the
server need not run a worker to report every worker's runs and firings, and a restart
loses nothing. Histogram buckets are cumulative counts of every stored observation, so
they only grow, as Prometheus expects, until rows are deleted (``unschedule`` deletes a
schedule's history: Prometheus reads that as a counter reset).

- ``tickwork_schedule_firings_total{decision}``: occurrences by what became of them
  (started, skipped_overlap, dropped_catchup, missed_paused, triggered...).
- ``tickwork_firing_lateness_seconds{workflow}``: a scheduled run's creation minus its
  occurrence: how late the scheduler fired it.
- ``tickwork_runs{workflow,status}``: runs stored, by status (a gauge).
- ``tickwork_schedules{state}``: schedules by state (a gauge).
- ``tickwork_run_duration_seconds{workflow,status}``: finished runs, first start to end.
- ``tickwork_step_duration_seconds{status}``: steps, each try's start to its end.

Each app gets its own ``CollectorRegistry`` (never the global one), so several apps in
one process do not collide.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from .._engine import Engine
from .._models import Histogram, Stats

__all__ = ["CONTENT_TYPE_LATEST", "EngineCollector", "metrics_registry", "render_metrics"]

# Bucket bounds in seconds.
LATENESS_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
RUN_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0, 3600.0, 86400.0)
STEP_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 60.0, 300.0, 3600.0)


def _ms(bounds: Sequence[float]) -> list[int]:
    return [round(b * 1000) for b in bounds]


def _buckets(histogram: Histogram, bounds: Sequence[float]) -> list[tuple[str, float]]:
    pairs = [(repr(float(b)), float(c)) for b, c in zip(bounds, histogram.counts, strict=True)]
    return [*pairs, ("+Inf", float(histogram.count))]


class EngineCollector(Collector):
    """Reads ``Engine.stats`` on each ``collect()`` (each scrape)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def _stats(self) -> Stats:
        return self.engine.stats(
            lateness_ms=_ms(LATENESS_BUCKETS),
            run_ms=_ms(RUN_BUCKETS),
            step_ms=_ms(STEP_BUCKETS),
        )

    def collect(self) -> Iterator[Metric]:
        stats = self._stats()
        firings = CounterMetricFamily(
            "tickwork_schedule_firings",
            "Schedule occurrences by what became of them",
            labels=["decision"],
        )
        for decision, count in sorted(stats.firings.items()):
            firings.add_metric([decision], count)
        yield firings
        runs = GaugeMetricFamily(
            "tickwork_runs", "Runs stored, by status", labels=["workflow", "status"]
        )
        for (workflow, status), count in sorted(stats.runs.items()):
            runs.add_metric([workflow, status], count)
        yield runs
        schedules = GaugeMetricFamily("tickwork_schedules", "Schedules by state", labels=["state"])
        for state, count in sorted(stats.schedules.items()):
            schedules.add_metric([state], count)
        yield schedules
        yield self._histogram(
            "tickwork_firing_lateness_seconds",
            "Creation of a scheduled run minus its occurrence",
            ["workflow"],
            {(w,): h for w, h in stats.lateness.items()},
            LATENESS_BUCKETS,
        )
        yield self._histogram(
            "tickwork_run_duration_seconds",
            "Finished runs, from first start to end",
            ["workflow", "status"],
            {(w, s): h for (w, s), h in stats.run_durations.items()},
            RUN_BUCKETS,
        )
        yield self._histogram(
            "tickwork_step_duration_seconds",
            "Steps, from the start to the end of their last try",
            ["status"],
            {(s,): h for s, h in stats.step_durations.items()},
            STEP_BUCKETS,
        )

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
