/**
 * What the soak (bench/soak.ts) asks for: kinds of request by weight, each with the statuses it may
 * get, drawn into one fixed rotation. The paths depend only on the seed and the markets, so both
 * backends (seeded alike) get the same requests in the same order; only the keys differ.
 */
import { Rng } from "../src/demo/demo.ts";
import type { StoredMarket } from "../src/store/ports/market-store.ts";
import type { ListEntry } from "./load.ts";

/** The keys of one backend's database. */
export interface SoakKeys {
  /** Most of the load: no limits, every request counted and none refused. */
  enterprise: string;
  /** Starter keys (60 a minute, 1,000 a day) asked far more often than that: mostly 429. */
  starters: string[];
  /** A key that was revoked: 401 like an unknown one. */
  revoked: string;
}

/** Client addresses the bad keys come from (TEST-NET-3, through X-Forwarded-For; TRUST_PROXY=127.0.0.1). */
const ATTACKER_ADDRESSES = 64;

export interface Kind {
  name: string;
  weight: number;
  /** Every status this kind may get; anything else is reported. */
  expect: readonly number[];
  make: (rng: Rng) => { path: string; headers?: Record<string, string> };
}

export interface Mix {
  entries: ListEntry[];
  /** One entry of each kind, drawn apart from the rotation, to check the statuses before the load. */
  examples: [Kind, ListEntry][];
  /** Share of each kind in percent. */
  shares: Record<string, number>;
  /** Each kind's allowed statuses. */
  expect: Record<string, readonly number[]>;
  distinctPaths: number;
}

function pick<T>(items: readonly T[], rng: Rng): T {
  return items[rng.int(0, items.length - 1)];
}

function isoOf(second: number): string {
  return new Date(second * 1000).toISOString().replace(".000Z", "Z");
}

/** The markets the kinds draw from. */
interface Markets {
  all: StoredMarket[];
  resolved: StoredMarket[];
  live: StoredMarket[];
  fiveMinute: StoredMarket[];
  /** Two resolved pages asked again and again: the page cache answers them. */
  warm: StoredMarket[];
  /** BTC markets older than the starter plan's history: 403 for a starter key. */
  starterHidden: StoredMarket[];
  /** Markets the starter plan opens. */
  starterOpen: StoredMarket[];
}

function marketsOf(all: StoredMarket[]): Markets {
  const resolved = all.filter((m) => m.winner !== null && m.snapshotCount > 0);
  const btc5m = all.filter((m) => m.coin === "btc" && m.marketType === "5m");
  // config/plans.json: a starter key opens the latest 50 BTC 5m markets.
  const hidden = [...btc5m].sort((a, b) => b.startTime - a.startTime).slice(50);
  if (hidden.length === 0) throw new Error("soak: the data has no BTC 5m market hidden from starter keys");
  return {
    all,
    resolved,
    live: all.filter((m) => m.winner === null && m.snapshotCount > 0),
    fiveMinute: resolved.filter((m) => m.marketType === "5m"),
    warm: resolved.filter((m) => m.coin === "btc" && m.marketType === "1h").slice(0, 2),
    starterHidden: hidden,
    starterOpen: resolved.filter((m) => m.coin !== "btc"),
  };
}

/** A page of one of the last `coldRows` offsets of a market: mostly distinct, read from the store. */
function pagePath(m: StoredMarket, rng: Rng, books: boolean, coldRows: number): string {
  const offset = rng.int(Math.max(0, m.snapshotCount - coldRows), m.snapshotCount - 1);
  const order = rng.next() < 0.2 ? "&order=asc" : "";
  return `/v1/markets/${m.slug}/snapshots?limit=1000&offset=${offset}${order}${books ? "&include_orderbook=true" : ""}`;
}

