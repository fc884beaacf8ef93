"""A client of the Up or Down history API: paging, retries, typed errors, pandas frames, a local cache
of immutable pages and backtest helpers. Standard library only; pandas is imported by to_pandas()."""

from __future__ import annotations

from .cache import PageCache
from .client import RETRYABLE_STATUSES, Backtest, Client, Pages, Records, RetryInfo
from .errors import CLIENT_CODES, UpdownError

__version__ = "0.1.0"

__all__ = [
    "Backtest",
    "CLIENT_CODES",
    "Client",
    "PageCache",
    "Pages",
    "Records",
    "RETRYABLE_STATUSES",
    "RetryInfo",
    "UpdownError",
    "__version__",
]
