"""tickwork's HTTP server: the JSON API, ``/healthz``, ``/metrics`` and the dashboard.

Needs the ``server`` extra (``pip install 'tickwork[server]'``). ``create_app(engine)``
returns a Starlette app; ``tickwork serve APP`` runs it with uvicorn.
"""

from .app import create_app as create_app

__all__ = ["create_app"]
