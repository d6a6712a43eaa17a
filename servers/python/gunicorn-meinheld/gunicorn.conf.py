"""gunicorn settings from the serverbench environment (HOST, PORT, WORKERS)."""

import os

_host = os.environ.get("HOST") or "127.0.0.1"
_port = os.environ.get("PORT") or "8080"

bind = [f"[{_host}]:{_port}" if ":" in _host else f"{_host}:{_port}"]
workers = max(1, int(os.environ.get("WORKERS") or "1"))
worker_class = "meinheld.gmeinheld.MeinheldWorker"
backlog = 2048
keepalive = 75
accesslog = None
errorlog = "-"
loglevel = "warning"
graceful_timeout = 3  # the harness sends SIGKILL 5 s after SIGTERM
