"""Types of the Up or Down history API, generated from openapi.json by python/tools/generate_types.py.

Do not edit: regenerate with `python3 python/tools/generate_types.py` (a test checks the bytes).
"""

# fmt: off
from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union

API_VERSION = "1.0.0"

#: operationId -> (HTTP method, path template), in the document's order.
OPERATIONS: Dict[str, Tuple[str, str]] = {
    "getHealth": ("GET", "/healthz"),
    "getReadiness": ("GET", "/readyz"),
    "getMetrics": ("GET", "/metrics"),
    "getAccount": ("GET", "/v1/account"),
    "getBacktestQuota": ("GET", "/v1/backtest-ai/quota"),
    "listMarkets": ("GET", "/v1/markets"),
    "getMarket": ("GET", "/v1/markets/{slug}"),
    "listSnapshots": ("GET", "/v1/markets/{slug}/snapshots"),
    "getSnapshotAt": ("GET", "/v1/markets/{slug}/snapshots/at"),
    "getSeries": ("GET", "/v1/markets/{slug}/series"),
    "listMarketTrades": ("GET", "/v1/markets/{slug}/trades"),
    "listMarketEvents": ("GET", "/v1/markets/{slug}/events"),
    "getBookAt": ("GET", "/v1/markets/{slug}/book"),
    "replayWebSocket": ("GET", "/v1/replay/ws"),
    "replay": ("GET", "/v1/replay"),
    "replayStrategy": ("POST", "/v1/replay"),
    "getMarketCoverage": ("GET", "/v1/markets/{slug}/coverage"),
    "listSeries": ("GET", "/v1/series"),
    "exportSnapshots": ("GET", "/v1/markets/{slug}/snapshots/export"),
    "exportSeries": ("GET", "/v1/snapshots/export"),
    "getLatestDepth": ("GET", "/v1/{coin}/{venue}/latest"),
    "listLatestTrades": ("GET", "/v1/{coin}/{venue}/trades/latest"),
    "listDepthSnapshots": ("GET", "/v1/{coin}/{venue}/snapshots"),
    "listCandles": ("GET", "/v1/{coin}/{venue}/candles"),
    "listFundingRates": ("GET", "/v1/{coin}/futures/funding-rates"),
    "listOpenInterest": ("GET", "/v1/{coin}/futures/open-interest"),
    "listMarkPrices": ("GET", "/v1/{coin}/futures/mark-price"),
    "getExecutionPrice": ("GET", "/v1/markets/{slug}/execution-price"),
    "getStrategySchema": ("GET", "/v1/backtest-ai/schema"),
    "generateStrategy": ("POST", "/v1/backtest-ai/generate"),
    "runStrategy": ("POST", "/v1/backtest-ai/strategy"),
    "listStrategies": ("GET", "/v1/backtest-ai/strategies"),
    "getStrategy": ("GET", "/v1/backtest-ai/strategies/{id}"),
    "runBacktest": ("POST", "/v1/backtest-ai/run"),
    "getBacktestRun": ("GET", "/v1/backtest-ai/runs/{id}"),
    "getBacktestRunTrades": ("GET", "/v1/backtest-ai/runs/{id}/markets/{slug}/trades"),
    "exportBacktestRunTrades": ("GET", "/v1/backtest-ai/runs/{id}/trades"),
    "exportBacktestRunResults": ("GET", "/v1/backtest-ai/runs/{id}/results"),
    "getBacktestRunDefinition": ("GET", "/v1/backtest-ai/runs/{id}/definition"),
    "compareBacktestRuns": ("GET", "/v1/backtest-ai/runs"),
}

