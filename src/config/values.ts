import { ConfigError } from "./error.ts";
import { type Coin, MARKET_TYPES, type MarketType, parseCoin, parseMarketType } from "../domain/market.ts";

/**
 * How the text of an environment variable or a flag becomes a value, and the rule it must follow. One
 * type per kind of value, so that a rule is written once whatever reads it.
 */
export interface ValueType<T> {
  /** The rule in words, as errors, `--help` and docs/configuration.md give it. */
  readonly rule: string;
  /** What `--help` writes after the flag: `N`, `URL`, `FILE`. */
  readonly placeholder: string;
  /** The value, or a ConfigError naming `label` and the rule. */
  parse(text: string, label: string): T;
  /** A value (a default) as `--help` and the docs write it. */
  show(value: T): string;
}

/** The error of a text that breaks a rule: the same line whether the text came from a variable or a flag. */
export function broken(label: string, rule: string, shown: string): ConfigError {
  return new ConfigError(`${label} must be ${rule}, got "${shown}"`);
}

const plain = (value: unknown): string => String(value);

export function integer(min: number, max: number, rule?: string): ValueType<number> {
  const words =
    rule ??
    (max !== Infinity
      ? `an integer from ${min} to ${max}`
      : min === 1
        ? "a positive integer"
        : min === 0
          ? "a whole number"
          : "an integer");
  return {
    rule: words,
    placeholder: "N",
    parse(text, label) {
      const n = Number(text);
      if (text.trim() === "" || !Number.isInteger(n) || n < min || n > max) throw broken(label, words, text);
      return n;
    },
    show: plain,
  };
}

export function text(placeholder: string, rule = "any text"): ValueType<string> {
  return { rule, placeholder, parse: (value) => value, show: plain };
}

/** Text that must match a pattern, described by `rule`. */
export function matching(pattern: RegExp, placeholder: string, rule: string): ValueType<string> {
  return {
    rule,
    placeholder,
    parse(value, label) {
      if (!pattern.test(value)) throw broken(label, rule, value);
      return value;
    },
    show: plain,
  };
}

/** The scheme of a URL is all an error shows of it: the rest may hold a password. */
function schemeOf(value: string): string {
  return `${value.split(":")[0]}:`;
}

/**
 * A URL with one of the given schemes (`https:`, `wss:`...). `trimSlash` drops trailing slashes, for
 * base addresses that paths are appended to.
 */
export function url(schemes: readonly string[], trimSlash = false): ValueType<string> {
  const rule = `a URL starting with ${orList(schemes.map((s) => `${s}//`))}`;
  return {
    rule,
    placeholder: "URL",
    parse(value, label) {
      if (!URL.canParse(value) || !schemes.includes(new URL(value).protocol)) {
        throw broken(label, rule, schemeOf(value));
      }
      return trimSlash ? value.replace(/\/+$/, "") : value;
    },
    show: plain,
  };
}

/** Where the data is kept: `sqlite:<path>` or a PostgreSQL URL. */
export function storeUrl(): ValueType<string> {
  const rule = "a URL starting with sqlite:, postgres:// or postgresql://";
  return {
    rule,
    placeholder: "URL",
    parse(value, label) {
      if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(value)) throw broken(label, rule, schemeOf(value));
      return value;
    },
    show: plain,
  };
}

