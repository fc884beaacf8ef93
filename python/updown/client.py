"""The client: one method per operation of the API (paths from the generated OPERATIONS table), page
iterators with ``to_pandas()``, retries with backoff that honour Retry-After, typed errors, timeouts,
an Idempotency-Key kept across a POST's retries, a cache of immutable pages and backtest helpers."""

from __future__ import annotations

import datetime as _dt
import email.utils
import gc
import json
import os
import random as _random
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import zlib
from dataclasses import dataclass
from http.client import HTTPException
from typing import (
    TYPE_CHECKING,
    Any,
    BinaryIO,
    Callable,
    Dict,
    Generic,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    cast,
)

from . import frames
from . import types as T
from .cache import CachedAnswer, PageCache
from .errors import UpdownError, error_from_answer

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Client", "Pages", "Records", "Backtest", "RetryInfo", "RETRYABLE_STATUSES"]

#: Statuses worth another attempt: the request may succeed as it is, later.
RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})

DEFAULT_BASE_URL = "http://127.0.0.1:8080"

Item = TypeVar("Item")
QueryValue = Union[str, int, float, bool, None, _dt.datetime]


@dataclass(frozen=True)
class RetryInfo:
    """What ``on_retry`` is told before each retry."""

    #: The retry about to be made: 1 for the first.
    attempt: int
    #: Seconds the client waits before it.
    delay: float
    #: The failed attempt's error (its ``status`` is None when no answer came).
    error: UpdownError


def retry_after_seconds(header: Optional[str], now: float) -> Optional[float]:
    """Retry-After as seconds: delta-seconds or an HTTP date (RFC 9110 10.2.3); None when absent or
    unreadable; a date in the past is 0."""
    if header is None:
        return None
    value = header.strip()
    if re.fullmatch(r"\d+", value):
        return float(int(value))
    if not re.search(r"[A-Za-z]{3}", value):
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return max(0.0, when.timestamp() - now)


def backoff_seconds(retry: int, base: float, cap: float, rand: Callable[[], float]) -> float:
    """Full jitter: uniform in [0, min(cap, base * 2^(retry-1)))."""
    return rand() * min(cap, base * 2 ** (retry - 1))


def _query_value(value: QueryValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise ValueError("a naive datetime is ambiguous: give it a timezone (e.g. datetime.timezone.utc)")
        return value.astimezone(_dt.timezone.utc).isoformat().replace("+00:00", "Z")
    return str(value)


def _query_string(query: Optional[Mapping[str, QueryValue]]) -> str:
    if not query:
        return ""
    pairs = [(k, _query_value(v)) for k, v in query.items() if v is not None]
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


def _seg(value: str) -> str:
    return urllib.parse.quote(str(value), safe="")


@dataclass
class _Answer:
    status: int
    headers: Mapping[str, str]
    body: bytes


class _Failure(Exception):
    def __init__(self, error: UpdownError, retryable: bool, wait: Optional[float]) -> None:
        super().__init__(error.message)
        self.error = error
        self.retryable = retryable
        self.wait = wait


class Pages(Generic[Item]):
    """Every item of a paged list, each exactly once: asks page after page by offset (from the query's
    own ``offset``) and stops at an empty or short page or when the offset reaches ``total``. Nothing is
    fetched before iteration starts; leaving a loop fetches nothing more. Each iteration starts over."""

    def __init__(
        self,
        fetch: Callable[[Dict[str, Any]], Dict[str, Any]],
        items_key: str,
        query: Dict[str, Any],
        to_frame: Callable[[List[Any]], "pd.DataFrame"],
    ) -> None:
        self._fetch = fetch
        self._items_key = items_key
        self._query = query
        self._to_frame = to_frame
        #: The ``total`` of the last page read, None before the first.
        self.total: Optional[int] = None

    def pages(self) -> Iterator[Dict[str, Any]]:
        """The answers themselves, page after page."""
        offset = int(self._query.get("offset") or 0)
        while True:
            page = self._fetch({**self._query, "offset": offset})
            self.total = page.get("total")
            items = page[self._items_key]
            yield page
            offset += len(items)
            if not items or len(items) < page["limit"] or offset >= page["total"]:
                return

    def __iter__(self) -> Iterator[Item]:
        for page in self.pages():
            yield from page[self._items_key]

    def to_list(self) -> List[Item]:
        items: List[Item] = []
        # The cyclic garbage collector is paused while pages pile up: json makes millions of objects
        # (none in a cycle), and each full collection walks all of them again, which made a 24h
        # market's load several times slower. Whatever the caller's collector was doing resumes after.
        collecting = gc.isenabled()
        gc.disable()
        try:
            for page in self.pages():
                items.extend(page[self._items_key])
        finally:
            if collecting:
                gc.enable()
        return items

    def to_pandas(self, **options: Any) -> "pd.DataFrame":
        """Every item in one DataFrame (see the README for the columns of each list)."""
        items = self.to_list()
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._to_frame(items, **options)  # type: ignore[call-arg]
        finally:
            if collecting:
                gc.enable()


class Records(Generic[Item]):
    """Records the API answers in one piece (a run's results and trades), with ``to_pandas()``."""

    def __init__(self, items: List[Item], to_frame: Callable[[List[Any]], "pd.DataFrame"]) -> None:
        self._items = items
        self._to_frame = to_frame

    def __iter__(self) -> Iterator[Item]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: int) -> Item:
        return self._items[index]

    def to_list(self) -> List[Item]:
        return list(self._items)

    def to_pandas(self) -> "pd.DataFrame":
        return self._to_frame(self._items)


