"""What an AWS scan's first clients need, made while its first calls are answered.

An organisation scan starts with Organizations `ListAccounts`, then `AssumeRole` into every
account: two round trips with the CPU idle. Then every work item makes its EC2 and SageMaker
clients, and the first of each parses its service model and builds its class: 80 + 25 ms of CPU
for EC2, 60 + 12 for SageMaker (benchmarks/README.md, "Organisation scale"), with the pool
waiting. `Preparation` does that work in a thread of its own once the scan's first request is on
the wire (a botocore `before-send` handler says so): it fills the shared loader's cache, the
memo's models and classes (clients.py) and the base session's STS client, so no client made
differs from one made without it.

The models are ~40k containers that live to the end of the scan: parsed with the cyclic
collector paused, and frozen by the `gpu-audit` program (core/gcpause.py), the collector's full
passes no longer walk them (in a 510-call scan, three full passes took ~0.2 s of CPU; now two
take ~0.04 s, one of them at start-up).
"""

from __future__ import annotations

import threading
from typing import Any

from gpu_audit.collectors.aws.sessions import HOME_REGION, EventHook, Sessions
from gpu_audit.core.gcpause import paused_gc


class Preparation:
    """Models, client classes and the STS client of one scan, made in a thread of its own."""

    def __init__(self) -> None:
        self._sending = threading.Event()  # the scan's first request is on the wire
        self._finished = False
        self._thread: threading.Thread | None = None

    @property
    def hook(self) -> EventHook:
        """The botocore handler that starts the work (register it on the scan's sessions)."""
        return ("before-send", self._sent)

    def _sent(self, **_: Any) -> None:
        self._sending.set()  # returns None: botocore sends the request as usual

    def start(self, sessions: Sessions, services: tuple[str, ...], sts: bool) -> None:
        """Make `services`' models and classes (and, with `sts`, the STS client every
        AssumeRole uses) once the first request is sent."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run,
                args=(sessions, services, sts),
                name="gpu-audit-aws-prepare",
                daemon=True,
            )
            self._thread.start()

    def finish(self) -> None:
        """Wait for the thread; what it has not begun is left (the scan may end before a
        request is made, when no account answers)."""
        self._finished = True
        self._sending.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self, sessions: Sessions, services: tuple[str, ...], sts: bool) -> None:
        self._sending.wait()
        with paused_gc():
            self._make(sessions, services, sts)

    def _make(self, sessions: Sessions, services: tuple[str, ...], sts: bool) -> None:
        loader = sessions.base.get_component("data_loader")
        try:
            if sts and not self._finished:
                sessions.client(sessions.base, "sts", HOME_REGION)
            for service in services:
                if self._finished:
                    return
                # Parsed outside the sessions' lock (under the key of ClientCreator's calls);
                # then the class, built in Python that yields to the AssumeRole calls.
                loader.load_service_model(service, "service-2", api_version=None)
                loader.load_service_model(service, "endpoint-rule-set-1", api_version=None)
                sessions.warm(service)
        except Exception:  # noqa: S110 - not a traceback on stderr from a thread: the scan
            pass  # meets the same error where it makes the client, and reports it there
