"""The app of ``test_crash_loops.py``'s worker processes:
``tickwork worker crash_loop_app.py:engine``, on ``TICKWORK_DATABASE_URL`` with the lease
``ACCEPT_LEASE`` (see ``crash_loop_workflows``)."""

from __future__ import annotations

import os

from crash_loop_workflows import define

from tickwork import Engine

engine = Engine(lease=os.environ.get("ACCEPT_LEASE", "30s"))
define(engine)