def _result_rows(results: List[T.BacktestMarketResult]) -> "pd.DataFrame":
    trade_counts = [len(r.get("trades") or []) for r in results]
    frame = frames.records_frame(results, "BacktestMarketResult", skip=("trades",))
    frame.insert(frame.columns.get_loc("orders_unfilled"), "trade_count", trade_counts)
    return frame


def _trade_rows(trades: List[Dict[str, Any]]) -> "pd.DataFrame":
    # Each trade of a run carries its market's slug first (added by Backtest.trades).
    return frames.records_frame(trades, "BacktestTrade", extra={"slug": [t.get("slug") for t in trades]})


class Backtest:
    """A finished backtest run: ``run``, ``strategy``, ``aggregate``, per-market ``results`` and every
    ``trades`` as Records with ``to_pandas()``, and the ``equity`` curve as a frame."""

    def __init__(self, answer: T.BacktestRunAnswer) -> None:
        self.answer = answer
        self.run: T.BacktestRun = answer["run"]
        self.strategy = answer.get("strategy")
        self.aggregate: Optional[T.BacktestAggregate] = answer.get("aggregate")
        self.unresolved = answer.get("unresolved", [])
        results = list(answer.get("results") or [])
        self.results: Records[T.BacktestMarketResult] = Records(results, _result_rows)
        trades = [dict(trade, slug=r["slug"]) for r in results for trade in (r.get("trades") or [])]
        self.trades: Records[Dict[str, Any]] = Records(trades, _trade_rows)

    @property
    def status(self) -> str:
        return self.run["status"]

    def equity(self) -> "pd.DataFrame":
        """The aggregate's equity curve: ``time`` (datetime64[ns, UTC]) and ``equity`` (float64)."""
        curve = (self.aggregate or {}).get("equity_curve") or []
        return frames.records_frame(curve, "BacktestAggregateEquityCurveItem")