function exchangePath(rng: Rng): string {
  const coin = pick(["btc", "eth", "sol", "BTC"], rng);
  const venue = pick(["spot", "futures", "future"], rng);
  return pick(
    [
      `/v1/${coin}/${venue}/latest`,
      `/v1/${coin}/${venue}/trades/latest?limit=${pick([10, 100, 1000], rng)}`,
      `/v1/${coin}/${venue}/snapshots?limit=${pick([10, 100], rng)}&offset=${rng.int(0, 250)}`,
      `/v1/${coin}/${venue}/candles?interval=${pick(["1m", "5m", "15m", "1h"], rng)}&limit=100`,
      `/v1/${coin}/futures/${pick(["funding-rates", "open-interest", "mark-price"], rng)}?limit=100`,
    ],
    rng,
  );
}

/** Requests with the enterprise key (the job's own headers): everything a paying client asks. */
function servedKinds(m: Markets, coldRows: number): Kind[] {
  const withRows = [...m.resolved, ...m.live];
  return [
    {
      name: "markets list",
      weight: 7,
      expect: [200],
      make: (rng) => {
        const filters = [
          "",
          `&coin=${pick(["btc", "eth", "sol"], rng)}`,
          `&coin=btc&market_type=${pick(["5m", "15m", "1h", "4h"], rng)}&resolved=true`,
          "&resolved=false",
        ];
        return {
          path: `/v1/markets?limit=${pick([10, 50, 100], rng)}&offset=${rng.int(0, 200)}${pick(filters, rng)}`,
        };
      },
    },
    {
      name: "market record",
      weight: 7,
      expect: [200],
      make: (rng) => ({ path: `/v1/markets/${pick(m.all, rng).slug}` }),
    },
    {
      name: "coverage",
      weight: 2,
      expect: [200],
      make: (rng) => ({ path: `/v1/markets/${pick(m.all, rng).slug}/coverage` }),
    },
    {
      name: "page, no books",
      weight: 17,
      expect: [200],
      make: (rng) => ({ path: pagePath(pick(m.resolved, rng), rng, false, coldRows) }),
    },
    {
      name: "page, books",
      weight: 7,
      expect: [200],
      make: (rng) => ({ path: pagePath(pick(m.resolved, rng), rng, true, coldRows) }),
    },
    {
      name: "page of a live market",
      weight: 3,
      expect: [200],
      make: (rng) => ({ path: pagePath(pick(m.live, rng), rng, rng.next() < 0.5, coldRows) }),
    },
    {
      name: "repeated page (cache hit)",
      weight: 7,
      expect: [200],
      make: (rng) => ({
        path: `/v1/markets/${pick(m.warm, rng).slug}/snapshots?limit=1000${rng.next() < 0.5 ? "&include_orderbook=true" : ""}`,
      }),
    },
    {
      name: "at",
      weight: 9,
      expect: [200],
      make: (rng) => {
        const market = pick(withRows, rng);
        const last = Math.max(1, Math.min(market.snapshotCount, market.endTime - market.startTime) - 1);
        const second = market.startTime + rng.int(1, last);
        return {
          path: `/v1/markets/${market.slug}/snapshots/at?time=${isoOf(second)}${rng.next() < 0.5 ? "&include_orderbook=true" : ""}`,
        };
      },
    },
    {
      name: "export (one 5m market)",
      weight: 2,
      expect: [200],
      make: (rng) => ({
        path: `/v1/markets/${pick(m.fiveMinute, rng).slug}/snapshots/export?format=${pick(["ndjson", "csv"], rng)}`,
      }),
    },
    { name: "account", weight: 1, expect: [200], make: () => ({ path: "/v1/account" }) },
    { name: "exchange", weight: 10, expect: [200], make: (rng) => ({ path: exchangePath(rng) }) },
  ];
}