#: TypedDict -> {field: 'datetime' | the TypedDict of an object field | 'value'}, in field order:
#: what DataFrames turn into timezone-aware times and which objects they flatten.
SHAPES: Dict[str, Dict[str, str]] = {
    "Account": {"plan": "value", "key": "AccountKey", "usage": "AccountUsage", "quota": "AccountQuota", "features": "AccountFeatures", "btc_history": "value", "history": "value", "keys_per_account": "value"},
    "AccountFeatures": {"spot": "value", "futures": "value", "backtest": "value"},
    "AccountKey": {"id": "value", "name": "value", "account": "value", "created_at": "datetime"},
    "AccountQuota": {"included": "value", "month": "value", "limit": "value", "used": "value", "remaining": "value", "resets_at": "datetime"},
    "AccountUsage": {"minute": "UsageWindow", "day": "UsageWindow"},
    "BacktestAggregate": {"markets": "value", "markets_traded": "value", "trades": "value", "pnl": "value", "cost": "value", "roi": "value", "win_rate": "value", "profit_factor": "value", "max_drawdown": "value", "sharpe": "value", "sortino": "value", "fees_paid": "value", "rebates_usdc": "value", "avg_slippage_bps": "value", "time_in_market_s": "value", "time_in_market_pct": "value", "orders_unfilled": "value", "equity_curve": "value"},
    "BacktestAggregateEquityCurveItem": {"time": "datetime", "equity": "value"},
    "BacktestComparedRuns": {"runs": "value"},
    "BacktestComparedRunsRunsItem": {"run": "value", "aggregate": "value", "benchmarks": "value", "intervals": "BacktestComparedRunsRunsItemIntervalsOption1", "sweep": "BacktestComparedRunsRunsItemSweepOption1", "walk_forward": "BacktestComparedRunsRunsItemWalkForwardOption1"},
    "BacktestComparedRunsRunsItemBenchmarksOption1Item": {"name": "value", "pnl": "value", "roi": "value", "win_rate": "value", "trades": "value", "markets": "value", "markets_traded": "value", "max_drawdown": "value", "sharpe": "value"},
    "BacktestComparedRunsRunsItemIntervalsOption1": {"level": "value", "samples": "value", "seed": "value", "pnl": "BacktestComparedRunsRunsItemIntervalsOption1Pnl", "roi": "BacktestComparedRunsRunsItemIntervalsOption1Roi", "win_rate": "BacktestComparedRunsRunsItemIntervalsOption1WinRate"},
    "BacktestComparedRunsRunsItemIntervalsOption1Pnl": {"low": "value", "high": "value"},
    "BacktestComparedRunsRunsItemIntervalsOption1Roi": {"low": "value", "high": "value"},
    "BacktestComparedRunsRunsItemIntervalsOption1WinRate": {"low": "value", "high": "value"},
    "BacktestComparedRunsRunsItemSweepOption1": {"fields": "value", "combinations": "value", "rows": "value"},
    "BacktestComparedRunsRunsItemSweepOption1RowsItem": {"values": "value", "pnl": "value", "roi": "value", "win_rate": "value", "trades": "value", "markets": "value", "markets_traded": "value", "max_drawdown": "value", "sharpe": "value"},
    "BacktestComparedRunsRunsItemWalkForwardOption1": {"train_fraction": "value", "metric": "value", "train_markets": "value", "test_markets": "value", "chosen": "value", "train": "BacktestComparedRunsRunsItemWalkForwardOption1TrainOption1", "test": "BacktestComparedRunsRunsItemWalkForwardOption1TestOption1"},
    "BacktestComparedRunsRunsItemWalkForwardOption1TestOption1": {"pnl": "value", "roi": "value", "win_rate": "value", "trades": "value", "markets": "value", "markets_traded": "value", "max_drawdown": "value", "sharpe": "value"},
    "BacktestComparedRunsRunsItemWalkForwardOption1TrainOption1": {"pnl": "value", "roi": "value", "win_rate": "value", "trades": "value", "markets": "value", "markets_traded": "value", "max_drawdown": "value", "sharpe": "value"},
    "BacktestMarketResult": {"slug": "value", "start_time": "datetime", "end_time": "datetime", "winner": "value", "snapshots": "value", "trades": "value", "orders_unfilled": "value", "pnl": "value", "cost": "value", "roi": "value", "fees_usdc": "value", "rebates_usdc": "value", "time_in_market_s": "value"},
    "BacktestMarketTrades": {"run_id": "value", "slug": "value", "total": "value", "limit": "value", "offset": "value", "trades": "value"},
    "BacktestQuota": {"plan": "value", "included": "value", "month": "value", "limit": "value", "used": "value", "remaining": "value", "resets_at": "datetime"},
    "BacktestRun": {"id": "value", "status": "value", "strategy_id": "value", "coin": "value", "market_type": "value", "market_count": "value", "start_time": "datetime", "end_time": "datetime", "definition": "StrategyDefinition", "definition_text": "value", "progress": "BacktestRunProgress", "error": "value", "created_at": "datetime", "started_at": "datetime", "finished_at": "datetime"},
    "BacktestRunAnswer": {"run": "BacktestRun", "strategy": "Strategy", "generated_strategy": "StrategyDefinition", "aggregate": "BacktestAggregate", "results": "value", "results_page": "BacktestRunAnswerResultsPage", "unresolved": "value", "benchmarks": "value", "intervals": "BacktestRunAnswerIntervalsOption1", "sweep": "BacktestRunAnswerSweepOption1", "walk_forward": "BacktestRunAnswerWalkForwardOption1"},
    "BacktestRunAnswerBenchmarksOption1Item": {"name": "value", "pnl": "value", "roi": "value", "win_rate": "value", "trades": "value", "markets": "value", "markets_traded": "value", "max_drawdown": "value", "sharpe": "value"},
    "BacktestRunAnswerIntervalsOption1": {"level": "value", "samples": "value", "seed": "value", "pnl": "BacktestRunAnswerIntervalsOption1Pnl", "roi": "BacktestRunAnswerIntervalsOption1Roi", "win_rate": "BacktestRunAnswerIntervalsOption1WinRate"},
    "BacktestRunAnswerIntervalsOption1Pnl": {"low": "value", "high": "value"},
    "BacktestRunAnswerIntervalsOption1Roi": {"low": "value", "high": "value"},
    "BacktestRunAnswerIntervalsOption1WinRate": {"low": "value", "high": "value"},
    "BacktestRunAnswerResultsPage": {"total": "value", "limit": "value", "offset": "value"},
    "BacktestRunAnswerSweepOption1": {"fields": "value", "combinations": "value", "rows": "value"},
    "BacktestRunAnswerSweepOption1RowsItem": {"values": "value", "pnl": "value", "roi": "value", "win_rate": "value", "trades": "value", "markets": "value", "markets_traded": "value", "max_drawdown": "value", "sharpe": "value"},
    "BacktestRunAnswerUnresolvedItem": {"slug": "value", "start_time": "datetime", "end_time": "datetime"},
    "BacktestRunAnswerWalkForwardOption1": {"train_fraction": "value", "metric": "value", "train_markets": "value", "test_markets": "value", "chosen": "value", "train": "BacktestRunAnswerWalkForwardOption1TrainOption1", "test": "BacktestRunAnswerWalkForwardOption1TestOption1"},
    "BacktestRunAnswerWalkForwardOption1TestOption1": {"pnl": "value", "roi": "value", "win_rate": "value", "trades": "value", "markets": "value", "markets_traded": "value", "max_drawdown": "value", "sharpe": "value"},
    "BacktestRunAnswerWalkForwardOption1TrainOption1": {"pnl": "value", "roi": "value", "win_rate": "value", "trades": "value", "markets": "value", "markets_traded": "value", "max_drawdown": "value", "sharpe": "value"},
    "BacktestRunProgress": {"markets_done": "value", "markets_total": "value"},
    "BacktestTrade": {"entry": "BacktestTradeEntry", "exit": "BacktestTradeExitOption1", "settlement": "BacktestTradeSettlementOption1", "exit_reason": "value", "closed_at": "datetime", "held_s": "value", "pnl": "value", "roi": "value"},
    "BacktestTradeEntry": {"decision_time": "datetime", "fill_time": "datetime", "last_fill_time": "datetime", "order_type": "value", "limit_price": "value", "queue_ahead": "value", "price": "value", "size": "value", "unfilled": "value", "shares_received": "value", "cost": "value", "fee_usdc": "value", "fee_shares": "value", "maker_size": "value", "rebate_usdc": "value", "mid_at_decision": "value", "slippage_bps": "value", "levels": "value"},
    "BacktestTradeEntryLevelsItem": {"price": "value", "size": "value"},
    "BacktestTradeExitOption1": {"reason": "value", "decision_time": "datetime", "fill_time": "datetime", "price": "value", "size": "value", "unsold": "value", "proceeds": "value", "fee_usdc": "value", "mid_at_decision": "value", "slippage_bps": "value", "attempts": "value", "empty_attempts": "value", "levels": "value"},
    "BacktestTradeExitOption1AttemptsItem": {"time": "datetime", "size": "value", "price": "value", "proceeds": "value", "fee_usdc": "value"},
    "BacktestTradeExitOption1LevelsItem": {"price": "value", "size": "value"},
    "BacktestTradeSettlementOption1": {"shares": "value", "payout_per_share": "value", "proceeds": "value"},
    "BookAt": {"slug": "value", "requested_time": "datetime", "last_event_at": "datetime", "last_event_type": "value", "up": "TokenBook", "down": "TokenBook"},
    "BookIntegrity": {"book_matches": "value", "book_mismatches": "value", "best_matches": "value", "best_mismatches": "value"},
    "Candle": {"open_time": "datetime", "close_time": "datetime", "timestamp": "value", "open": "value", "high": "value", "low": "value", "close": "value", "volume": "value", "quote_volume": "value", "trades": "value", "taker_buy_volume": "value", "taker_buy_quote_volume": "value"},
    "CandlePage": {"data": "value", "total": "value", "limit": "value", "offset": "value"},
    "Coverage": {"slug": "value", "sources": "value", "start_time": "datetime", "end_time": "datetime", "resolved": "value", "cadence_seconds": "value", "until": "datetime", "expected_snapshots": "value", "recorded_snapshots": "value", "missing_snapshots": "value", "coverage": "value", "largest_gap_seconds": "value", "gaps": "value", "events": "EventCoverage", "book_integrity": "BookIntegrity", "coin_price_source": "value"},
    "DepthPage": {"data": "value", "total": "value", "limit": "value", "offset": "value"},
    "DepthSnapshot": {"time": "datetime", "timestamp": "value", "price": "value", "bids": "value", "asks": "value"},
    "Error": {"success": "value", "error": "ErrorError", "request_id": "value", "timestamp": "datetime"},
    "ErrorError": {"code": "value", "message": "value", "details": "value"},
    "EventCoverage": {"count": "value", "first_timestamp": "datetime", "last_timestamp": "datetime", "first_received_at": "datetime", "last_received_at": "datetime"},
    "ExecutionPrice": {"slug": "value", "outcome": "value", "side": "value", "size": "value", "time": "datetime", "snapshot_time": "datetime", "mid": "value", "best_price": "value", "average_price": "value", "slippage_bps": "value", "filled": "value", "unfilled": "value", "notional": "value", "fee_usdc": "value", "fee_shares": "value", "levels": "value", "fee_schedule": "FeeSchedule"},
    "ExecutionPriceLevelsItem": {"price": "value", "size": "value"},
    "FeeSchedule": {"rate": "value", "exponent": "value", "taker_only": "value", "rebate_rate": "value"},
    "FundingRate": {"time": "datetime", "timestamp": "value", "funding_rate": "value", "mark_price": "value"},
    "FundingRatePage": {"data": "value", "total": "value", "limit": "value", "offset": "value"},
    "GenerateAnswer": {"strategy": "value", "quota": "BacktestQuota"},
    "GenerateStrategyBody": {"prompt": "value", "preset": "value", "name": "value", "coin": "value", "market_type": "value", "market_count": "value", "marketType": "value", "marketCount": "value", "position_size": "value", "max_loss_percent": "value", "order_type": "value", "latency_ms": "value", "max_fill_price": "value", "positionSize": "value", "maxLossPercent": "value", "orderType": "value", "latencyMs": "value"},
    "LatestDepth": {"coin": "value", "venue": "value", "symbol": "value", "time": "datetime", "timestamp": "value", "price": "value", "bids": "value", "asks": "value"},
    "LatestTrades": {"data": "value", "limit": "value"},
    "Level": {"price": "value", "size": "value"},
    "MarkPrice": {"time": "datetime", "timestamp": "value", "mark_price": "value", "index_price": "value", "estimated_settle_price": "value", "funding_rate": "value", "next_funding_time": "datetime"},
    "MarkPricePage": {"data": "value", "total": "value", "limit": "value", "offset": "value"},
    "Market": {"slug": "value", "winner": "value", "market_id": "value", "event_id": "value", "market_type": "value", "start_time": "datetime", "end_time": "datetime", "coin_price_start": "value", "coin_price_end": "value", "condition_id": "value", "clob_token_up": "value", "clob_token_down": "value", "final_volume": "value", "final_liquidity": "value", "resolved_at": "datetime", "created_at": "datetime", "updated_at": "datetime", "coin": "value", "polymarket_slug": "value", "settlement": "Settlement", "fee_schedule": "FeeSchedule"},
    "MarketEvent": {"event_type": "value", "timestamp": "value", "received_at": "datetime"},
    "MarketEventPage": {"slug": "value", "events": "value", "total": "value", "limit": "value", "offset": "value"},
    "MarketList": {"markets": "value", "total": "value", "limit": "value", "offset": "value", "warning": "value"},
    "MarketSeries": {"slug": "value", "points": "value", "total": "value", "bucket_us": "value", "snapshots": "value"},
    "MarketTrade": {"time": "datetime", "outcome": "value", "token_id": "value", "side": "value", "price": "value", "size": "value", "fee_rate_bps": "value", "transaction_hash": "value"},
    "MarketTradePage": {"slug": "value", "trades": "value", "total": "value", "limit": "value", "offset": "value"},
    "OpenInterest": {"time": "datetime", "timestamp": "value", "open_interest": "value", "open_interest_value": "value"},
    "OpenInterestPage": {"data": "value", "total": "value", "limit": "value", "offset": "value"},
    "OrderBook": {"bids": "value", "asks": "value"},
    "RecordingGap": {"from": "datetime", "to": "datetime", "seconds": "value", "missing_snapshots": "value", "cause": "value", "detail": "value"},
    "ReplayAnswer": {"success": "value", "data": "ReplayAnswerData", "timestamp": "datetime"},
    "ReplayAnswerData": {"market": "ReplayAnswerDataMarket", "strategy": "StrategyDefinition", "performance": "value", "trades": "value", "pnl_curve": "value", "total_snapshots": "value"},
    "ReplayAnswerDataMarket": {"slug": "value", "coin": "value", "market_type": "value", "start_time": "datetime", "end_time": "datetime", "winner": "value"},
    "ReplayAnswerDataPnlCurveItem": {"time": "datetime", "equity": "value"},
    "ReplayPending": {"success": "value", "data": "ReplayPendingData", "timestamp": "datetime"},
    "ReplayPendingData": {"run_id": "value", "status": "value", "location": "value"},
    "ReplayStrategyBody": {"marketSlug": "value", "market_slug": "value", "side": "value", "entryConditions": "value", "entry_conditions": "value", "exitConditions": "value", "exit_conditions": "value", "positionSize": "value", "position_size": "value", "maxLossPercent": "value", "max_loss_percent": "value", "orderType": "value", "order_type": "value", "latencyMs": "value", "latency_ms": "value", "maxFillPrice": "value", "max_fill_price": "value", "name": "value", "wait": "value"},
    "RunBacktestBody": {"strategy_id": "value", "strategyId": "value", "definition": "StrategyDefinition", "strategy": "StrategyDefinition", "side": "value", "entryConditions": "value", "exitConditions": "value", "name": "value", "coin": "value", "market_type": "value", "market_count": "value", "start_time": "value", "end_time": "value", "marketType": "value", "marketCount": "value", "wait": "value", "position_size": "value", "max_loss_percent": "value", "order_type": "value", "latency_ms": "value", "max_fill_price": "value", "positionSize": "value", "maxLossPercent": "value", "orderType": "value", "latencyMs": "value", "sweep": "value", "train_fraction": "value", "seed": "value", "favourite_at_pct": "value"},
    "RunBacktestBodySweepItem": {"field": "value", "values": "value", "from": "value", "to": "value", "step": "value"},
    "RunStrategyBody": {"prompt": "value", "preset": "value", "definition": "StrategyDefinition", "side": "value", "entryConditions": "value", "exitConditions": "value", "name": "value", "coin": "value", "market_type": "value", "market_count": "value", "start_time": "value", "end_time": "value", "marketType": "value", "marketCount": "value", "wait": "value", "position_size": "value", "max_loss_percent": "value", "order_type": "value", "latency_ms": "value", "max_fill_price": "value", "positionSize": "value", "maxLossPercent": "value", "orderType": "value", "latencyMs": "value", "sweep": "value", "train_fraction": "value", "seed": "value", "favourite_at_pct": "value"},
    "RunStrategyBodySweepItem": {"field": "value", "values": "value", "from": "value", "to": "value", "step": "value"},
    "Series": {"coin": "value", "market_type": "value", "markets": "value", "markets_by_source": "SeriesMarketsBySource", "snapshots": "value", "first_market": "SeriesFirstMarket", "last_market": "SeriesLastMarket", "coverage_24h": "SpanCoverage", "coverage_overall": "SpanCoverage"},
    "SeriesFirstMarket": {"slug": "value", "start_time": "datetime"},
    "SeriesLastMarket": {"slug": "value", "start_time": "datetime", "end_time": "datetime"},
    "SeriesList": {"as_of": "datetime", "cadence_seconds": "value", "series": "value"},
    "SeriesMarketsBySource": {"recorded": "value", "pmxt": "value", "gamma": "value"},
    "Settlement": {"source": "value", "lookback_s": "value"},
    "Snapshot": {"time": "datetime", "coin_price": "value", "price_up": "value", "price_down": "value", "orderbook_up": "OrderBook", "orderbook_down": "OrderBook"},
    "SnapshotAt": {"slug": "value", "requested_time": "datetime", "distance_us": "value", "snapshot": "Snapshot"},
    "SnapshotPage": {"market": "Market", "snapshots": "value", "total": "value", "limit": "value", "offset": "value"},
    "SpanCoverage": {"expected_snapshots": "value", "recorded_snapshots": "value", "coverage": "value"},
    "Strategy": {"id": "value", "name": "value", "definition": "StrategyDefinition", "definition_text": "value", "source": "value", "prompt": "value", "preset": "value", "generator": "value", "model": "value", "notes": "value", "created_at": "datetime"},
    "StrategyDefinition": {"version": "value", "name": "value", "side": "value", "entry": "value", "exit": "StrategyDefinitionExit", "order_type": "value", "limit_price": "StrategyDefinitionLimitPriceOption1", "limit_expiry_s": "value", "count_rebates": "value", "position_size": "value", "max_fill_price": "value", "max_loss_percent": "value", "max_entries_per_market": "value", "latency_ms": "value"},
    "StrategyDefinitionEntryItemOption1": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionEntryItemOption2": {"all": "value"},
    "StrategyDefinitionEntryItemOption2AllItemOption1": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionEntryItemOption2AllItemOption2": {"all": "value"},
    "StrategyDefinitionEntryItemOption2AllItemOption2AllItem": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionEntryItemOption2AllItemOption3": {"any": "value"},
    "StrategyDefinitionEntryItemOption2AllItemOption3AnyItem": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionEntryItemOption2AllItemOption4": {"not": "StrategyDefinitionEntryItemOption2AllItemOption4Not"},
    "StrategyDefinitionEntryItemOption2AllItemOption4Not": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionEntryItemOption3": {"any": "value"},
    "StrategyDefinitionEntryItemOption3AnyItemOption1": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionEntryItemOption3AnyItemOption2": {"all": "value"},
    "StrategyDefinitionEntryItemOption3AnyItemOption2AllItem": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionEntryItemOption3AnyItemOption3": {"any": "value"},
    "StrategyDefinitionEntryItemOption3AnyItemOption3AnyItem": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionEntryItemOption3AnyItemOption4": {"not": "StrategyDefinitionEntryItemOption3AnyItemOption4Not"},
    "StrategyDefinitionEntryItemOption3AnyItemOption4Not": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionEntryItemOption4": {"not": "value"},
    "StrategyDefinitionEntryItemOption4NotOption1": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionEntryItemOption4NotOption2": {"all": "value"},
    "StrategyDefinitionEntryItemOption4NotOption2AllItem": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionEntryItemOption4NotOption3": {"any": "value"},
    "StrategyDefinitionEntryItemOption4NotOption3AnyItem": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionEntryItemOption4NotOption4": {"not": "StrategyDefinitionEntryItemOption4NotOption4Not"},
    "StrategyDefinitionEntryItemOption4NotOption4Not": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExit": {"conditions": "value", "take_profit_pct": "value", "stop_loss_pct": "value", "time_limit_s": "value", "hold_to_resolution": "value"},
    "StrategyDefinitionExitConditionsItemOption1": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExitConditionsItemOption2": {"all": "value"},
    "StrategyDefinitionExitConditionsItemOption2AllItemOption1": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExitConditionsItemOption2AllItemOption2": {"all": "value"},
    "StrategyDefinitionExitConditionsItemOption2AllItemOption2AllItem": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExitConditionsItemOption2AllItemOption3": {"any": "value"},
    "StrategyDefinitionExitConditionsItemOption2AllItemOption3AnyItem": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExitConditionsItemOption2AllItemOption4": {"not": "StrategyDefinitionExitConditionsItemOption2AllItemOption4Not"},
    "StrategyDefinitionExitConditionsItemOption2AllItemOption4Not": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExitConditionsItemOption3": {"any": "value"},
    "StrategyDefinitionExitConditionsItemOption3AnyItemOption1": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExitConditionsItemOption3AnyItemOption2": {"all": "value"},
    "StrategyDefinitionExitConditionsItemOption3AnyItemOption2AllItem": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExitConditionsItemOption3AnyItemOption3": {"any": "value"},
    "StrategyDefinitionExitConditionsItemOption3AnyItemOption3AnyItem": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExitConditionsItemOption3AnyItemOption4": {"not": "StrategyDefinitionExitConditionsItemOption3AnyItemOption4Not"},
    "StrategyDefinitionExitConditionsItemOption3AnyItemOption4Not": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExitConditionsItemOption4": {"not": "value"},
    "StrategyDefinitionExitConditionsItemOption4NotOption1": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExitConditionsItemOption4NotOption2": {"all": "value"},
    "StrategyDefinitionExitConditionsItemOption4NotOption2AllItem": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExitConditionsItemOption4NotOption3": {"any": "value"},
    "StrategyDefinitionExitConditionsItemOption4NotOption3AnyItem": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionExitConditionsItemOption4NotOption4": {"not": "StrategyDefinitionExitConditionsItemOption4NotOption4Not"},
    "StrategyDefinitionExitConditionsItemOption4NotOption4Not": {"feature": "value", "op": "value", "value": "value"},
    "StrategyDefinitionLimitPriceOption1": {"reference": "value", "offset": "value"},
    "StrategyList": {"strategies": "value", "total": "value", "limit": "value", "offset": "value"},
    "TokenBook": {"token_id": "value", "book": "OrderBook", "has_book": "value", "last_trade_price": "value", "tick_size": "value"},
    "Trade": {"id": "value", "time": "datetime", "timestamp": "value", "price": "value", "size": "value", "side": "value", "is_buyer_maker": "value"},
    "UsageWindow": {"used": "value", "limit": "value", "remaining": "value", "resets_at": "datetime"},
}


