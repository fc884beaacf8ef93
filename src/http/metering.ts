import type { FastifyReply, FastifyRequest } from "fastify";
import type { KeyService } from "../access/keys.ts";
import {
  type LimitDecision,
  type RateLimiter,
  type RateWindow,
  stateOf,
  type WindowState,
} from "../access/limiter/limiter.ts";
import { type ApiKeyRecord, PLAN_NAMES, type PlanName } from "../domain/api-key.ts";
import { limitsOf, type Plan, type Plans, type RequestLimits } from "../domain/plan.ts";
import { type Clock, isoSeconds } from "../domain/time.ts";
import { presentedKey } from "./api-key-header.ts";
import { ApiError, secondsUntil, unauthorized } from "./errors.ts";
import type { Metrics } from "./metrics.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** False for routes that need a key but do not count against its limits (DESIGN 3.2). */
    metered?: boolean;
  }
}

export interface MeteringOptions {
  keys: KeyService;
  limiter: RateLimiter;
  plans: Plans;
  clock: Clock;
  /** Failed authentications allowed per client address and minute before 429. */
  authFailuresPerMinute: number;
  /** Requests per key and minute to the routes that do not count, before 429. */
  uncountedPerMinute: number;
  metrics: Metrics;
}

/**
 * The windows every metered request is counted in (DESIGN 3.2): the UTC minute and the UTC day, listed
 * in the order the draft headers give them, each with where a key's and a plan's limit for it lives.
 */
const REQUEST_WINDOWS = [
  {
    name: "minute",
    durationMs: 60_000,
    ofKey: (l: RequestLimits) => l.perMinute,
    ofPlan: (p: Plan) => p.requestsPerMinute,
  },
  {
    name: "day",
    durationMs: 86_400_000,
    ofKey: (l: RequestLimits) => l.perDay,
    ofPlan: (p: Plan) => p.requestsPerDay,
  },
] as const;

export type RequestWindowName = (typeof REQUEST_WINDOWS)[number]["name"];

/** A key's request windows, with its limits, as the limiter takes them. */
export function requestWindows(limits: RequestLimits, only?: RequestWindowName): RateWindow[] {
  return REQUEST_WINDOWS.filter((w) => only === undefined || w.name === only).map((w) => ({
    name: w.name,
    durationMs: w.durationMs,
    limit: w.ofKey(limits),
  }));
}

/** The window answers name (`minute` or `day`) for a decision over the request windows. */
function requestWindowOf(name: string): (typeof REQUEST_WINDOWS)[number] {
  const w = REQUEST_WINDOWS.find((r) => r.name === name);
  if (!w) throw new Error(`not a request window: ${name}`);
  return w;
}

/** The decision `base` with the states of `update`'s windows in place of its own (same names). */
export function withStates(base: LimitDecision, update: LimitDecision): LimitDecision {
  return {
    admitted: update.admitted,
    rejectedBy: update.rejectedBy,
    windows: base.windows.map((w) => update.windows.find((u) => u.name === w.name) ?? w),
  };
}

function remaining(w: WindowState): number {
  return w.limit === null ? 0 : Math.max(0, w.limit - w.used);
}

/**
 * The quota the IETF draft's fields give a window without a limit. The draft has no way to say
 * "unlimited" (its q is a required Integer), so the window is described by the largest Integer a
 * structured field holds (RFC 9651, 3.3.1): a quota no client can reach within a day, which a client
 * following the draft reads correctly as "never throttled by this window".
 */
export const NO_LIMIT_QUOTA = 999_999_999_999_999;

/**
 * The IETF draft's policy field: one item per window, each always (docs/plans-and-limits.md). It
 * depends on the windows alone, so the metering hook makes it once per key record.
 */
function ratePolicy(windows: readonly { name: string; durationMs: number; limit: number | null }[]): string {
  return windows.map((w) => `"${w.name}";q=${w.limit ?? NO_LIMIT_QUOTA};w=${w.durationMs / 1000}`).join(", ");
}

/** The IETF draft's state field: what each window has left and when it resets. */
function rateState(d: LimitDecision, nowMs: number): string {
  // Written out rather than mapped and joined: every metered answer carries it.
  let state = "";
  for (const w of d.windows) {
    const left = Math.max(0, (w.limit ?? NO_LIMIT_QUOTA) - w.used);
    state += `${state === "" ? "" : ", "}"${w.name}";r=${left};t=${secondsUntil(w.resetAt, nowMs)}`;
  }
  return state;
}

/**
 * The headers every answer to a valid key carries (DESIGN 3.1). `policy` is ratePolicy of the
 * decision's windows, when the caller has it made already.
 */
