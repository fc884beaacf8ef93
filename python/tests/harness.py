"""What the tests share: the server's address and key (from test/python/harness.ts) and its control
server, through which a test counts requests, advances the app's clock, makes keys and breaks things."""

from __future__ import annotations

import json
import os
import unittest
import urllib.request
from typing import Any, Dict, List, Optional

from updown import Client

BASE_URL = os.environ.get("UPDOWN_BASE_URL", "")
API_KEY = os.environ.get("UPDOWN_API_KEY", "")
CONTROL_URL = os.environ.get("UPDOWN_CONTROL_URL", "")
LONG_SLUG = os.environ.get("UPDOWN_LONG_SLUG", "")

if not (BASE_URL and API_KEY and CONTROL_URL):
    raise RuntimeError("run the Python tests through test/python/client.test.ts (it starts the server)")


def control(path: str, body: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(CONTROL_URL + path, data=data, method="GET" if body is None else "POST")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def seen_count() -> int:
    """How many /v1 requests the app has received so far."""
    return control("/seen")["count"]


def seen_since(count: int) -> List[Dict[str, Any]]:
    return control(f"/seen?since={count}")["requests"]


def new_key(plan: str = "pro", **limits: int) -> str:
    return control("/key", {"plan": plan, **limits})["key"]


class RecordingSleep:
    """An injected sleep: records the seconds asked for, runs ``also`` and returns at once."""

    def __init__(self, also=None) -> None:
        self.slept: List[float] = []
        self.also = also

    def __call__(self, seconds: float) -> None:
        self.slept.append(seconds)
        if self.also is not None:
            self.also(seconds)


def no_wait(seconds: float) -> None:
    raise AssertionError(f"the client wanted to wait {seconds} s: no test waits unless it says so")


def client(**options: Any) -> Client:
    options.setdefault("sleep", no_wait)
    options.setdefault("api_key", API_KEY)
    options.setdefault("base_url", BASE_URL)
    return Client(**options)


class ServerTest(unittest.TestCase):
    maxDiff = None

    def assertRaisesUpdown(self, call, *args: Any, **kwargs: Any):
        from updown import UpdownError

        try:
            call(*args, **kwargs)
        except UpdownError as err:
            return err
        self.fail("expected an UpdownError")