/** Requests the service must refuse: unknown things (404) and broken parameters (400). */
function refusedKinds(m: Markets): Kind[] {
  return [
    {
      name: "404",
      weight: 7,
      expect: [404],
      make: (rng) => ({
        path: pick(
          [
            `/v1/markets/btc-updown-5m-${1600000000 + 300 * rng.int(0, 100_000)}`,
            `/v1/markets/eth-updown-1h-${1600000000 + 3600 * rng.int(0, 10_000)}/snapshots?limit=10`,
            "/v1/no-such-route",
            "/v2/markets",
            `/v1/${pick(["xrp", "abc"], rng)}/spot/latest`,
            "/v1/btc/spot/funding-rates",
            "/v1/eth/options/latest",
          ],
          rng,
        ),
      }),
    },
    {
      name: "400",
      weight: 8,
      expect: [400],
      make: (rng) => {
        const slug = pick(m.resolved, rng).slug;
        return {
          path: pick(
            [
              "/v1/markets?limit=1000",
              "/v1/markets?limit=abc",
              "/v1/markets?coin=doge",
              `/v1/markets/${slug}/snapshots?limit=0`,
              `/v1/markets/${slug}/snapshots?offset=-1`,
              `/v1/markets/${slug}/snapshots?limit=1000&order=sideways`,
              `/v1/markets/${slug}/snapshots/at`,
              `/v1/markets/${slug}/snapshots/at?time=yesterday`,
              "/v1/btc/spot/candles?interval=7m",
              "/v1/eth/futures/mark-price?limit=5000",
            ],
            rng,
          ),
        };
      },
    },
  ];
}

/** Keys that do not open what they ask for: bad keys (401, then 429 per address) and starter keys. */
function limitedKinds(m: Markets, keys: SoakKeys): Kind[] {
  const wellFormedUnknown = `ud_Soak0000_${"x".repeat(32)}`;
  return [
    // 401, and 429 from an address's 31st failure in a minute on (AUTH_FAILURES_PER_MINUTE).
    {
      name: "bad key",
      weight: 5,
      expect: [401, 429],
      make: (rng) => {
        const address = `203.0.113.${rng.int(1, ATTACKER_ADDRESSES)}`;
        const key = pick([null, "not-a-key", wellFormedUnknown, keys.revoked], rng);
        return {
          path: pick(["/v1/markets?limit=10", `/v1/markets/${pick(m.all, rng).slug}`, "/v1/account"], rng),
          headers: { "x-forwarded-for": address, ...(key === null ? {} : { "x-api-key": key }) },
        };
      },
    },
    // 403 while the key's minute lasts, 429 after (60 a minute).
    {
      name: "starter key, hidden BTC market",
      weight: 3,
      expect: [403, 429],
      make: (rng) => ({
        path: pick(
          [
            `/v1/markets/${pick(m.starterHidden, rng).slug}`,
            pagePath(pick(m.starterHidden, rng), rng, false, 10),
          ],
          rng,
        ),
        headers: { "x-api-key": pick(keys.starters, rng) },
      }),
    },
    {
      name: "starter key, open market",
      weight: 5,
      expect: [200, 429],
      make: (rng) => ({
        path: pick(
          [`/v1/markets/${pick(m.starterOpen, rng).slug}`, "/v1/markets?limit=10", exchangePath(rng)],
          rng,
        ),
        headers: { "x-api-key": pick(keys.starters, rng) },
      }),
    },
  ];
}

/** The rotation: `size` entries in a fixed random order, and one example of each kind. */
export function buildMix(
  markets: StoredMarket[],
  keys: SoakKeys,
  coldRows: number,
  size: number,
  seed: number,
): Mix {
  const m = marketsOf(markets);
  const kinds = [...servedKinds(m, coldRows), ...refusedKinds(m), ...limitedKinds(m, keys)];
  const total = kinds.reduce((s, k) => s + k.weight, 0);
  const rng = Rng.named(seed, "bench:soak");
  const entries: ListEntry[] = [];
  for (let i = 0; i < size; i++) {
    let x = rng.next() * total;
    const kind = kinds.find((k) => (x -= k.weight) < 0) ?? kinds[kinds.length - 1];
    entries.push({ ...kind.make(rng), kind: kind.name });
  }
  const examples = kinds.map((k): [Kind, ListEntry] => [
    k,
    { ...k.make(Rng.named(seed, `bench:soak:${k.name}`)), kind: k.name },
  ]);
  const shares = Object.fromEntries(kinds.map((k) => [k.name, Math.round((1000 * k.weight) / total) / 10]));
  const distinctPaths = new Set(entries.map((e) => (typeof e === "string" ? e : e.path))).size;
  const expect = Object.fromEntries(kinds.map((k) => [k.name, k.expect]));
  return { entries, examples, shares, expect, distinctPaths };
}
