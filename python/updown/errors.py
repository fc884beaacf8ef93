"""The one error of every failed call: the server's envelope (code, message, details), the HTTP status,
the request id and Retry-After, or one of the client's own codes when no readable answer came."""

from __future__ import annotations

from typing import Any, Optional

#: Codes of failures that never reached an answer from the API, or got one it could not read.
#: TIMEOUT: an attempt outlasted the timeout (after the last retry); NETWORK: no connection (refused,
#: reset, DNS, an answer cut off); UNEXPECTED_RESPONSE: an answer that is not the API's JSON.
CLIENT_CODES = ("TIMEOUT", "NETWORK", "UNEXPECTED_RESPONSE")


class UpdownError(Exception):
    """Every failure of a client call. ``code`` is the server's code from its error envelope
    (``VALIDATION_ERROR``, ``UNAUTHORIZED``, ``TIER_ACCESS_DENIED``, ``RESOURCE_NOT_FOUND``,
    ``RATE_LIMIT_EXCEEDED``, ``QUOTA_EXCEEDED``, ``SERVICE_UNAVAILABLE``, ...) or one of CLIENT_CODES."""

    def __init__(
        self,
        code: str,
        message: str,
        status: Optional[int] = None,
        request_id: Optional[str] = None,
        details: Any = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        #: The HTTP status, or None when no answer came.
        self.status = status
        #: The X-Request-Id of the answer (quote it when reporting a problem), or None.
        self.request_id = request_id
        #: The envelope's ``details``: ``parameter`` and ``rule`` of a 400, ``required_plan`` of a 403 ...
        self.details = details
        #: Seconds the answer's Retry-After asked for, or None.
        self.retry_after = retry_after

    @property
    def is_rate_limited(self) -> bool:
        """A 429: a minute or day window (RATE_LIMIT_EXCEEDED) or the monthly quota (QUOTA_EXCEEDED)."""
        return self.status == 429

    def __str__(self) -> str:
        where = f"HTTP {self.status}" if self.status is not None else "no answer"
        request = f", request {self.request_id}" if self.request_id else ""
        return f"{self.code} ({where}{request}): {self.message}"

    def __repr__(self) -> str:
        return f"UpdownError({self.code!r}, {self.message!r}, status={self.status!r}, request_id={self.request_id!r})"


def error_from_answer(status: int, body: Any, request_id: Optional[str], retry_after: Optional[float]) -> UpdownError:
    """The error of a non-2xx answer, from the server's envelope when it sent one."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str):
        return UpdownError(
            error["code"],
            error["message"],
            status=status,
            request_id=request_id or body.get("request_id"),
            details=error.get("details"),
            retry_after=retry_after,
        )
    return UpdownError(
        "UNEXPECTED_RESPONSE",
        f"HTTP {status} without the API's error envelope",
        status=status,
        request_id=request_id,
        details=None if body is None else {"body": body},
        retry_after=retry_after,
    )