class Client:
    """A client of the Up or Down history API.

    ``api_key`` defaults to the environment's ``UPDOWN_API_KEY``, ``base_url`` to ``UPDOWN_BASE_URL``
    (else http://127.0.0.1:8080). Times are in seconds: ``timeout`` bounds one attempt (connecting,
    each wait for data and the whole body; 0 or None for none); a failed attempt is retried at most
    ``max_retries`` times on 408, 429, 500, 502, 503, 504, connection errors and timeouts, after the
    answer's Retry-After or a backoff uniform in [0, min(retry_max, retry_base * 2^(n-1))); a
    Retry-After longer than ``retry_max`` fails at once with its error. ``sleep``, ``random`` and
    ``clock`` are injectable (tests pass fakes). ``cache_dir`` keeps answers the server marks immutable
    (resolved markets' pages and series, by URL and ETag), at most ``cache_max_bytes``."""

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        timeout: Optional[float] = 30.0,
        max_retries: int = 4,
        retry_base: float = 0.25,
        retry_max: float = 30.0,
        sleep: Optional[Callable[[float], Any]] = None,
        random: Optional[Callable[[], float]] = None,
        clock: Optional[Callable[[], float]] = None,
        on_retry: Optional[Callable[[RetryInfo], Any]] = None,
        cache_dir: Optional[Union[str, "os.PathLike[str]"]] = None,
        cache_max_bytes: int = 1 << 30,
        compress: bool = True,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        self.api_key = api_key if api_key is not None else os.environ.get("UPDOWN_API_KEY")
        self.base_url = (base_url or os.environ.get("UPDOWN_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_base = retry_base
        self.retry_max = retry_max
        self._sleep = sleep or time.sleep
        self._random = random or _random.random
        self._clock = clock or time.time
        self._on_retry = on_retry
        self.cache: Optional[PageCache] = PageCache(cache_dir, cache_max_bytes) if cache_dir is not None else None
        self._compress = compress
        self._headers = dict(headers or {})
        # No redirect following surprises and no HTTP error raising: every status comes back as an answer.
        self._opener = urllib.request.build_opener(_NoErrors())

    # ---- the service ----

    def health(self) -> Dict[str, Any]:
        return self._call("getHealth")

    def readiness(self) -> Dict[str, Any]:
        return self._call("getReadiness")

    def metrics(self) -> str:
        """Prometheus text."""
        return cast(bytes, self._call("getMetrics", raw=True)).decode("utf-8")

    # ---- account ----

    def account(self) -> T.Account:
        """The key's plan, both windows' usage and the backtest quota; counts against nothing."""
        return self._call("getAccount")

    def backtest_quota(self) -> T.BacktestQuota:
        return self._call("getBacktestQuota")

    # ---- markets ----

    def markets(self, **query: QueryValue) -> Pages[T.Market]:
        """Every market matching the query (ListMarketsQuery: coin, market_type, resolved, start_time,
        end_time; ``limit`` is the page size, at most 100), newest first."""
        return Pages(lambda q: self.markets_page(**q), "markets", dict(query), frames_markets)

    def markets_page(self, **query: QueryValue) -> T.MarketList:
        return self._call("listMarkets", query=query)

    def market(self, slug: str) -> T.Market:
        return self._call("getMarket", {"slug": slug})

    def coverage(self, slug: str) -> T.Coverage:
        return self._call("getMarketCoverage", {"slug": slug})

    def series_catalog(self) -> T.SeriesList:
        """Every recorded series (coin and type) with counts and recording coverage."""
        return self._call("listSeries")

    def snapshots(self, slug: str, **query: QueryValue) -> Pages[T.Snapshot]:
        """Every snapshot of a market (ListSnapshotsQuery: newest first unless ``order="asc"``;
        ``start_time``/``end_time`` inclusive; ``include_orderbook=True`` for the books; ``limit``
        1..1000 is the page size). ``to_pandas(books="nested"|"flat"|"none", levels=5)``."""
        return Pages(lambda q: self.snapshots_page(slug, **q), "snapshots", dict(query), frames.snapshots_frame)

    def snapshots_page(self, slug: str, **query: QueryValue) -> T.SnapshotPage:
        return self._call("listSnapshots", {"slug": slug}, query)

    def snapshot_at(self, slug: str, time: QueryValue, include_orderbook: Optional[bool] = None) -> T.SnapshotAt:
        """The snapshot in effect at ``time``: the latest at or before it, and its distance."""
        return self._call("getSnapshotAt", {"slug": slug}, {"time": time, "include_orderbook": include_orderbook})

    def market_series(self, slug: str, **query: QueryValue) -> T.MarketSeries:
        """Up, Down and coin prices over the market's life, downsampled to at most ``points``."""
        return self._call("getSeries", {"slug": slug}, query)

    def trades(self, slug: str, **query: QueryValue) -> Pages[T.MarketTrade]:
        """Every Polymarket trade of a market in the query's range (ListMarketTradesQuery)."""
        return Pages(lambda q: self.trades_page(slug, **q), "trades", dict(query), _frame_of("MarketTrade"))

    def trades_page(self, slug: str, **query: QueryValue) -> T.MarketTradePage:
        return self._call("listMarketTrades", {"slug": slug}, query)

    def events(self, slug: str, **query: QueryValue) -> Pages[T.MarketEvent]:
        """Every recorded market-channel message of a market (ListMarketEventsQuery: newest first unless
        ``order="asc"``; ``start_time``/``end_time`` bound the upstream timestamp; ``types``
        comma-separated), each as Polymarket sent it plus ``received_at`` (docs/events.md)."""
        return Pages(lambda q: self.events_page(slug, **q), "events", dict(query), _frame_of("MarketEvent"))

    def events_page(self, slug: str, **query: QueryValue) -> T.MarketEventPage:
        return self._call("listMarketEvents", {"slug": slug}, query)

    def book_at(self, slug: str, time: QueryValue) -> T.BookAt:
        """The full book of both outcomes at ``time``, rebuilt from the market's events."""
        return self._call("getBookAt", {"slug": slug}, {"time": time})

    def replay(self, assets: Sequence[str], from_: QueryValue, to: QueryValue, speed: QueryValue = "max") -> List[Dict[str, Any]]:
        """The recorded messages of ``assets`` (token ids or market slugs) between ``from_`` and ``to``,
        each exactly as Polymarket sent it, in receive order (GET /v1/replay, NDJSON; one request per
        market-hour). ``speed`` paces the answer as it is sent (default ``max``)."""
        query = {"assets_ids": ",".join(assets), "from": from_, "to": to, "speed": speed}
        data = cast(bytes, self._call("replay", {}, query, raw=True))
        return [json.loads(line) for line in data.decode("utf-8").splitlines() if line]

    def replay_url(self, from_: QueryValue, to: QueryValue, speed: QueryValue = 1) -> str:
        """The WebSocket URL of a replay (GET /v1/replay/ws) for a WebSocket library: connect with the
        ``X-API-Key`` header, send ``{"assets_ids": [...], "type": "market"}`` and read (docs/events.md)."""
        _, path = T.OPERATIONS["replayWebSocket"]
        query = urllib.parse.urlencode({"from": from_, "to": to, "speed": speed})
        return re.sub(r"^http", "ws", self.base_url) + path + "?" + query

    def execution_price(self, slug: str, **query: QueryValue) -> T.ExecutionPrice:
        """What a market order would have paid: outcome, side, size, time (GetExecutionPriceQuery)."""
        return self._call("getExecutionPrice", {"slug": slug}, query)

    def export_snapshots(self, slug: str, path: Optional[Union[str, "os.PathLike[str]"]] = None, **query: QueryValue) -> Optional[bytes]:
        """A market's snapshots as a file (``format`` ndjson, csv or parquet): written to ``path``,
        else answered as bytes."""
        return self._export("exportSnapshots", {"slug": slug}, query, path)

    def export_series(self, path: Optional[Union[str, "os.PathLike[str]"]] = None, **query: QueryValue) -> Optional[bytes]:
        """Many markets' snapshots (``coin``, ``market_type``, ``format``, range) as one file."""
        return self._export("exportSeries", {}, query, path)

    # ---- exchange series (Binance) ----

    def latest(self, coin: str, venue: str) -> T.LatestDepth:
        return self._call("getLatestDepth", {"coin": coin, "venue": venue})

    def latest_trades(self, coin: str, venue: str, **query: QueryValue) -> T.LatestTrades:
        return self._call("listLatestTrades", {"coin": coin, "venue": venue}, query)

    def depth_snapshots(self, coin: str, venue: str, **query: QueryValue) -> Pages[T.DepthSnapshot]:
        return Pages(lambda q: self.depth_snapshots_page(coin, venue, **q), "data", dict(query), _frame_of("DepthSnapshot"))

    def depth_snapshots_page(self, coin: str, venue: str, **query: QueryValue) -> T.DepthPage:
        return self._call("listDepthSnapshots", {"coin": coin, "venue": venue}, query)

    def candles(self, coin: str, venue: str, **query: QueryValue) -> Pages[T.Candle]:
        return Pages(lambda q: self.candles_page(coin, venue, **q), "data", dict(query), _frame_of("Candle"))

    def candles_page(self, coin: str, venue: str, **query: QueryValue) -> T.CandlePage:
        return self._call("listCandles", {"coin": coin, "venue": venue}, query)

    def funding_rates(self, coin: str, **query: QueryValue) -> Pages[T.FundingRate]:
        return Pages(lambda q: self.funding_rates_page(coin, **q), "data", dict(query), _frame_of("FundingRate"))

    def funding_rates_page(self, coin: str, **query: QueryValue) -> T.FundingRatePage:
        return self._call("listFundingRates", {"coin": coin}, query)

    def open_interest(self, coin: str, **query: QueryValue) -> Pages[T.OpenInterest]:
        return Pages(lambda q: self.open_interest_page(coin, **q), "data", dict(query), _frame_of("OpenInterest"))

    def open_interest_page(self, coin: str, **query: QueryValue) -> T.OpenInterestPage:
        return self._call("listOpenInterest", {"coin": coin}, query)

    def mark_prices(self, coin: str, **query: QueryValue) -> Pages[T.MarkPrice]:
        return Pages(lambda q: self.mark_prices_page(coin, **q), "data", dict(query), _frame_of("MarkPrice"))

    def mark_prices_page(self, coin: str, **query: QueryValue) -> T.MarkPricePage:
        return self._call("listMarkPrices", {"coin": coin}, query)

    # ---- backtests ----

    def strategy_schema(self) -> Dict[str, Any]:
        """The JSON Schema of a strategy definition."""
        return self._call("getStrategySchema")

    def generate_strategy(self, body: T.GenerateStrategyBody, idempotency_key: Optional[str] = None) -> T.GenerateAnswer:
        """Makes and stores a strategy from a prompt or preset (one generation of the monthly quota)."""
        return self._call("generateStrategy", body=body, idempotency_key=idempotency_key)

    def run_strategy(self, body: T.RunStrategyBody, idempotency_key: Optional[str] = None) -> T.BacktestRunAnswer:
        """Generates a strategy (or takes a definition) and runs it; ``run.status`` says if it finished."""
        return self._call("runStrategy", body=body, idempotency_key=idempotency_key)

    def run_backtest(self, body: T.RunBacktestBody, idempotency_key: Optional[str] = None) -> T.BacktestRunAnswer:
        """Runs a stored strategy (``strategy_id``) or a ``definition``; see wait_for_run."""
        return self._call("runBacktest", body=body, idempotency_key=idempotency_key)

    def backtest_run(self, run_id: str, **query: QueryValue) -> T.BacktestRunAnswer:
        """A run and a page of its per-market results (``results_limit``, ``results_offset``)."""
        return self._call("getBacktestRun", {"id": run_id}, query)

    def export_run_trades(self, run_id: str, path: Optional[Union[str, "os.PathLike[str]"]] = None, **query: QueryValue) -> Optional[bytes]:
        """Every trade of a run with its market's slug as a file (``format`` csv, ndjson or parquet):
        written to ``path``, else answered as bytes."""
        return self._export("exportBacktestRunTrades", {"id": run_id}, query, path)

    def export_run_results(self, run_id: str, path: Optional[Union[str, "os.PathLike[str]"]] = None, **query: QueryValue) -> Optional[bytes]:
        """A run's per-market results as a file (``format`` csv, ndjson or parquet)."""
        return self._export("exportBacktestRunResults", {"id": run_id}, query, path)

    def run_definition(self, run_id: str) -> T.StrategyDefinition:
        """The definition a run replayed (to run again, or edit)."""
        return self._call("getBacktestRunDefinition", {"id": run_id})

    def compare_runs(self, run_ids: Sequence[str]) -> T.BacktestComparedRuns:
        """Runs of the key side by side: each one's run, aggregate, benchmarks, intervals, sweep and walk-forward."""
        return self._call("compareBacktestRuns", {}, {"ids": ",".join(run_ids)})

    def run_trades(self, run_id: str, slug: str, **query: QueryValue) -> Pages[T.BacktestTrade]:
        """Every trade of one market in a run, oldest first, page after page."""
        return Pages(lambda q: self.run_trades_page(run_id, slug, **q), "trades", dict(query), _frame_of("BacktestTrade"))

    def run_trades_page(self, run_id: str, slug: str, **query: QueryValue) -> T.BacktestMarketTrades:
        return self._call("getBacktestRunTrades", {"id": run_id, "slug": slug}, query)

    def replay_strategy(self, body: T.ReplayStrategyBody, idempotency_key: Optional[str] = None) -> Union[T.ReplayAnswer, T.ReplayPending]:
        """PolyHistorical's ``POST /v1/replay``: one market and a strategy of conditions, answered in its
        shape when the run finishes within ``wait`` seconds, else a pending run to poll (backtest_run)."""
        return self._call("replayStrategy", body=body, idempotency_key=idempotency_key)

    def wait_for_run(self, run_id: str, poll: float = 1.0) -> T.BacktestRunAnswer:
        """Polls a run until it is ``complete`` or ``failed`` and answers it (a failed run is answered,
        not raised: see ``run["error"]``)."""
        while True:
            answer = self.backtest_run(run_id)
            if answer["run"]["status"] in ("complete", "failed"):
                return answer
            self._sleep(poll)

    def strategies(self, **query: QueryValue) -> Pages[T.Strategy]:
        """This key's stored strategies, page after page."""
        return Pages(lambda q: self.strategies_page(**q), "strategies", dict(query), _frame_of("Strategy"))

    def strategies_page(self, **query: QueryValue) -> T.StrategyList:
        return self._call("listStrategies", query=query)

    def strategy(self, strategy_id: str) -> T.Strategy:
        return self._call("getStrategy", {"id": strategy_id})

    def backtest(
        self,
        coin: str,
        market_type: str,
        *,
        definition: Optional[T.StrategyDefinition] = None,
        preset: Optional[str] = None,
        prompt: Optional[str] = None,
        strategy_id: Optional[str] = None,
        poll: float = 1.0,
        idempotency_key: Optional[str] = None,
        **options: Any,
    ) -> Backtest:
        """Runs exactly one of a ``definition``, a stored ``strategy_id``, a ``preset`` or a ``prompt``
        (the last two spend one generation) over ``market_count`` (default 10) markets of the series,
        waits for the run and answers it as a Backtest (results and trades as DataFrames). Other
        options (``market_count``, ``start_time``, ``position_size``, ``latency_ms``, ``wait`` ...) go
        in the body as they are."""
        given = {k: v for k, v in (("definition", definition), ("preset", preset), ("prompt", prompt), ("strategy_id", strategy_id)) if v is not None}
        if len(given) != 1:
            raise ValueError("give exactly one of definition, strategy_id, preset or prompt")
        body: Dict[str, Any] = {"coin": coin, "market_type": market_type, **given, **options}
        if "preset" in given or "prompt" in given:
            answer = self.run_strategy(cast(T.RunStrategyBody, body), idempotency_key)
        else:
            answer = self.run_backtest(cast(T.RunBacktestBody, body), idempotency_key)
        if answer["run"]["status"] not in ("complete", "failed"):
            answer = self.wait_for_run(answer["run"]["id"], poll)
        return Backtest(answer)

    def backtest_results(self, run_id: str) -> Records[T.BacktestMarketResult]:
        """A run's per-market results (the API answers them with the run, in one piece)."""
        return Backtest(self.backtest_run(run_id)).results

    # ---- the one way out ----

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Mapping[str, QueryValue]] = None,
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None,
        idempotency_key: Optional[str] = None,
        raw: bool = False,
    ) -> Any:
        """One call, with retries, the timeout and the cache; the parsed JSON of a 2xx (bytes when
        ``raw``), else an UpdownError."""
        url = self.base_url + path + _query_string(query)
        key = (idempotency_key or str(uuid.uuid4())) if method == "POST" else None
        sent = self._request_headers(body is not None, key, headers)
        data = None if body is None else json.dumps(body).encode("utf-8")
        cached = self.cache.get(url) if self.cache is not None and method == "GET" else None
        if cached is not None:
            if cached.fresh(self._clock()):
                return cached.body if raw else json.loads(cached.body)
            sent["If-None-Match"] = cached.etag
        limit = self.timeout if timeout is None else timeout
        retry = 0
        while True:
            try:
                answer = self._attempt(method, url, sent, data, limit)
            except _Failure as failure:
                retry += 1
                delay = self._retry_delay(failure, retry)
                if delay is None:
                    raise failure.error from None
                if self._on_retry is not None:
                    self._on_retry(RetryInfo(retry, delay, failure.error))
                self._sleep(delay)
                continue
            if answer.status == 304 and cached is not None:
                cached.confirmed_at = self._clock()
                self.cache.put(cached)  # type: ignore[union-attr]
                return cached.body if raw else json.loads(cached.body)
            if self.cache is not None and method == "GET":
                self._keep(url, answer)
            if raw:
                return answer.body
            try:
                return json.loads(answer.body)
            except ValueError:
                raise UpdownError(
                    "UNEXPECTED_RESPONSE",
                    f"HTTP {answer.status} with a body that is not JSON",
                    status=answer.status,
                    request_id=answer.headers.get("x-request-id"),
                ) from None

    def _call(
        self,
        operation: str,
        path_params: Optional[Mapping[str, str]] = None,
        query: Optional[Mapping[str, QueryValue]] = None,
        body: Any = None,
        idempotency_key: Optional[str] = None,
        raw: bool = False,
    ) -> Any:
        method, template = T.OPERATIONS[operation]
        path = template.format(**{k: _seg(v) for k, v in (path_params or {}).items()})
        return self.request(method, path, query=query, body=body, idempotency_key=idempotency_key, raw=raw)

    def _export(self, operation: str, path_params: Mapping[str, str], query: Mapping[str, QueryValue], target: Any) -> Optional[bytes]:
        data = cast(bytes, self._call(operation, path_params, query, raw=True))
        if target is None:
            return data
        with open(target, "wb") as f:
            f.write(data)
        return None

    def _request_headers(self, has_body: bool, key: Optional[str], extra: Optional[Mapping[str, str]]) -> Dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "updown-python/0.1"}
        if self._compress:
            headers["Accept-Encoding"] = "gzip"
        if self.api_key:
            headers["X-API-Key"] = self.api_key
        if has_body:
            headers["Content-Type"] = "application/json"
        if key is not None:
            headers["Idempotency-Key"] = key
        headers.update(self._headers)
        headers.update(extra or {})
        return headers

    def _retry_delay(self, failure: _Failure, retry: int) -> Optional[float]:
        if not failure.retryable or retry > self.max_retries:
            return None
        if failure.wait is None:
            return backoff_seconds(retry, self.retry_base, self.retry_max, self._random)
        return failure.wait if failure.wait <= self.retry_max else None

    def _attempt(self, method: str, url: str, headers: Dict[str, str], data: Optional[bytes], limit: Optional[float]) -> _Answer:
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        deadline = None if not limit else time.monotonic() + limit
        try:
            with self._opener.open(request, timeout=limit or None) as response:
                chunks = []
                while True:
                    chunk = response.read(1 << 20)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    if deadline is not None and time.monotonic() > deadline:
                        raise socket.timeout("the body outlasted the timeout")
                status = response.status
                answer_headers = {k.lower(): v for k, v in response.headers.items()}
        except (socket.timeout, TimeoutError) as err:
            raise _Failure(UpdownError("TIMEOUT", f"The request timed out: {err}"), True, None) from None
        except (urllib.error.URLError, HTTPException, OSError) as err:
            reason = getattr(err, "reason", err)
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise _Failure(UpdownError("TIMEOUT", f"The request timed out: {reason}"), True, None) from None
            raise _Failure(UpdownError("NETWORK", f"The request failed: {reason!r}"), True, None) from None
        body = b"".join(chunks)
        if answer_headers.get("content-encoding") == "gzip":
            try:
                body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
            except zlib.error:
                raise _Failure(UpdownError("NETWORK", "The answer's gzip body was cut off"), True, None) from None
        if 200 <= status < 300 or status == 304:
            return _Answer(status, answer_headers, body)
        wait = retry_after_seconds(answer_headers.get("retry-after"), self._clock())
        try:
            parsed: Any = json.loads(body) if body else None
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        error = error_from_answer(status, parsed, answer_headers.get("x-request-id"), wait)
        raise _Failure(error, status in RETRYABLE_STATUSES, wait)

    def _keep(self, url: str, answer: _Answer) -> None:
        etag = answer.headers.get("etag")
        match = re.search(r"max-age=(\d+)", answer.headers.get("cache-control", ""))
        if etag is None or answer.status != 200:
            return
        max_age = float(match.group(1)) if match else 0.0
        self.cache.put(CachedAnswer(url, etag, self._clock(), max_age, answer.body))  # type: ignore[union-attr]


