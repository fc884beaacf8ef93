import type { MarketFilter } from "../ports/market-store.ts";
import { MARKET_COLUMNS } from "../sql/rows.ts";

/**
 * A listing as SQL both stores run: the statement counting the markets a filter selects, the one
 * reading its page (newest first, ties by slug in byte order), and their values. Parameters are
 * numbered, `${mark}1`, `${mark}2`, ... (`?` for SQLite, `$` for PostgreSQL); the page's limit and offset
 * come after the filter's own values.
 */
export interface MarketListSql {
  count: string;
  page: string;
  filterValues: (string | number)[];
  pageValues: (string | number)[];
}

/**
 * What a MarketFilter means, said once: each given field narrows the listing; `resolved` is whether a
 * winner is known; `hiddenBefore` leaves out each named series' markets that start before its second
 * (what a plan's history window hides).
 */
export function marketListSql(f: MarketFilter, mark: "?" | "$"): MarketListSql {
  const where: string[] = [];
  const values: (string | number)[] = [];
  const param = (value: string | number): string => {
    values.push(value);
    return `${mark}${values.length}`;
  };
  if (f.coin) where.push(`coin = ${param(f.coin)}`);
  if (f.marketType) where.push(`market_type = ${param(f.marketType)}`);
  if (f.resolved !== undefined) where.push(f.resolved ? "winner IS NOT NULL" : "winner IS NULL");
  if (f.startFrom !== undefined) where.push(`start_time >= ${param(f.startFrom)}`);
  if (f.startTo !== undefined) where.push(`start_time <= ${param(f.startTo)}`);
  for (const h of f.hiddenBefore ?? []) {
    where.push(
      `NOT (coin = ${param(h.coin)} AND market_type = ${param(h.marketType)} AND start_time < ${param(h.startTime)})`,
    );
  }
  const clause = where.length ? `WHERE ${where.join(" AND ")}` : "";
  const filterValues = [...values];
  const page = `SELECT ${MARKET_COLUMNS} FROM markets ${clause} ORDER BY start_time DESC, slug
    LIMIT ${param(f.limit)} OFFSET ${param(f.offset)}`;
  return { count: `SELECT count(*) AS n FROM markets ${clause}`, page, filterValues, pageValues: values };
}