Coin = Literal["btc", "eth", "sol", "xrp", "doge", "bnb", "hype"]


MarketType = Literal["5m", "15m", "1h", "4h", "24h"]


Outcome = Literal["Up", "Down"]


Winner = Literal["Up", "Down", "50-50"]


class Settlement(TypedDict):
    "The feed the market settles on, from its upstream record (coin_price follows it)"
    #: chainlink: the instantaneous stream; chainlink_twap: the TWAP stream of lookback_s; binance: 1m candles
    source: Literal["chainlink", "chainlink_twap", "binance"]
    lookback_s: Optional[int]


class FeeSchedule(TypedDict):
    "A taker fill of C shares at price p pays C * rate * (p * (1 - p)) ^ exponent USDC"
    rate: float
    exponent: float
    taker_only: bool
    #: Share of taker fees paid back to makers
    rebate_rate: float


class MarketTrade(TypedDict):
    "One Polymarket trade of an outcome token"
    #: Microsecond precision (the upstream stamps trades in milliseconds)
    time: str
    outcome: Outcome
    #: The outcome's CLOB token
    token_id: str
    #: The taker's side
    side: Literal["BUY", "SELL"]
    price: float
    #: Shares
    size: float
    #: The fee rate the upstream reported, in basis points
    fee_rate_bps: float
    transaction_hash: Optional[str]


class Level(TypedDict):
    "One price level of a book"
    price: float
    size: float


class OrderBook(TypedDict):
    "Best first: bids by price descending, asks ascending"
    bids: List[Level]
    asks: List[Level]


class Market(TypedDict):
    "A market record. Fields known only after resolution are null until then."
    slug: str
    winner: Optional[Winner]
    market_id: str
    event_id: str
    market_type: MarketType
    #: Second precision
    start_time: str
    #: Second precision
    end_time: str
    coin_price_start: Optional[float]
    coin_price_end: Optional[float]
    condition_id: str
    clob_token_up: str
    clob_token_down: str
    final_volume: Optional[float]
    final_liquidity: Optional[float]
    resolved_at: Optional[str]
    #: Microsecond precision
    created_at: str
    #: Microsecond precision
    updated_at: str
    coin: Coin
    polymarket_slug: Optional[str]
    settlement: Settlement
    fee_schedule: Optional[FeeSchedule]


class _SnapshotRequired(TypedDict):
    #: Microsecond precision
    time: str
    #: Settlement feed of the market's type at this time
    coin_price: float
    #: Displayed price of Up: midpoint, or last trade when spread > 0.10
    price_up: float
    price_down: float


class Snapshot(_SnapshotRequired, total=False):
    "One second of a market; the books only when asked for (include_orderbook)"
    orderbook_up: OrderBook
    orderbook_down: OrderBook


class DepthSnapshot(TypedDict):
    #: ISO 8601 UTC, millisecond precision
    time: str
    #: The same instant in epoch milliseconds
    timestamp: int
    price: Optional[float]
    #: Best (highest) first, up to 20
    bids: List[Level]
    #: Best (lowest) first, up to 20
    asks: List[Level]


class Trade(TypedDict):
    #: Binance's trade id (spot) or aggregate trade id (futures)
    id: int
    #: ISO 8601 UTC, millisecond precision
    time: str
    #: The same instant in epoch milliseconds
    timestamp: int
    price: float
    #: Base asset quantity
    size: float
    #: The taker's side
    side: Literal["buy", "sell"]
    is_buyer_maker: bool


class Candle(TypedDict):
    open_time: str
    #: Last millisecond of the candle
    close_time: str
    #: Open time in epoch milliseconds
    timestamp: int
    open: float
    high: float
    low: float
    close: float
    #: Base asset volume
    volume: float
    #: USDT volume
    quote_volume: float
    trades: int
    taker_buy_volume: float
    taker_buy_quote_volume: float


