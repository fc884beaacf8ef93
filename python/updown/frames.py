"""DataFrames of the API's records; pandas is imported here only, when a frame is asked for.

Columns are the record's fields in the API's order and names. Fields that are times become
``datetime64[ns, UTC]`` (timezone-aware; microseconds kept); numbers become float64 (int64 when every
value is a whole number and none is missing); strings stay object. An object field (a market's
``settlement``, a trade's ``entry``) is flattened into ``<field>_<key>`` columns; lists stay as they are.
Snapshots' books are described at ``snapshots_frame``."""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence

from .types import SHAPES

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

BOOK_SIDES = (("up", "bids"), ("up", "asks"), ("down", "bids"), ("down", "asks"))


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as err:  # pragma: no cover - depends on the machine
        raise ImportError("to_pandas() needs pandas: pip install pandas (or apt install python3-pandas)") from err
    return pandas


def _times(pd: Any, values: Sequence[Any]) -> Any:
    # The API writes ISO 8601 UTC with Z; one format per field, so pandas takes its fast ISO path.
    return pd.to_datetime(pd.Series(values, dtype=object), utc=True)


def _columns(shape: str, prefix: str = "") -> List[tuple]:
    """(column name, path of keys, is a time) of every leaf of a record shape, flattening objects."""
    out: List[tuple] = []
    for key, kind in SHAPES[shape].items():
        name = prefix + key
        if kind in SHAPES:
            for column, path, is_time in _columns(kind, name + "_"):
                out.append((column, (key,) + path, is_time))
        else:
            out.append((name, (key,), kind == "datetime"))
    return out


def _leaf(record: Any, path: tuple) -> Any:
    for key in path:
        if not isinstance(record, dict):
            return None
        record = record.get(key)
    return record


def records_frame(records: Iterable[Dict[str, Any]], shape: str, skip: Sequence[str] = (), extra: Optional[Dict[str, List[Any]]] = None) -> "pd.DataFrame":
    """A frame of records of the named shape (a TypedDict of updown.types), one row per record."""
    pd = _pandas()
    rows = list(records)
    data: Dict[str, Any] = dict(extra or {})
    for column, path, is_time in _columns(shape):
        if path[0] in skip:
            continue
        if len(path) == 1:
            key = path[0]
            values = [r.get(key) for r in rows]
        else:
            values = [_leaf(r, path) for r in rows]
        data[column] = _times(pd, values) if is_time else pd.Series(values, dtype=_dtype(values))
    return pd.DataFrame(data, index=pd.RangeIndex(len(rows)))


def _dtype(values: List[Any]) -> Optional[str]:
    kinds = {type(v) for v in values}
    if kinds and kinds <= {int, float, type(None)} and kinds != {type(None)}:
        return "int64" if kinds == {int} else "float64"
    if kinds and kinds <= {bool}:
        return "bool"
    return "object"


def snapshots_frame(snapshots: Sequence[Dict[str, Any]], books: str = "nested", levels: int = 5) -> "pd.DataFrame":
    """One row per snapshot: ``time`` (datetime64[ns, UTC]), ``coin_price``, ``price_up``, ``price_down``
    (float64), then the books when the snapshots carry them (``include_orderbook=True``):

    - ``books="nested"``: ``up_bids``, ``up_asks``, ``down_bids``, ``down_asks``, each a list of
      ``{"price", "size"}`` levels best first, as the API sends them (None where no book was recorded);
    - ``books="flat"``: ``levels`` levels per side as float64 columns ``up_bid_price_1``,
      ``up_bid_size_1``, ... ``down_ask_size_<levels>`` (1 is the best; NaN beyond a book's depth);
    - ``books="none"``: no book columns.
    """
    pd = _pandas()
    import numpy as np

    if books not in ("nested", "flat", "none"):
        raise ValueError('books is "nested", "flat" or "none"')
    n = len(snapshots)
    data: Dict[str, Any] = {
        "time": _times(pd, [s["time"] for s in snapshots]),
        "coin_price": np.fromiter(map(itemgetter("coin_price"), snapshots), dtype="float64", count=n),
        "price_up": np.fromiter(map(itemgetter("price_up"), snapshots), dtype="float64", count=n),
        "price_down": np.fromiter(map(itemgetter("price_down"), snapshots), dtype="float64", count=n),
    }
    has_books = any("orderbook_up" in s or "orderbook_down" in s for s in snapshots)
    if has_books and books == "nested":
        for outcome in ("up", "down"):
            held = [s.get("orderbook_" + outcome) for s in snapshots]
            for side in ("bids", "asks"):
                # fromiter into an object array: each cell one list (np.array would make a 2-D array).
                levels_of = (book[side] if book else None for book in held)
                data[f"{outcome}_{side}"] = np.fromiter(levels_of, dtype=object, count=n)
    elif has_books and books == "flat":
        if levels < 1:
            raise ValueError("levels is at least 1")
        for outcome, side in BOOK_SIDES:
            prices = np.full((n, levels), np.nan)
            sizes = np.full((n, levels), np.nan)
            key = "orderbook_" + outcome
            for row, s in enumerate(snapshots):
                book = s.get(key)
                if not book:
                    continue
                for i, level in enumerate(book[side][:levels]):
                    prices[row, i] = level["price"]
                    sizes[row, i] = level["size"]
            for i in range(levels):
                data[f"{outcome}_{side[:-1]}_price_{i + 1}"] = prices[:, i]
                data[f"{outcome}_{side[:-1]}_size_{i + 1}"] = sizes[:, i]
    return pd.DataFrame(data, index=pd.RangeIndex(n))