/** `a`, `a or b`, `a, b or c`. */
function orList(items: readonly string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

/** One of a few words; `parse` may accept other spellings of them (aliases, any case). */
export function choice<T extends string>(
  all: readonly T[],
  parse: (value: string) => T | null = (value) => (all.includes(value as T) ? (value as T) : null),
): ValueType<T> {
  const rule = all.length > 2 ? `one of ${all.join(", ")}` : orList(all);
  return {
    rule,
    placeholder: all.join("|"),
    parse(value, label) {
      const chosen = parse(value);
      if (chosen === null) throw broken(label, rule, value);
      return chosen;
    },
    show: plain,
  };
}

/**
 * A comma-separated list of some of `all` (aliases as `parse` accepts them). With `none`, the word
 * `none` is the empty list.
 */
export function listOf<T extends string>(
  all: readonly T[],
  parse: (value: string) => T | null,
  none = false,
): ValueType<T[]> {
  const known = `${all.join(", ")}${none ? ", or none" : ""}`;
  return {
    rule: `a comma-separated list of ${all.join(", ")}${none ? ", or none" : ""}`,
    placeholder: all.join(","),
    parse(value, label) {
      if (none && value === "none") return [];
      return value.split(",").map((item) => {
        const parsed = parse(item.trim());
        if (parsed === null) throw new ConfigError(`${label}: ${item} is not one of ${known}`);
        return parsed;
      });
    },
    show: (value) => (value.length === 0 ? "none" : value.join(",")),
  };
}

const COIN_RULE = "2 to 12 letters and digits, starting with a letter (any case)";

/** One coin code (`btc`, any case). */
export function coinCode(): ValueType<Coin> {
  return {
    rule: `a coin code: ${COIN_RULE}`,
    placeholder: "COIN",
    parse(value, label) {
      const coin = parseCoin(value.trim());
      if (coin === null) throw broken(label, `a coin code: ${COIN_RULE}`, value);
      return coin;
    },
    show: plain,
  };
}

/** Coin codes, comma-separated, at least one, each once. */
export function coinList(): ValueType<Coin[]> {
  const rule = `a comma-separated list of coin codes (each ${COIN_RULE})`;
  return {
    rule,
    placeholder: "btc,eth,...",
    parse(value, label) {
      const coins = value.split(",").map((item) => {
        const coin = parseCoin(item.trim());
        if (coin === null) throw new ConfigError(`${label}: ${item} is not a coin code (${COIN_RULE})`);
        return coin;
      });
      return [...new Set(coins)];
    },
    show: (value) => value.join(","),
  };
}

/** Some texts, comma-separated (a repeated flag gives them one by one). */
export function textList(placeholder: string): ValueType<string[]> {
  return {
    rule: "one or more texts, comma-separated or the flag repeated",
    placeholder,
    parse: (value) => value.split(",").filter((item) => item !== ""),
    show: (value) => value.join(","),
  };
}

const TRUE_WORDS = ["1", "true", "yes", "on"];
const FALSE_WORDS = ["0", "false", "no", "off"];

export function yesNo(): ValueType<boolean> {
  const rule = "1, true, yes, on, or 0, false, no, off";
  return {
    rule,
    placeholder: "BOOL",
    parse(value, label) {
      const lower = value.toLowerCase();
      if (TRUE_WORDS.includes(lower)) return true;
      if (FALSE_WORDS.includes(lower)) return false;
      throw broken(label, rule, value);
    },
    show: (value) => (value ? "true" : "false"),
  };
}

/** A value that may be absent; `absent` says what that means (`unset`, `now`, `required`). */
export function optional<T>(type: ValueType<T>, absent = "unset"): ValueType<T | null> {
  return {
    rule: type.rule,
    placeholder: type.placeholder,
    parse: (value, label) => type.parse(value, label),
    show: (value) => (value === null ? absent : type.show(value)),
  };
}

/** A time parsed by `read` (microseconds), or the error naming `rule`. */
export function time(read: (value: string) => number | null, rule: string): ValueType<number> {
  return {
    rule,
    placeholder: "TIME",
    parse(value, label) {
      const us = read(value);
      if (us === null) throw broken(label, rule, value);
      return us;
    },
    show: plain,
  };
}

/** `5m=60,15m=60,...`: demo markets per series and coin; types left out keep their count in `defaults`. */
export function demoCounts(defaults: Record<MarketType, number>): ValueType<Record<MarketType, number>> {
  const rule = `TYPE=N pairs, comma-separated (TYPE one of ${MARKET_TYPES.join(", ")}, N a whole number)`;
  return {
    rule,
    placeholder: "5m=N,15m=N,...",
    parse(value, label) {
      const counts = { ...defaults };
      for (const part of value.split(",")) {
        const [name, n] = part.split("=");
        const type = parseMarketType(name ?? "");
        const count = Number(n);
        if (!type || n === undefined || n.trim() === "" || !Number.isInteger(count) || count < 0) {
          throw broken(label, rule, value);
        }
        counts[type] = count;
      }
      return counts;
    },
    show: (value) => MARKET_TYPES.map((type) => `${type}=${value[type]}`).join(","),
  };
}

/**
 * Which proxies' X-Forwarded-For names the client (Fastify's trustProxy): `false` (none: the socket's
 * peer is the client), a number of proxy hops in front of the server, or the proxies' addresses and
 * CIDR ranges. Never "every peer": `true` let any client write its own address (issue 21), so it is
 * refused with the forms to use instead.
 */
export function trustProxy(): ValueType<false | number | string> {
  const rule =
    "false, a number of proxy hops from 1 to 16, or a comma-separated list of proxy addresses, CIDR ranges, loopback, linklocal or uniquelocal";
  return {
    rule,
    placeholder: "PROXIES",
    parse(value, label) {
      if (value === "false") return false;
      if (value === "true") {
        throw new ConfigError(
          `${label} no longer takes "true" (it believed any client's X-Forwarded-For); give the load balancer's ` +
            `addresses or CIDR ranges (e.g. 10.0.0.0/8), or the number of proxies in front of the server (e.g. 1)`,
        );
      }
      if (/^\d+$/.test(value)) {
        const hops = Number(value);
        if (hops < 1 || hops > 16) throw broken(label, rule, value);
        return hops;
      }
      const proxy = /^([0-9A-Fa-f.:]+(\/\d{1,3})?|loopback|linklocal|uniquelocal)$/;
      if (value.split(",").some((item) => !proxy.test(item.trim()))) {
        throw broken(label, rule, value);
      }
      return value;
    },
    show: plain,
  };
}
