"""An AWS scan's first clients prepared while its first calls are answered, and each client's
copy of the session's handlers: the same clients, handlers and results as botocore's own path."""

from __future__ import annotations

import copy
import gc
import subprocess
import sys
import threading
from typing import Any

import pytest

from gpu_audit.collectors.aws.clients import copy_emitter
from gpu_audit.collectors.aws.prepare import Preparation
from gpu_audit.collectors.aws.sessions import HOME_REGION, Sessions
from gpu_audit.collectors.aws.settings import AwsSettings

Fleet = Any  # conftest.Fleet
CREDENTIALS = {"AccessKeyId": "ASIA1", "SecretAccessKey": "s", "SessionToken": "t"}
SERVICES = ("ec2", "sagemaker", "cloudwatch")


def _handlers(client: Any) -> list[tuple[str, str]]:
    """Every (event, handler name) a client's emitter holds, in the trie's order."""
    found: list[tuple[str, str]] = []

    def walk(node: dict[str, Any], path: tuple[str, ...]) -> None:
        for section in node.get("values") or ():
            found.extend((".".join(path), getattr(h, "__qualname__", repr(h))) for h in section)
        for chunk, child in (node.get("children") or {}).items():
            walk(child, (*path, chunk))

    walk(client.meta.events._emitter._handlers._root, ())
    return found


def test_the_handlers_copy_is_botocores_and_each_client_has_its_own(aws_fleet: Fleet) -> None:
    sessions = Sessions(AwsSettings())
    emitter = sessions.base.get_component("event_emitter")._emitter
    ours, theirs = copy_emitter(emitter), copy.copy(emitter)
    assert ours._handlers.__dict__ == theirs._handlers.__dict__
    assert ours._unique_id_handlers == theirs._unique_id_handlers
    ours.register("before-send.ec2", _handler)  # a copy's registration stays in the copy
    assert _names(ours, "before-send.ec2") != _names(emitter, "before-send.ec2")
    assert _names(theirs, "before-send.ec2") == _names(emitter, "before-send.ec2")
    plain = Sessions(AwsSettings(), memoize=False)
    made = [
        s.client(s.derive(credentials=CREDENTIALS), "ec2", "us-east-1") for s in (sessions,) * 2
    ]
    other = plain.client(plain.derive(credentials=CREDENTIALS), "ec2", "us-east-1")
    assert _handlers(made[0]) == _handlers(other) and len(_handlers(other)) > 50
    assert made[0].meta.events._emitter is not made[1].meta.events._emitter
    # One cache of event-name aliases for the memoized clients; the plain client keeps its own.
    aliases = made[0].meta.events._alias_name_cache
    assert aliases is made[1].meta.events._alias_name_cache
    assert other.meta.events._alias_name_cache is not aliases
    assert [c.describe_regions()["Regions"] != [] for c in (*made, other)] == [True] * 3


def _handler(**_: Any) -> None:
    return None


def _names(emitter: Any, event: str) -> list[str]:
    return [getattr(h, "__qualname__", repr(h)) for h in emitter._handlers.prefix_search(event)]


def test_preparation_makes_the_models_and_classes_once_a_request_is_sent(
    aws_fleet: Fleet,
) -> None:
    preparation = Preparation()
    sessions = Sessions(AwsSettings(), (preparation.hook,))
    memo = sessions._memo
    assert memo is not None
    frozen = gc.get_freeze_count()
    preparation.start(sessions, SERVICES, sts=True)
    sessions.client(sessions.base, "sts", HOME_REGION).get_caller_identity()  # the first request
    # The request began the work; let it run to its end before `finish`, which leaves what is
    # not yet begun (a scan may end early): under load the thread may still be on its first model.
    thread = preparation._thread
    assert thread is not None
    thread.join(timeout=120)
    assert not thread.is_alive()
    preparation.finish()
    assert {service for service, _ in memo.models} == {"sts", *SERVICES}
    assert {service for service, _ in memo.classes} == {"sts", *SERVICES}
    classes = dict(memo.classes)
    account = sessions.derive(credentials=CREDENTIALS)
    ec2 = sessions.client(account, "ec2", "eu-west-1")
    assert memo.classes == classes and type(ec2) in classes.values()  # made, not made anew
    assert ec2.describe_regions()["Regions"] != []
    assert gc.isenabled() and gc.get_freeze_count() == frozen  # a library caller: not frozen


def test_a_scan_that_ends_before_any_request_leaves_the_preparation_undone(
    aws_fleet: Fleet,
) -> None:
    preparation = Preparation()
    sessions = Sessions(AwsSettings(), (preparation.hook,))
    preparation.start(sessions, SERVICES, sts=True)
    preparation.finish()  # no request was sent: nothing begun, nothing made
    assert sessions._memo is not None and not sessions._memo.classes
    assert gc.isenabled()


def test_the_gpu_audit_program_freezes_the_prepared_models(aws_fleet: Fleet) -> None:
    """One command per process (`core/gcpause.one_shot`): the models, parsed with the collector
    paused, are frozen, so its full passes no longer walk them."""
    program = """
import gc
from gpu_audit.collectors.aws.prepare import Preparation
from gpu_audit.collectors.aws.sessions import Sessions
from gpu_audit.collectors.aws.settings import AwsSettings
from gpu_audit.core.gcpause import one_shot
one_shot()
preparation = Preparation()
sessions = Sessions(AwsSettings(), (preparation.hook,))
preparation.start(sessions, ("ec2", "sagemaker"), sts=True)
sessions.client(sessions.base, "sts", "us-east-1").get_caller_identity()
preparation.finish()
print(gc.isenabled(), gc.get_freeze_count())
"""
    answer = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    enabled, frozen = answer.stdout.split()
    assert enabled == "True" and int(frozen) > 30_000  # the EC2 and SageMaker models alone


def test_an_error_while_preparing_is_met_again_by_the_scan_not_printed_by_the_thread(
    aws_fleet: Fleet, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botocore.exceptions import UnknownServiceError

    raised: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", raised.append)
    preparation = Preparation()
    sessions = Sessions(AwsSettings(), (preparation.hook,))
    preparation.start(sessions, ("no-such-service",), sts=True)
    sessions.client(sessions.base, "sts", HOME_REGION).get_caller_identity()
    preparation.finish()
    assert not raised  # no traceback on stderr from the preparation's thread
    with pytest.raises(UnknownServiceError):  # where the scan makes the client, it is raised
        sessions.client(sessions.derive(credentials=CREDENTIALS), "no-such-service", "us-east-1")