export function rateLimitHeaders(
  plan: PlanName,
  d: LimitDecision,
  nowMs: number,
  policy = ratePolicy(d.windows),
): Record<string, string> {
  const day = stateOf(d, "day");
  const daily = day.limit === null ? "unlimited" : null;
  return {
    "x-ratelimit-limit": daily ?? String(day.limit),
    "x-ratelimit-remaining": daily ?? String(remaining(day)),
    "x-ratelimit-reset": String(day.resetAt),
    "x-tier": plan,
    "ratelimit-policy": policy,
    ratelimit: rateState(d, nowMs),
  };
}

function nextPlan(plan: PlanName): PlanName | null {
  return PLAN_NAMES[PLAN_NAMES.indexOf(plan) + 1] ?? null;
}

/** 429 for a key over one of its windows; the daily message suggests an upgrade (spec 7.1). */
function rateLimitExceeded(plans: Plans, key: ApiKeyRecord, d: LimitDecision, nowMs: number): ApiError {
  const window = d.rejectedBy ?? "minute";
  const state = stateOf(d, window);
  const retryAfter = secondsUntil(state.resetAt, nowMs);
  const upgrade = nextPlan(key.plan);
  const upgradeLimit = (name: PlanName) => requestWindowOf(window).ofPlan(plans[name]) ?? "unlimited";
  const suggestion = upgrade
    ? `upgrade to ${upgrade} for ${upgradeLimit(upgrade)} requests per ${window}`
    : "ask us to raise your key's limit";
  const message =
    window === "day"
      ? `Daily request limit exceeded: the ${key.plan} plan allows ${state.limit} requests per day. ` +
        `It resets at ${isoSeconds(state.resetAt)} (00:00 UTC); ${suggestion}.`
      : `Rate limit exceeded: the ${key.plan} plan allows ${state.limit} requests per minute. ` +
        `Retry after ${retryAfter} s, or ${suggestion}.`;
  return new ApiError(
    "RATE_LIMIT_EXCEEDED",
    message,
    { window, limit: state.limit, reset_at: isoSeconds(state.resetAt), retry_after: retryAfter },
    { "retry-after": String(retryAfter) },
  );
}

/** A request counted: the decision and the limit headers its answer carries. */
export interface Taken {
  decision: LimitDecision;
  headers: Record<string, string>;
}

/** How a key's requests are counted: its limiter subject, its windows and their policy field. */
interface CountedAs {
  subject: string;
  windows: RateWindow[];
  policy: string;
}

/** A decision on `key`'s request with the limit headers its answer carries. */
function takenAs(key: ApiKeyRecord, counted: CountedAs, decision: LimitDecision, nowMs: number): Taken {
  return { decision, headers: rateLimitHeaders(key.plan, decision, nowMs, counted.policy) };
}

/**
 * Authentication and counting for /v1 (DESIGN 3.2), as one onRequest hook: authenticate, throttle
 * the addresses that keep failing (failures only), count in both windows (or only look, and cap in
 * a window of their own, for unmetered routes), put the limit headers on the reply before anything can fail,
 * and refuse with 429 when a window is full.
 */
export class Metering {
  private readonly options: MeteringOptions;
  /** Addresses refused for failed authentications, until the Unix ms their minute ends. */
  private readonly blockedUntil = new Map<string, number>();
  /**
   * A key's windows and limiter subject, made once per key record (KeyService hands out the same
   * record while it keeps it) rather than once per request.
   */
  private readonly counted = new WeakMap<ApiKeyRecord, CountedAs>();

  constructor(options: MeteringOptions) {
    this.options = options;
  }

  readonly onRequest = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const { keys, limiter, plans, clock } = this.options;
    const nowMs = Math.floor(clock.nowMicros() / 1000);
    // A valid key is served whatever its address did: only failures are throttled (issue 21), so a
    // guesser sharing an address (a NAT, a proxy) locks out nobody but itself.
    const key = await keys.authenticate(presentedKey(req.headers));
    if (!key) {
      this.throwIfBlocked(req.ip, nowMs);
      return this.authenticationFailed(req.ip, nowMs);
    }
    req.apiKey = key;