class _NoErrors(urllib.request.HTTPErrorProcessor):
    """Every status is an answer for the client to read (urllib would raise on anything not 2xx)."""

    def http_response(self, request: urllib.request.Request, response: Any) -> Any:
        return response

    https_response = http_response


def _frame_of(shape: str) -> Callable[[List[Any]], "pd.DataFrame"]:
    return lambda items: frames.records_frame(items, shape)


frames_markets = _frame_of("Market")

#: The client's method of every operation of the API document (a test checks none is missing).
OPERATION_METHODS: Dict[str, str] = {
    "getHealth": "health",
    "getReadiness": "readiness",
    "getMetrics": "metrics",
    "getAccount": "account",
    "getBacktestQuota": "backtest_quota",
    "listMarkets": "markets_page",
    "getMarket": "market",
    "listSnapshots": "snapshots_page",
    "getSnapshotAt": "snapshot_at",
    "getSeries": "market_series",
    "listMarketTrades": "trades_page",
    "getMarketCoverage": "coverage",
    "listSeries": "series_catalog",
    "exportSnapshots": "export_snapshots",
    "exportSeries": "export_series",
    "getLatestDepth": "latest",
    "listLatestTrades": "latest_trades",
    "listDepthSnapshots": "depth_snapshots_page",
    "listCandles": "candles_page",
    "listFundingRates": "funding_rates_page",
    "listOpenInterest": "open_interest_page",
    "listMarkPrices": "mark_prices_page",
    "getExecutionPrice": "execution_price",
    "listMarketEvents": "events_page",
    "getBookAt": "book_at",
    "replay": "replay",
    "replayWebSocket": "replay_url",
    "getStrategySchema": "strategy_schema",
    "generateStrategy": "generate_strategy",
    "runStrategy": "run_strategy",
    "listStrategies": "strategies_page",
    "getStrategy": "strategy",
    "runBacktest": "run_backtest",
    "getBacktestRun": "backtest_run",
    "getBacktestRunTrades": "run_trades_page",
    "exportBacktestRunTrades": "export_run_trades",
    "exportBacktestRunResults": "export_run_results",
    "getBacktestRunDefinition": "run_definition",
    "compareBacktestRuns": "compare_runs",
    "replayStrategy": "replay_strategy",
}