class FundingRate(TypedDict):
    #: ISO 8601 UTC, millisecond precision
    time: str
    #: The same instant in epoch milliseconds
    timestamp: int
    funding_rate: float
    mark_price: Optional[float]


class OpenInterest(TypedDict):
    #: ISO 8601 UTC, millisecond precision
    time: str
    #: The same instant in epoch milliseconds
    timestamp: int
    #: Contracts (base asset)
    open_interest: float
    open_interest_value: Optional[float]


class MarkPrice(TypedDict):
    #: ISO 8601 UTC, millisecond precision
    time: str
    #: The same instant in epoch milliseconds
    timestamp: int
    mark_price: float
    index_price: Optional[float]
    estimated_settle_price: Optional[float]
    funding_rate: Optional[float]
    next_funding_time: Optional[str]


class _ErrorErrorRequired(TypedDict):
    #: One of the codes of DESIGN 3.1
    code: Literal["VALIDATION_ERROR", "BAD_REQUEST", "UNAUTHORIZED", "TIER_ACCESS_DENIED", "BACKTEST_AI_REQUIRED", "RESOURCE_NOT_FOUND", "METHOD_NOT_ALLOWED", "REQUEST_TIMEOUT", "PAYLOAD_TOO_LARGE", "GENERATION_FAILED", "RATE_LIMIT_EXCEEDED", "QUOTA_EXCEEDED", "BACKTEST_AI_QUOTA_EXCEEDED", "HEADERS_TOO_LARGE", "INTERNAL_ERROR", "SERVICE_UNAVAILABLE"]
    message: str


class ErrorError(_ErrorErrorRequired, total=False):
    details: Dict[str, Any]


class Error(TypedDict):
    "The one envelope of every error"
    success: Literal[False]
    error: ErrorError
    request_id: str
    timestamp: str


class MarketList(TypedDict):
    markets: List[Market]
    total: int
    limit: int
    offset: int
    warning: Optional[str]


class SnapshotPage(TypedDict):
    market: Market
    snapshots: List[Snapshot]
    total: int
    limit: int
    offset: int


class SnapshotAt(TypedDict):
    slug: str
    requested_time: str
    #: Microseconds from the snapshot to the requested time
    distance_us: int
    snapshot: Snapshot


class MarketSeries(TypedDict):
    slug: str
    #: The most snapshots asked for
    points: int
    #: Snapshots of the market (within start_time/end_time when given)
    total: int
    #: Width of a bucket in microseconds; null when every snapshot is in the answer
    bucket_us: Optional[int]
    #: Oldest first: of each bucket, its first and last snapshot and those with the lowest and highest Up, Down and coin price
    snapshots: List[Snapshot]


MarketSource = Literal["recorded", "pmxt", "gamma"]


class EventCoverage(TypedDict):
    #: Market-channel messages recorded (GET /v1/markets/{slug}/events)
    count: int
    #: The first event's upstream timestamp
    first_timestamp: str
    #: The last event's upstream timestamp
    last_timestamp: str
    #: When the first was received (µs)
    first_received_at: str
    #: When the last was received (µs)
    last_received_at: str


class BookIntegrity(TypedDict):
    "The book rebuilt from events checked against what the upstream said (DESIGN 3.10)"
    #: book messages equal to the book rebuilt before them
    book_matches: int
    #: book messages that differed (never repaired)
    book_mismatches: int
    #: price_change entries whose best bid and ask the rebuilt book had
    best_matches: int
    #: price_change entries whose best bid or ask it did not have
    best_mismatches: int


RecordingGap = TypedDict("RecordingGap", {"from": "str", "to": "str", "seconds": "float", "missing_snapshots": "int", "cause": "str", "detail": "Optional[str]"}, total=True)


class Coverage(TypedDict):
    slug: str
    #: Where its data came from, in the order recorded, pmxt, gamma; empty for a market no importer or collector marked
    sources: List[MarketSource]
    start_time: str
    end_time: str
    resolved: bool
    cadence_seconds: float
    #: End of the span judged: the market's end, or now while it is live
    until: str
    expected_snapshots: int
    recorded_snapshots: int
    missing_snapshots: int
    coverage: Optional[float]
    largest_gap_seconds: float
    gaps: List[RecordingGap]
    #: What the market's events cover; null without events
    events: Optional[EventCoverage]
    #: The book-integrity counts of its events; null when never counted
    book_integrity: Optional[BookIntegrity]
    coin_price_source: Optional[str]


class MarketTradePage(TypedDict):
    slug: str
    trades: List[MarketTrade]
    #: Trades in the range; page until offset reaches it
    total: int
    limit: int
    offset: int


class MarketEvent(TypedDict):
    "One market-channel message exactly as Polymarket sent it (every field, decimals as strings), plus received_at (docs/events.md)"
    event_type: Literal["book", "price_change", "last_trade_price", "tick_size_change", "best_bid_ask", "market_resolved"]
    #: The upstream's timestamp, epoch milliseconds as it sent it
    timestamp: str
    #: When our collector received it, ISO 8601 with microseconds
    received_at: str


class MarketEventPage(TypedDict):
    slug: str
    events: List[MarketEvent]
    #: Events in the range; page until offset reaches it
    total: int
    limit: int
    offset: int


class TokenBook(TypedDict):
    token_id: str
    book: OrderBook
    #: False until the token's first book message: the levels are then only the changes seen
    has_book: bool
    last_trade_price: Optional[float]
    tick_size: Optional[float]


class BookAt(TypedDict):
    slug: str
    requested_time: str
    #: Receive time of the last event applied (µs): the book is as it stood from then on
    last_event_at: str
    last_event_type: str
    up: TokenBook
    down: TokenBook


class SpanCoverage(TypedDict):
    expected_snapshots: int
    recorded_snapshots: int
    coverage: Optional[float]


class SeriesMarketsBySource(TypedDict):
    "Markets holding data of each source (MarketSource): recorded live, imported from PMXT, Gamma's record only. A market recorded live and filled in from PMXT counts under both, so the counts may add up to more than markets; a market no importer or collector marked counts under none"
    recorded: int
    pmxt: int
    gamma: int


class SeriesFirstMarket(TypedDict):
    slug: str
    start_time: str


class SeriesLastMarket(TypedDict):
    slug: str
    start_time: str
    end_time: str


class Series(TypedDict):
    coin: Coin
    market_type: MarketType
    #: Markets stored
    markets: int
    #: Markets holding data of each source (MarketSource): recorded live, imported from PMXT, Gamma's record only. A market recorded live and filled in from PMXT counts under both, so the counts may add up to more than markets; a market no importer or collector marked counts under none
    markets_by_source: SeriesMarketsBySource
    #: Snapshots stored over all its markets
    snapshots: int
    first_market: SeriesFirstMarket
    last_market: SeriesLastMarket
    coverage_24h: SpanCoverage
    coverage_overall: SpanCoverage


class SeriesList(TypedDict):
    #: The time the coverage is judged at
    as_of: str
    cadence_seconds: float
    series: List[Series]


class UsageWindow(TypedDict):
    used: int
    limit: Optional[int]
    remaining: Optional[int]
    resets_at: str


class AccountKey(TypedDict):
    id: str
    name: Optional[str]
    account: str
    created_at: str


class AccountUsage(TypedDict):
    minute: UsageWindow
    day: UsageWindow


class AccountQuota(TypedDict):
    #: false when the plan has no backtest generations
    included: bool
    #: UTC month, YYYY-MM
    month: str
    limit: Optional[int]
    used: int
    remaining: Optional[int]
    resets_at: str


class AccountFeatures(TypedDict):
    spot: bool
    futures: bool
    backtest: bool


class Account(TypedDict):
    #: The key's plan
    plan: Literal["starter", "pro", "enterprise"]
    key: AccountKey
    usage: AccountUsage
    quota: AccountQuota
    features: AccountFeatures
    btc_history: Optional[Dict[str, Any]]
    #: Per coin, how many of its latest markets of each type the plan opens; a coin not named is open in full
    history: Dict[str, Any]
    keys_per_account: Optional[int]


class BacktestQuota(TypedDict):
    #: The key's plan
    plan: Literal["starter", "pro", "enterprise"]
    #: false when the plan has no backtest generations
    included: bool
    #: UTC month, YYYY-MM
    month: str
    limit: Optional[int]
    used: int
    remaining: Optional[int]
    resets_at: str


class LatestDepth(TypedDict):
    coin: Coin
    venue: Literal["spot", "futures"]
    symbol: str
    #: ISO 8601 UTC, millisecond precision
    time: str
    #: The same instant in epoch milliseconds
    timestamp: int
    price: Optional[float]
    #: Best (highest) first, up to 20
    bids: List[Level]
    #: Best (lowest) first, up to 20
    asks: List[Level]


class LatestTrades(TypedDict):
    data: List[Trade]
    limit: int


class DepthPage(TypedDict):
    data: List[DepthSnapshot]
    #: Records in the range; page until offset reaches it
    total: int
    limit: int
    offset: int


class CandlePage(TypedDict):
    data: List[Candle]
    #: Records in the range; page until offset reaches it
    total: int
    limit: int
    offset: int


class FundingRatePage(TypedDict):
    data: List[FundingRate]
    #: Records in the range; page until offset reaches it
    total: int
    limit: int
    offset: int


class OpenInterestPage(TypedDict):
    data: List[OpenInterest]
    #: Records in the range; page until offset reaches it
    total: int
    limit: int
    offset: int


class MarkPricePage(TypedDict):
    data: List[MarkPrice]
    #: Records in the range; page until offset reaches it
    total: int
    limit: int
    offset: int


class ExecutionPriceLevelsItem(TypedDict):
    price: float
    size: float


class ExecutionPrice(TypedDict):
    slug: str
    outcome: Literal["up", "down"]
    side: Literal["buy", "sell"]
    #: Shares asked for
    size: float
    #: The moment asked for
    time: str
    #: The snapshot whose book was used
    snapshot_time: str
    #: Midpoint of the token's best bid and ask (the displayed price if a side is empty)
    mid: float
    best_price: Optional[float]
    average_price: Optional[float]
    slippage_bps: Optional[float]
    #: Shares the book had for the order
    filled: float
    #: Shares left when depth ran out
    unfilled: float
    #: USDC exchanged before fees
    notional: float
    #: The taker fee (a buy pays it in shares: fee_shares)
    fee_usdc: float
    fee_shares: float
    levels: List[ExecutionPriceLevelsItem]
    fee_schedule: Optional[FeeSchedule]