    const metered = req.routeOptions.config.metered !== false;
    if (!metered) {
      const { subject, windows, policy } = this.countedAs(key);
      const decision = await limiter.peek(subject, windows, nowMs);
      reply.headers(rateLimitHeaders(key.plan, decision, nowMs, policy));
      req.limitDecision = decision;
      return this.takeUncounted(key, nowMs);
    }
    const { decision, headers } = await this.take(key, nowMs);
    reply.headers(headers);
    req.limitDecision = decision;
    this.report(decision);
    if (!decision.admitted) throw rateLimitExceeded(plans, key, decision, nowMs);
  };

  /**
   * Counts one request of `key` in its windows (a refused one counts nowhere, limiter.ts): the
   * decision and the limit headers its answer carries. The caller reports it with report().
   */
  async take(key: ApiKeyRecord, nowMs: number): Promise<Taken> {
    const counted = this.countedAs(key);
    const decision = await this.options.limiter.limit(counted.subject, counted.windows, 1, nowMs);
    return takenAs(key, counted, decision, nowMs);
  }

  /** take() decided at once, where the limiter can (RateLimiter.limitNow); else null, counting nothing. */
  takeNow(key: ApiKeyRecord, nowMs: number): Taken | null {
    const { limiter } = this.options;
    if (limiter.limitNow === undefined) return null;
    const counted = this.countedAs(key);
    return takenAs(key, counted, limiter.limitNow(counted.subject, counted.windows, 1, nowMs), nowMs);
  }

  /** A metered request's decision, in the limiter's metrics. */
  report(decision: LimitDecision): void {
    this.count(decision.rejectedBy === null ? "admitted" : `refused_${decision.rejectedBy}`);
  }

  private countedAs(key: ApiKeyRecord): CountedAs {
    let counted = this.counted.get(key);
    if (!counted) {
      const windows = requestWindows(limitsOf(this.options.plans, key));
      counted = { subject: `key:${key.id}`, windows, policy: ratePolicy(windows) };
      this.counted.set(key, counted);
    }
    return counted;
  }

  /**
   * The routes that do not count are still capped per key (docs/plans-and-limits.md): in a window of
   * their own, apart from the plan's, by the same limiter, so replicas share it as they share the plan's.
   */
  private async takeUncounted(key: ApiKeyRecord, nowMs: number): Promise<void> {
    const perMinute = this.options.uncountedPerMinute;
    const window = { name: "minute", durationMs: 60_000, limit: perMinute };
    const taken = await this.options.limiter.limit(`uncounted:${key.id}`, [window], 1, nowMs);
    if (taken.admitted) return;
    this.count("refused_uncounted");
    const retryAfter = secondsUntil(stateOf(taken, "minute").resetAt, nowMs);
    throw new ApiError(
      "RATE_LIMIT_EXCEEDED",
      `Too many requests to /v1/account and /v1/backtest-ai/quota: a key may make ${perMinute} a minute; retry after ${retryAfter} s.`,
      { window: "minute", reason: "uncounted_requests", limit: perMinute, retry_after: retryAfter },
      { "retry-after": String(retryAfter) },
    );
  }

  private count(result: string): void {
    const { limiter, metrics } = this.options;
    metrics.limiterDecisions.inc({ result, limiter: limiter.degraded ? "fallback" : limiter.kind });
  }

  private throwIfBlocked(ip: string, nowMs: number): void {
    const until = this.blockedUntil.get(ip);
    if (until === undefined) return;
    if (nowMs < until) {
      this.count("auth_throttled");
      throw this.tooManyFailures(until, nowMs);
    }
    this.blockedUntil.delete(ip);
  }

  /** Counts the failure against the address; past the limit the address is refused until its minute ends. */
  private async authenticationFailed(ip: string, nowMs: number): Promise<never> {
    const { limiter, authFailuresPerMinute } = this.options;
    const windows = requestWindows({ perMinute: authFailuresPerMinute, perDay: null }, "minute");
    const decision = await limiter.limit(`auth:${ip}`, windows, 1, nowMs);
    this.count(decision.admitted ? "auth_failure" : "auth_throttled");
    if (decision.admitted) throw unauthorized();
    const until = stateOf(decision, "minute").resetAt * 1000;
    if (this.blockedUntil.size >= 10_000) this.forgetExpired(nowMs);
    this.blockedUntil.set(ip, until);
    throw this.tooManyFailures(until, nowMs);
  }

  /** Keeps the map to the addresses blocked now, under a flood of many. */
  private forgetExpired(nowMs: number): void {
    for (const [ip, until] of this.blockedUntil) if (until <= nowMs) this.blockedUntil.delete(ip);
  }

  private tooManyFailures(untilMs: number, nowMs: number): ApiError {
    const retryAfter = secondsUntil(untilMs / 1000, nowMs);
    return new ApiError(
      "RATE_LIMIT_EXCEEDED",
      `Too many failed authentication attempts from this address; retry after ${retryAfter} s.`,
      { window: "minute", reason: "authentication_failures", retry_after: retryAfter },
      { "retry-after": String(retryAfter) },
    );
  }
}
