"""The app of ``test_missing_calendar``: ``tickwork worker missing_calendar_app.py:engine``.

Two declared schedules: ``holiday-report`` names the calendar ``uk``, which the database
does not hold when the worker starts; ``heartbeat`` fires every second and needs none.
``TICKWORK_DATABASE_URL`` names the database (``Engine`` reads it itself).
"""

from __future__ import annotations

from tickwork import Context, Cron, Engine, Every

engine = Engine()


@engine.workflow("holiday-report", schedule=Cron("0 9 * * *", calendar="uk"))
def holiday_report(ctx: Context) -> str:
    return "reported"


@engine.workflow("heartbeat", schedule=Every("1s", catchup="all"))
def heartbeat(ctx: Context) -> str:
    return "beat"