class StrategyDefinitionEntryItemOption1(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionEntryItemOption2AllItemOption1(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionEntryItemOption2AllItemOption2AllItem(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionEntryItemOption2AllItemOption2(TypedDict):
    all: List[StrategyDefinitionEntryItemOption2AllItemOption2AllItem]


class StrategyDefinitionEntryItemOption2AllItemOption3AnyItem(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionEntryItemOption2AllItemOption3(TypedDict):
    any: List[StrategyDefinitionEntryItemOption2AllItemOption3AnyItem]


class StrategyDefinitionEntryItemOption2AllItemOption4Not(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


StrategyDefinitionEntryItemOption2AllItemOption4 = TypedDict("StrategyDefinitionEntryItemOption2AllItemOption4", {"not": "StrategyDefinitionEntryItemOption2AllItemOption4Not"}, total=True)


class StrategyDefinitionEntryItemOption2(TypedDict):
    all: List[Union[StrategyDefinitionEntryItemOption2AllItemOption1, StrategyDefinitionEntryItemOption2AllItemOption2, StrategyDefinitionEntryItemOption2AllItemOption3, StrategyDefinitionEntryItemOption2AllItemOption4]]


class StrategyDefinitionEntryItemOption3AnyItemOption1(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionEntryItemOption3AnyItemOption2AllItem(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionEntryItemOption3AnyItemOption2(TypedDict):
    all: List[StrategyDefinitionEntryItemOption3AnyItemOption2AllItem]


class StrategyDefinitionEntryItemOption3AnyItemOption3AnyItem(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionEntryItemOption3AnyItemOption3(TypedDict):
    any: List[StrategyDefinitionEntryItemOption3AnyItemOption3AnyItem]


class StrategyDefinitionEntryItemOption3AnyItemOption4Not(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


StrategyDefinitionEntryItemOption3AnyItemOption4 = TypedDict("StrategyDefinitionEntryItemOption3AnyItemOption4", {"not": "StrategyDefinitionEntryItemOption3AnyItemOption4Not"}, total=True)


class StrategyDefinitionEntryItemOption3(TypedDict):
    any: List[Union[StrategyDefinitionEntryItemOption3AnyItemOption1, StrategyDefinitionEntryItemOption3AnyItemOption2, StrategyDefinitionEntryItemOption3AnyItemOption3, StrategyDefinitionEntryItemOption3AnyItemOption4]]


class StrategyDefinitionEntryItemOption4NotOption1(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionEntryItemOption4NotOption2AllItem(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionEntryItemOption4NotOption2(TypedDict):
    all: List[StrategyDefinitionEntryItemOption4NotOption2AllItem]


class StrategyDefinitionEntryItemOption4NotOption3AnyItem(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionEntryItemOption4NotOption3(TypedDict):
    any: List[StrategyDefinitionEntryItemOption4NotOption3AnyItem]


class StrategyDefinitionEntryItemOption4NotOption4Not(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


StrategyDefinitionEntryItemOption4NotOption4 = TypedDict("StrategyDefinitionEntryItemOption4NotOption4", {"not": "StrategyDefinitionEntryItemOption4NotOption4Not"}, total=True)


StrategyDefinitionEntryItemOption4 = TypedDict("StrategyDefinitionEntryItemOption4", {"not": "Union[StrategyDefinitionEntryItemOption4NotOption1, StrategyDefinitionEntryItemOption4NotOption2, StrategyDefinitionEntryItemOption4NotOption3, StrategyDefinitionEntryItemOption4NotOption4]"}, total=True)


class StrategyDefinitionExitConditionsItemOption1(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionExitConditionsItemOption2AllItemOption1(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionExitConditionsItemOption2AllItemOption2AllItem(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionExitConditionsItemOption2AllItemOption2(TypedDict):
    all: List[StrategyDefinitionExitConditionsItemOption2AllItemOption2AllItem]


class StrategyDefinitionExitConditionsItemOption2AllItemOption3AnyItem(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionExitConditionsItemOption2AllItemOption3(TypedDict):
    any: List[StrategyDefinitionExitConditionsItemOption2AllItemOption3AnyItem]


class StrategyDefinitionExitConditionsItemOption2AllItemOption4Not(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


StrategyDefinitionExitConditionsItemOption2AllItemOption4 = TypedDict("StrategyDefinitionExitConditionsItemOption2AllItemOption4", {"not": "StrategyDefinitionExitConditionsItemOption2AllItemOption4Not"}, total=True)


class StrategyDefinitionExitConditionsItemOption2(TypedDict):
    all: List[Union[StrategyDefinitionExitConditionsItemOption2AllItemOption1, StrategyDefinitionExitConditionsItemOption2AllItemOption2, StrategyDefinitionExitConditionsItemOption2AllItemOption3, StrategyDefinitionExitConditionsItemOption2AllItemOption4]]


class StrategyDefinitionExitConditionsItemOption3AnyItemOption1(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionExitConditionsItemOption3AnyItemOption2AllItem(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionExitConditionsItemOption3AnyItemOption2(TypedDict):
    all: List[StrategyDefinitionExitConditionsItemOption3AnyItemOption2AllItem]


class StrategyDefinitionExitConditionsItemOption3AnyItemOption3AnyItem(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionExitConditionsItemOption3AnyItemOption3(TypedDict):
    any: List[StrategyDefinitionExitConditionsItemOption3AnyItemOption3AnyItem]


class StrategyDefinitionExitConditionsItemOption3AnyItemOption4Not(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


StrategyDefinitionExitConditionsItemOption3AnyItemOption4 = TypedDict("StrategyDefinitionExitConditionsItemOption3AnyItemOption4", {"not": "StrategyDefinitionExitConditionsItemOption3AnyItemOption4Not"}, total=True)


class StrategyDefinitionExitConditionsItemOption3(TypedDict):
    any: List[Union[StrategyDefinitionExitConditionsItemOption3AnyItemOption1, StrategyDefinitionExitConditionsItemOption3AnyItemOption2, StrategyDefinitionExitConditionsItemOption3AnyItemOption3, StrategyDefinitionExitConditionsItemOption3AnyItemOption4]]


class StrategyDefinitionExitConditionsItemOption4NotOption1(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionExitConditionsItemOption4NotOption2AllItem(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionExitConditionsItemOption4NotOption2(TypedDict):
    all: List[StrategyDefinitionExitConditionsItemOption4NotOption2AllItem]


class StrategyDefinitionExitConditionsItemOption4NotOption3AnyItem(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


class StrategyDefinitionExitConditionsItemOption4NotOption3(TypedDict):
    any: List[StrategyDefinitionExitConditionsItemOption4NotOption3AnyItem]


class StrategyDefinitionExitConditionsItemOption4NotOption4Not(TypedDict):
    #: price_up|down, best_bid_up|down, best_ask_up|down, spread_up|down, depth_bid|ask_up|down[_N] (shares within N ticks of the best, default 5), book_imbalance_up|down[_N] (-1..1), coin_price, coin_return_bps (since the start price), elapsed_s, remaining_s, remaining_pct; version 2 adds hour_utc, minute_of_day_utc, spot_mid, futures_mid, futures_funding_rate, futures_open_interest (Binance, null where not recorded) and lookbacks over the last N s (1..9999): coin_return_bps_Ns, price_up|down_change_cents_Ns, coin_volatility_bps_Ns, beat_distance_sd_Ns (coin to the price to beat in standard deviations for the time left), traded_volume_Ns (shares), traded_usdc_Ns, spot_return_bps_Ns, futures_return_bps_Ns
    feature: str
    op: Literal["<", "<=", ">", ">=", "crosses_above", "crosses_below"]
    #: A number, or another feature to compare with
    value: Union[float, str]


StrategyDefinitionExitConditionsItemOption4NotOption4 = TypedDict("StrategyDefinitionExitConditionsItemOption4NotOption4", {"not": "StrategyDefinitionExitConditionsItemOption4NotOption4Not"}, total=True)


StrategyDefinitionExitConditionsItemOption4 = TypedDict("StrategyDefinitionExitConditionsItemOption4", {"not": "Union[StrategyDefinitionExitConditionsItemOption4NotOption1, StrategyDefinitionExitConditionsItemOption4NotOption2, StrategyDefinitionExitConditionsItemOption4NotOption3, StrategyDefinitionExitConditionsItemOption4NotOption4]"}, total=True)


class StrategyDefinitionExit(TypedDict):
    #: Any of them closes the position (a market sell, retried until sold or the market ends)
    conditions: List[Union[StrategyDefinitionExitConditionsItemOption1, StrategyDefinitionExitConditionsItemOption2, StrategyDefinitionExitConditionsItemOption3, StrategyDefinitionExitConditionsItemOption4]]
    #: Sell once the best bid less the exit's fee is this many percent above the cost of a share held; null: none
    take_profit_pct: Optional[float]
    #: Sell once the best bid less the exit's fee is this many percent below the cost of a share held; null: none
    stop_loss_pct: Optional[float]
    #: Sell once the position is this many seconds old; null: none
    time_limit_s: Optional[int]
    #: true: no exit rule, every position settles (the other exit fields must be empty)
    hold_to_resolution: bool


class StrategyDefinitionLimitPriceOption1(TypedDict):
    #: The price the limit is set from, at the decision; fixed: offset is the price
    reference: Literal["best_bid", "best_ask", "mid", "fixed"]
    #: Added to the reference price
    offset: float


class StrategyDefinition(TypedDict):
    "A backtest strategy (version 2, or 1); docs/backtests.md explains every rule"
    #: 2 (condition trees, lookbacks); 1 is still accepted as it was
    version: Literal[1, 2]
    name: str
    #: The outcome token bought
    side: Literal["UP", "DOWN"]
    #: All must hold to enter; none: enter at the first snapshot
    entry: List[Union[StrategyDefinitionEntryItemOption1, StrategyDefinitionEntryItemOption2, StrategyDefinitionEntryItemOption3, StrategyDefinitionEntryItemOption4]]
    exit: StrategyDefinitionExit
    #: How entries are placed (exits sell at market)
    order_type: Literal["MARKET", "LIMIT"]
    #: A LIMIT entry's price rule; null for MARKET (default for LIMIT: the best bid)
    limit_price: Optional[StrategyDefinitionLimitPriceOption1]
    #: A resting limit order is cancelled this many seconds after it joins the book (alias expire_after_s); null: at the market's end
    limit_expiry_s: Optional[int]
    #: true: resting (maker) fills earn the market's fee_schedule.rebate_rate of the taker fee, added to PnL and reported as rebate_usdc
    count_rebates: bool
    #: Shares bought per entry
    position_size: float
    #: A buy takes no level above this price; null: no cap
    max_fill_price: Optional[float]
    #: Sell a position once it has lost this percent of its cost, valued at the best bid less the exit's fee (also when held to resolution); null: none
    max_loss_percent: Optional[float]
    max_entries_per_market: int
    #: An order fills at the first snapshot at or after decision + latency; null (default): the next snapshot
    latency_ms: Optional[int]


class GenerateAnswer(TypedDict):
    strategy: Strategy
    quota: BacktestQuota


class StrategyList(TypedDict):
    strategies: List[Strategy]
    total: int
    limit: int
    offset: int


class BacktestMarketTrades(TypedDict):
    run_id: str
    slug: str
    #: The market's trades in the run
    total: int
    limit: int
    offset: int
    #: Oldest first
    trades: List[BacktestTrade]


class BacktestComparedRunsRunsItemBenchmarksOption1Item(TypedDict):
    #: always_up, always_down: buy at the first snapshot; favourite: the side priced higher at favourite_at_pct of the market; random: a seeded side and second
    name: Literal["always_up", "always_down", "favourite", "random"]
    #: Total PnL (USDC)
    pnl: float
    roi: Optional[float]
    win_rate: Optional[float]
    trades: int
    #: Markets replayed
    markets: int
    markets_traded: int
    #: Largest fall of the equity curve from a peak (USDC)
    max_drawdown: float
    sharpe: Optional[float]


class BacktestComparedRunsRunsItemIntervalsOption1Pnl(TypedDict):
    low: Optional[float]
    high: Optional[float]


class BacktestComparedRunsRunsItemIntervalsOption1Roi(TypedDict):
    low: Optional[float]
    high: Optional[float]


class BacktestComparedRunsRunsItemIntervalsOption1WinRate(TypedDict):
    low: Optional[float]
    high: Optional[float]


class BacktestComparedRunsRunsItemIntervalsOption1(TypedDict):
    "Percentile bootstrap over markets, seeded: the same run gives the same bounds"
    #: 0.95
    level: float
    #: Bootstrap resamples of the run's markets (0 without a market)
    samples: int
    seed: int
    pnl: BacktestComparedRunsRunsItemIntervalsOption1Pnl
    roi: BacktestComparedRunsRunsItemIntervalsOption1Roi
    win_rate: BacktestComparedRunsRunsItemIntervalsOption1WinRate


class BacktestComparedRunsRunsItemSweepOption1RowsItem(TypedDict):
    #: Each swept field (dotted path) and its value in this combination
    values: Dict[str, Any]
    #: Total PnL (USDC)
    pnl: float
    roi: Optional[float]
    win_rate: Optional[float]
    trades: int
    #: Markets replayed
    markets: int
    markets_traded: int
    #: Largest fall of the equity curve from a peak (USDC)
    max_drawdown: float
    sharpe: Optional[float]


class BacktestComparedRunsRunsItemSweepOption1(TypedDict):
    #: The swept fields, in axis order
    fields: List[str]
    combinations: int
    #: One per combination, the first axis varying slowest
    rows: List[BacktestComparedRunsRunsItemSweepOption1RowsItem]


class BacktestComparedRunsRunsItemWalkForwardOption1TrainOption1(TypedDict):
    #: Total PnL (USDC)
    pnl: float
    roi: Optional[float]
    win_rate: Optional[float]
    trades: int
    #: Markets replayed
    markets: int
    markets_traded: int
    #: Largest fall of the equity curve from a peak (USDC)
    max_drawdown: float
    sharpe: Optional[float]


class BacktestComparedRunsRunsItemWalkForwardOption1TestOption1(TypedDict):
    #: Total PnL (USDC)
    pnl: float
    roi: Optional[float]
    win_rate: Optional[float]
    trades: int
    #: Markets replayed
    markets: int
    markets_traded: int
    #: Largest fall of the equity curve from a peak (USDC)
    max_drawdown: float
    sharpe: Optional[float]


class BacktestComparedRunsRunsItemWalkForwardOption1(TypedDict):
    train_fraction: float
    #: What the choice maximizes on the training markets
    metric: Literal["pnl"]
    #: The first markets, oldest first
    train_markets: int
    #: The rest
    test_markets: int
    chosen: Optional[Dict[str, Any]]
    train: Optional[BacktestComparedRunsRunsItemWalkForwardOption1TrainOption1]
    test: Optional[BacktestComparedRunsRunsItemWalkForwardOption1TestOption1]


class BacktestComparedRunsRunsItem(TypedDict):
    run: BacktestRun
    aggregate: Optional[BacktestAggregate]
    benchmarks: Optional[List[BacktestComparedRunsRunsItemBenchmarksOption1Item]]
    intervals: Optional[BacktestComparedRunsRunsItemIntervalsOption1]
    sweep: Optional[BacktestComparedRunsRunsItemSweepOption1]
    walk_forward: Optional[BacktestComparedRunsRunsItemWalkForwardOption1]


class BacktestComparedRuns(TypedDict):
    #: In the order of ids
    runs: List[BacktestComparedRunsRunsItem]


class ReplayAnswerDataMarket(TypedDict):
    slug: str
    coin: str
    market_type: str
    start_time: str
    end_time: str
    winner: Literal["Up", "Down", "50-50"]


class ReplayAnswerDataPnlCurveItem(TypedDict):
    time: str
    equity: float


class ReplayAnswerData(TypedDict):
    market: ReplayAnswerDataMarket
    strategy: StrategyDefinition
    #: The run's figures: BacktestAggregate without its equity curve
    performance: Dict[str, Any]
    trades: List[BacktestTrade]
    #: Cumulative PnL after each closed trade (USDC)
    pnl_curve: List[ReplayAnswerDataPnlCurveItem]
    #: Snapshots replayed
    total_snapshots: int


class ReplayAnswer(TypedDict):
    success: Literal[True]
    data: ReplayAnswerData
    timestamp: str


class ReplayPendingData(TypedDict):
    run_id: str
    status: Literal["queued", "running"]
    #: Where to poll the run: /v1/backtest-ai/runs/{id}
    location: str


class ReplayPending(TypedDict):
    success: Literal[True]
    data: ReplayPendingData
    timestamp: str


class BacktestTradeEntryLevelsItem(TypedDict):
    price: float
    #: Shares taken at this price
    size: float


class BacktestTradeEntry(TypedDict):
    #: The snapshot whose features decided the entry
    decision_time: str
    #: The order's first fill: the snapshot it filled against, or a trade it filled from resting
    fill_time: str
    #: The order's last fill
    last_fill_time: str
    order_type: Literal["MARKET", "LIMIT"]
    limit_price: Optional[float]
    queue_ahead: Optional[float]
    #: Average fill price
    price: float
    #: Shares bought
    size: float
    #: Shares of the order never bought (depth ran out, or the limit expired or was cancelled)
    unfilled: float
    #: Shares held after the fee taken in shares
    shares_received: float
    #: Paid for the shares (USDC)
    cost: float
    #: The fee (USDC)
    fee_usdc: float
    #: The fee as taken, in shares
    fee_shares: float
    #: Of the shares, those bought by a resting limit order
    maker_size: float
    #: Maker rebate earned, in PnL; 0 unless the definition's count_rebates (USDC)
    rebate_usdc: float
    mid_at_decision: float
    #: Average price against the mid at the decision; positive is worse
    slippage_bps: float
    levels: List[BacktestTradeEntryLevelsItem]


class BacktestTradeExitOption1AttemptsItem(TypedDict):
    #: The snapshot this attempt sold against
    time: str
    #: Shares sold
    size: float
    #: Average price
    price: float
    #: Received, after the fee (USDC)
    proceeds: float
    #: The fee (USDC)
    fee_usdc: float


class BacktestTradeExitOption1LevelsItem(TypedDict):
    price: float
    #: Shares taken at this price
    size: float


class BacktestTradeExitOption1(TypedDict):
    reason: Literal["take_profit", "stop_loss", "max_loss", "time_limit", "condition", "resolution"]
    decision_time: Optional[str]
    fill_time: Optional[str]
    price: Optional[float]
    #: Shares sold
    size: float
    #: Shares the exit could not sell before the market's end (settled)
    unsold: float
    #: Received, after the fee (USDC)
    proceeds: float
    #: The fee (USDC)
    fee_usdc: float
    mid_at_decision: Optional[float]
    slippage_bps: Optional[float]
    #: Each sale, in order: an exit not filled at once keeps selling at each later snapshot
    attempts: List[BacktestTradeExitOption1AttemptsItem]
    #: Attempts that found no bid to sell to (then tried again)
    empty_attempts: int
    levels: List[BacktestTradeExitOption1LevelsItem]


class BacktestTradeSettlementOption1(TypedDict):
    shares: float
    #: 1 (won), 0 (lost) or 0.5 (50-50)
    payout_per_share: float
    #: Paid out (USDC)
    proceeds: float


class BacktestTrade(TypedDict):
    entry: BacktestTradeEntry
    exit: Optional[BacktestTradeExitOption1]
    settlement: Optional[BacktestTradeSettlementOption1]
    exit_reason: Literal["take_profit", "stop_loss", "max_loss", "time_limit", "condition", "resolution"]
    #: When the position was closed: its sale, or the market's end
    closed_at: str
    held_s: float
    #: Proceeds less cost, fees (and counted rebates) included (USDC)
    pnl: float
    #: pnl / cost
    roi: float


class BacktestMarketResult(TypedDict):
    slug: str
    #: The market's start
    start_time: str
    #: The market's end
    end_time: str
    winner: Literal["Up", "Down", "50-50"]
    #: Snapshots replayed
    snapshots: int
    trades: List[BacktestTrade]
    #: Orders that filled nothing
    orders_unfilled: int
    #: Sum over the trades (USDC)
    pnl: float
    #: Paid for the entries (USDC)
    cost: float
    roi: Optional[float]
    #: Fees of entries and exits (USDC)
    fees_usdc: float
    #: Maker rebates counted (count_rebates) (USDC)
    rebates_usdc: float
    time_in_market_s: float


class BacktestAggregateEquityCurveItem(TypedDict):
    #: A trade's close
    time: str
    #: Cumulative PnL (USDC)
    equity: float


class BacktestAggregate(TypedDict):
    markets: int
    markets_traded: int
    trades: int
    #: Total PnL (USDC)
    pnl: float
    #: Total paid for entries (USDC)
    cost: float
    roi: Optional[float]
    win_rate: Optional[float]
    profit_factor: Optional[float]
    #: Largest fall of the equity curve from a peak (USDC)
    max_drawdown: float
    sharpe: Optional[float]
    sortino: Optional[float]
    #: All fees (USDC)
    fees_paid: float
    #: All maker rebates counted (USDC)
    rebates_usdc: float
    avg_slippage_bps: Optional[float]
    time_in_market_s: float
    #: Of the replayed markets' total length
    time_in_market_pct: float
    orders_unfilled: int
    equity_curve: List[BacktestAggregateEquityCurveItem]


class Strategy(TypedDict):
    id: str
    name: str
    definition: StrategyDefinition
    #: The definition in plain words, a line per part (what the engine follows, nothing more)
    definition_text: str
    source: Literal["prompt", "preset", "definition"]
    prompt: Optional[str]
    preset: Optional[str]
    generator: Optional[str]
    model: Optional[str]
    #: What the generator could not use
    notes: List[str]
    #: When it was stored
    created_at: str


class BacktestRunProgress(TypedDict):
    markets_done: int
    markets_total: Optional[int]


class BacktestRun(TypedDict):
    id: str
    status: Literal["queued", "running", "complete", "failed"]
    strategy_id: Optional[str]
    coin: str
    market_type: str
    market_count: int
    start_time: Optional[str]
    end_time: Optional[str]
    definition: StrategyDefinition
    #: The definition in plain words, a line per part (what the engine follows, nothing more)
    definition_text: str
    progress: BacktestRunProgress
    error: Optional[str]
    #: When it was stored
    created_at: str
    started_at: Optional[str]
    finished_at: Optional[str]


class BacktestRunAnswerResultsPage(TypedDict):
    #: Markets replayed so far
    total: int
    limit: int
    offset: int


class BacktestRunAnswerUnresolvedItem(TypedDict):
    slug: str
    #: The market's start
    start_time: str
    #: The market's end
    end_time: str


class BacktestRunAnswerBenchmarksOption1Item(TypedDict):
    #: always_up, always_down: buy at the first snapshot; favourite: the side priced higher at favourite_at_pct of the market; random: a seeded side and second
    name: Literal["always_up", "always_down", "favourite", "random"]
    #: Total PnL (USDC)
    pnl: float
    roi: Optional[float]
    win_rate: Optional[float]
    trades: int
    #: Markets replayed
    markets: int
    markets_traded: int
    #: Largest fall of the equity curve from a peak (USDC)
    max_drawdown: float
    sharpe: Optional[float]


class BacktestRunAnswerIntervalsOption1Pnl(TypedDict):
    low: Optional[float]
    high: Optional[float]


class BacktestRunAnswerIntervalsOption1Roi(TypedDict):
    low: Optional[float]
    high: Optional[float]


class BacktestRunAnswerIntervalsOption1WinRate(TypedDict):
    low: Optional[float]
    high: Optional[float]


class BacktestRunAnswerIntervalsOption1(TypedDict):
    "Percentile bootstrap over markets, seeded: the same run gives the same bounds"
    #: 0.95
    level: float
    #: Bootstrap resamples of the run's markets (0 without a market)
    samples: int
    seed: int
    pnl: BacktestRunAnswerIntervalsOption1Pnl
    roi: BacktestRunAnswerIntervalsOption1Roi
    win_rate: BacktestRunAnswerIntervalsOption1WinRate


class BacktestRunAnswerSweepOption1RowsItem(TypedDict):
    #: Each swept field (dotted path) and its value in this combination
    values: Dict[str, Any]
    #: Total PnL (USDC)
    pnl: float
    roi: Optional[float]
    win_rate: Optional[float]
    trades: int
    #: Markets replayed
    markets: int
    markets_traded: int
    #: Largest fall of the equity curve from a peak (USDC)
    max_drawdown: float
    sharpe: Optional[float]


class BacktestRunAnswerSweepOption1(TypedDict):
    #: The swept fields, in axis order
    fields: List[str]
    combinations: int
    #: One per combination, the first axis varying slowest
    rows: List[BacktestRunAnswerSweepOption1RowsItem]


class BacktestRunAnswerWalkForwardOption1TrainOption1(TypedDict):
    #: Total PnL (USDC)
    pnl: float
    roi: Optional[float]
    win_rate: Optional[float]
    trades: int
    #: Markets replayed
    markets: int
    markets_traded: int
    #: Largest fall of the equity curve from a peak (USDC)
    max_drawdown: float
    sharpe: Optional[float]


class BacktestRunAnswerWalkForwardOption1TestOption1(TypedDict):
    #: Total PnL (USDC)
    pnl: float
    roi: Optional[float]
    win_rate: Optional[float]
    trades: int
    #: Markets replayed
    markets: int
    markets_traded: int
    #: Largest fall of the equity curve from a peak (USDC)
    max_drawdown: float
    sharpe: Optional[float]


class BacktestRunAnswerWalkForwardOption1(TypedDict):
    train_fraction: float
    #: What the choice maximizes on the training markets
    metric: Literal["pnl"]
    #: The first markets, oldest first
    train_markets: int
    #: The rest
    test_markets: int
    chosen: Optional[Dict[str, Any]]
    train: Optional[BacktestRunAnswerWalkForwardOption1TrainOption1]
    test: Optional[BacktestRunAnswerWalkForwardOption1TestOption1]


class BacktestRunAnswer(TypedDict):
    run: BacktestRun
    strategy: Optional[Strategy]
    generated_strategy: Optional[StrategyDefinition]
    aggregate: Optional[BacktestAggregate]
    #: One per market replayed, oldest first: the page results_limit and results_offset ask for
    results: List[BacktestMarketResult]
    results_page: BacktestRunAnswerResultsPage
    #: Markets of the selection left out: not resolved yet
    unresolved: List[BacktestRunAnswerUnresolvedItem]
    benchmarks: Optional[List[BacktestRunAnswerBenchmarksOption1Item]]
    intervals: Optional[BacktestRunAnswerIntervalsOption1]
    sweep: Optional[BacktestRunAnswerSweepOption1]
    walk_forward: Optional[BacktestRunAnswerWalkForwardOption1]


class ListMarketsQuery(TypedDict, total=False):
    "Query of listMarkets"
    #: A configured coin (the Coin values), any case
    coin: str
    #: 5m, 15m, 1h, 4h, 24h (1hr, 4hr, 24hr accepted)
    market_type: str
    resolved: bool
    #: Markets starting at or after: ISO 8601, or epoch milliseconds
    start_time: str
    #: Markets starting at or before: ISO 8601, or epoch milliseconds
    end_time: str
    limit: int
    offset: int


class ListSnapshotsQuery(TypedDict, total=False):
    "Query of listSnapshots"
    limit: int
    offset: int
    #: Include orderbook_up and orderbook_down (best first) on every snapshot
    include_orderbook: bool
    order: Literal["desc", "asc"]
    #: Snapshots at or after: ISO 8601, or epoch milliseconds
    start_time: str
    #: Snapshots at or before: ISO 8601, or epoch milliseconds
    end_time: str


class _GetSnapshotAtQueryRequired(TypedDict):
    #: The time to look up: ISO 8601, or epoch milliseconds
    time: str


class GetSnapshotAtQuery(_GetSnapshotAtQueryRequired, total=False):
    "Query of getSnapshotAt"
    #: Include orderbook_up and orderbook_down (best first) on every snapshot
    include_orderbook: bool


class GetSeriesQuery(TypedDict, total=False):
    "Query of getSeries"
    #: At most this many snapshots in the answer (8..20000)
    points: int
    #: Snapshots at or after: ISO 8601, or epoch milliseconds
    start_time: str
    #: Snapshots at or before: ISO 8601, or epoch milliseconds
    end_time: str


class ListMarketTradesQuery(TypedDict, total=False):
    "Query of listMarketTrades"
    limit: int
    offset: int
    order: Literal["desc", "asc"]
    #: Trades at or after: ISO 8601, or epoch milliseconds
    start_time: str
    #: Trades at or before: ISO 8601, or epoch milliseconds
    end_time: str


class ListMarketEventsQuery(TypedDict, total=False):
    "Query of listMarketEvents"
    #: Events whose upstream timestamp is at or after: ISO 8601, or epoch milliseconds
    start_time: str
    #: Events whose upstream timestamp is at or before: ISO 8601, or epoch milliseconds
    end_time: str
    #: Only these event types, comma-separated: book, price_change, last_trade_price, tick_size_change, best_bid_ask, market_resolved
    types: str
    order: Literal["desc", "asc"]
    limit: int
    offset: int
    #: json: a page; ndjson: every event in the range, one a line, streamed (limit and offset unused)
    format: Literal["json", "ndjson"]


class GetBookAtQuery(TypedDict):
    "Query of getBookAt"
    #: The moment (µs precision accepted): ISO 8601, or epoch milliseconds
    time: str


ReplayWebSocketQuery = TypedDict("ReplayWebSocketQuery", {"from": "str", "to": "str", "speed": "str", "api_key": "str"}, total=True)


ReplayQuery = TypedDict("ReplayQuery", {"assets_ids": "str", "from": "str", "to": "str", "speed": "str"}, total=True)


class ReplayStrategyBody(TypedDict, total=False):
    "PolyHistorical's replay body; camelCase or snake_case, one spelling a field"
    #: A resolved market's slug; required
    marketSlug: str
    #: Also accepted as marketSlug
    market_slug: str
    #: The outcome bought; required
    side: Literal["UP", "DOWN"]
    #: All must hold to enter; required
    entryConditions: List[Dict[str, Any]]
    #: Also accepted as entryConditions
    entry_conditions: List[Dict[str, Any]]
    #: Any closes the position
    exitConditions: List[Dict[str, Any]]
    #: Also accepted as exitConditions
    exit_conditions: List[Dict[str, Any]]
    #: Shares per entry; default 100
    positionSize: float
    #: Also accepted as positionSize
    position_size: float
    #: A forced exit of the position at this drawdown, in percent; default 50
    maxLossPercent: float
    #: Also accepted as maxLossPercent
    max_loss_percent: float
    #: Default MARKET
    orderType: Literal["MARKET", "LIMIT"]
    #: Also accepted as orderType
    order_type: str
    latencyMs: int
    #: Also accepted as latencyMs
    latency_ms: int
    maxFillPrice: float
    #: Also accepted as maxFillPrice
    max_fill_price: float
    name: str
    #: Seconds to wait for the replay before 202; default 25
    wait: float


class ExportSnapshotsQuery(TypedDict, total=False):
    "Query of exportSnapshots"
    #: ndjson (our archive, importable), csv, or parquet (typed columns)
    format: Literal["ndjson", "csv", "parquet"]
    include_orderbook: bool
    #: Snapshots at or after: ISO 8601, or epoch milliseconds
    start_time: str
    #: Snapshots at or before: ISO 8601, or epoch milliseconds
    end_time: str


class _ExportSeriesQueryRequired(TypedDict):
    #: A configured coin (the Coin values), any case
    coin: str
    #: 5m, 15m, 1h, 4h, 24h (1hr, 4hr, 24hr accepted)
    market_type: str


class ExportSeriesQuery(_ExportSeriesQueryRequired, total=False):
    "Query of exportSeries"
    #: ndjson (our archive, importable), csv, or parquet (typed columns)
    format: Literal["ndjson", "csv", "parquet"]
    include_orderbook: bool
    #: Snapshots at or after (default: the series' first): ISO 8601, or epoch milliseconds
    start_time: str
    #: Snapshots at or before (default: the series' last): ISO 8601, or epoch milliseconds
    end_time: str


class ListLatestTradesQuery(TypedDict, total=False):
    "Query of listLatestTrades"
    limit: int


class ListDepthSnapshotsQuery(TypedDict, total=False):
    "Query of listDepthSnapshots"
    limit: int
    offset: int
    order: Literal["desc", "asc"]
    #: At or after: ISO 8601, or epoch milliseconds
    start_time: str
    #: At or before: ISO 8601, or epoch milliseconds
    end_time: str


class ListCandlesQuery(TypedDict, total=False):
    "Query of listCandles"
    limit: int
    offset: int
    order: Literal["desc", "asc"]
    #: At or after: ISO 8601, or epoch milliseconds
    start_time: str
    #: At or before: ISO 8601, or epoch milliseconds
    end_time: str
    #: Binance's kline intervals; 1m is recorded, wider ones are aggregated from it; 1s is served where imported (`updown import binance-vision`), for a range of at most a day: start_time and end_time are required with it
    interval: Literal["1s", "1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "8h", "12h", "1d", "3d", "1w", "1M"]


class ListFundingRatesQuery(TypedDict, total=False):
    "Query of listFundingRates"
    limit: int
    offset: int
    order: Literal["desc", "asc"]
    #: At or after: ISO 8601, or epoch milliseconds
    start_time: str
    #: At or before: ISO 8601, or epoch milliseconds
    end_time: str


class ListOpenInterestQuery(TypedDict, total=False):
    "Query of listOpenInterest"
    limit: int
    offset: int
    order: Literal["desc", "asc"]
    #: At or after: ISO 8601, or epoch milliseconds
    start_time: str
    #: At or before: ISO 8601, or epoch milliseconds
    end_time: str


class ListMarkPricesQuery(TypedDict, total=False):
    "Query of listMarkPrices"
    limit: int
    offset: int
    order: Literal["desc", "asc"]
    #: At or after: ISO 8601, or epoch milliseconds
    start_time: str
    #: At or before: ISO 8601, or epoch milliseconds
    end_time: str


class GetExecutionPriceQuery(TypedDict):
    "Query of getExecutionPrice"
    #: The outcome token traded
    outcome: Literal["up", "down"]
    #: buy walks the asks, sell the bids
    side: Literal["buy", "sell"]
    #: Shares
    size: float
    #: The moment of the order: ISO 8601, or epoch milliseconds
    time: str


class GenerateStrategyBody(TypedDict, total=False):
    "A prompt, a preset, or a prompt with a preset (the preset its starting point). coin, marketType and marketCount are checked and not used: generation does not depend on markets"
    #: What the strategy does, in words
    prompt: str
    #: A preset instead of a prompt
    preset: Literal["mean_reversion", "dip_buying", "momentum_entry", "quick_scalp"]
    name: str
    #: A configured coin; required
    coin: str
    #: 5m, 15m, 1h, 4h, 24h; required
    market_type: str
    #: Default 10
    market_count: int
    #: Alias of market_type (PolyHistorical's spelling)
    marketType: str
    #: Alias of market_count (PolyHistorical's spelling)
    marketCount: int
    #: Shares per entry
    position_size: float
    max_loss_percent: float
    order_type: Literal["MARKET", "LIMIT"]
    latency_ms: int
    max_fill_price: float
    #: Alias of position_size (PolyHistorical's spelling)
    positionSize: float
    #: Alias of max_loss_percent (PolyHistorical's spelling)
    maxLossPercent: float
    #: Alias of order_type (PolyHistorical's spelling)
    orderType: str
    #: Alias of latency_ms (PolyHistorical's spelling)
    latencyMs: int


RunStrategyBodySweepItem = TypedDict("RunStrategyBodySweepItem", {"field": "str", "values": "List[float]", "from": "float", "to": "float", "step": "float"}, total=True)


class RunStrategyBody(TypedDict, total=False):
    "One of prompt (with an optional preset), preset, definition (fields left out take their defaults), or side with entryConditions"
    #: What the strategy does, in words
    prompt: str
    #: A preset instead of a prompt
    preset: Literal["mean_reversion", "dip_buying", "momentum_entry", "quick_scalp"]
    definition: StrategyDefinition
    #: PolyHistorical's replay form, with entryConditions
    side: Literal["UP", "DOWN"]
    #: {field, operator, value}, all must hold
    entryConditions: List[Dict[str, Any]]
    #: {field, operator, value}, any closes
    exitConditions: List[Dict[str, Any]]
    name: str
    #: A configured coin; required
    coin: str
    #: 5m, 15m, 1h, 4h, 24h; required
    market_type: str
    #: Default 10
    market_count: int
    #: Markets starting at or after: ISO 8601 or epoch ms
    start_time: str
    #: Markets starting at or before
    end_time: str
    #: Alias of market_type (PolyHistorical's spelling)
    marketType: str
    #: Alias of market_count (PolyHistorical's spelling)
    marketCount: int
    #: Seconds to wait for the run before 202; default 25
    wait: float
    #: Shares per entry
    position_size: float
    max_loss_percent: float
    order_type: Literal["MARKET", "LIMIT"]
    latency_ms: int
    max_fill_price: float
    #: Alias of position_size (PolyHistorical's spelling)
    positionSize: float
    #: Alias of max_loss_percent (PolyHistorical's spelling)
    maxLossPercent: float
    #: Alias of order_type (PolyHistorical's spelling)
    orderType: str
    #: Alias of latency_ms (PolyHistorical's spelling)
    latencyMs: int
    #: A grid over numeric fields, run as one job: at most 100 combinations; one generation of the quota per sweep
    sweep: List[RunStrategyBodySweepItem]
    #: Walk-forward (with a sweep): choose the best combination by PnL on this fraction of the markets, oldest first, and report it on the rest
    train_fraction: float
    #: Seeds the random benchmark and the bootstrap; default 1
    seed: int
    #: When the favourite benchmark buys, in percent of the market; default 50
    favourite_at_pct: float


class ListStrategiesQuery(TypedDict, total=False):
    "Query of listStrategies"
    limit: int
    offset: int


RunBacktestBodySweepItem = TypedDict("RunBacktestBodySweepItem", {"field": "str", "values": "List[float]", "from": "float", "to": "float", "step": "float"}, total=True)


class RunBacktestBody(TypedDict, total=False):
    "One of strategy_id, definition, or side with entryConditions"
    #: A stored strategy of this key
    strategy_id: str
    #: Alias of strategy_id (PolyHistorical's spelling)
    strategyId: str
    definition: StrategyDefinition
    strategy: StrategyDefinition
    #: PolyHistorical's replay form, with entryConditions
    side: Literal["UP", "DOWN"]
    #: {field, operator, value}, all must hold
    entryConditions: List[Dict[str, Any]]
    #: {field, operator, value}, any closes
    exitConditions: List[Dict[str, Any]]
    name: str
    #: A configured coin; required
    coin: str
    #: 5m, 15m, 1h, 4h, 24h; required
    market_type: str
    #: Default 10
    market_count: int
    #: Markets starting at or after: ISO 8601 or epoch ms
    start_time: str
    #: Markets starting at or before
    end_time: str
    #: Alias of market_type (PolyHistorical's spelling)
    marketType: str
    #: Alias of market_count (PolyHistorical's spelling)
    marketCount: int
    #: Seconds to wait for the run before 202; default 25
    wait: float
    #: Shares per entry
    position_size: float
    max_loss_percent: float
    order_type: Literal["MARKET", "LIMIT"]
    latency_ms: int
    max_fill_price: float
    #: Alias of position_size (PolyHistorical's spelling)
    positionSize: float
    #: Alias of max_loss_percent (PolyHistorical's spelling)
    maxLossPercent: float
    #: Alias of order_type (PolyHistorical's spelling)
    orderType: str
    #: Alias of latency_ms (PolyHistorical's spelling)
    latencyMs: int
    #: A grid over numeric fields, run as one job: at most 100 combinations; one generation of the quota per sweep
    sweep: List[RunBacktestBodySweepItem]
    #: Walk-forward (with a sweep): choose the best combination by PnL on this fraction of the markets, oldest first, and report it on the rest
    train_fraction: float
    #: Seeds the random benchmark and the bootstrap; default 1
    seed: int
    #: When the favourite benchmark buys, in percent of the market; default 50
    favourite_at_pct: float


class GetBacktestRunQuery(TypedDict, total=False):
    "Query of getBacktestRun"
    #: Markets' results in the answer (default: every market)
    results_limit: int
    results_offset: int


class GetBacktestRunTradesQuery(TypedDict, total=False):
    "Query of getBacktestRunTrades"
    limit: int
    offset: int


class ExportBacktestRunTradesQuery(TypedDict, total=False):
    "Query of exportBacktestRunTrades"
    #: csv (one row a trade, flattened), ndjson (the API's objects with slug), parquet (typed columns)
    format: Literal["csv", "ndjson", "parquet"]


class ExportBacktestRunResultsQuery(TypedDict, total=False):
    "Query of exportBacktestRunResults"
    #: csv (one row a trade, flattened), ndjson (the API's objects with slug), parquet (typed columns)
    format: Literal["csv", "ndjson", "parquet"]


class CompareBacktestRunsQuery(TypedDict):
    "Query of compareBacktestRuns"
    #: Run ids, comma-separated, 1 to 10 (each a run of the key; another's is 404)
    ids: str
