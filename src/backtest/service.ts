import { createHash, randomUUID } from "node:crypto";
import type { HiddenSeries } from "../access/market-access.ts";
import type { QuotaService, QuotaStatus } from "../access/quota.ts";
import type { ApiKeyRecord } from "../domain/api-key.ts";
import type { Coin } from "../domain/market.ts";
import type { Clock } from "../domain/time.ts";
import type { StoredMarket } from "../store/ports/market-store.ts";
import type { Busy, NewRun, RunLimits, RunRecord, StrategyRecord } from "../store/ports/backtest-store.ts";
import type { Store } from "../store/ports/store.ts";
import {
  DEFINITION_DEFAULTS,
  DefinitionError,
  parseStoredDefinition,
  type StrategyDefinition,
} from "./definition.ts";
import { GenerationError, type GeneratedStrategy, type StrategyGenerator } from "./generate/generator.ts";
import { presetDefinition } from "./generate/presets.ts";
import type { RunScheduler } from "./jobs/scheduler.ts";
import { combinations } from "./sweep.ts";
import { applyOverrides, type BacktestRequest, type Endpoint, readBacktestBody } from "./request.ts";
import type { MarketResult } from "./engine.ts";
import type { LentJson } from "../wire/json-bytes.ts";
import {
  isFinished,
  type RenderedRunAnswer,
  renderComparedRun,
  renderRunAnswer,
  storedResult,
  type ResultsPage,
  type StoredSelection,
  strategyToWire,
  tradeLinesPage,
} from "./wire.ts";

/**
 * The backtest endpoints' work (DESIGN 3.7), between the routes and the store: read the body,
 * generate, charge the quota in the transaction that stores the strategy, create runs under the
 * in-flight limit, hand them to the scheduler and wait for them. What it refuses it says with a
 * BacktestRefusal, which the routes turn into HTTP answers.
 */

/** Markets' results an export reads from the store at a time. */
const EXPORT_PAGE_MARKETS = 10;

/** Markets of a run answer's results page by default: every market a run can have. */
export const DEFAULT_RESULTS_LIMIT = 100;

export type Refusal =
  | { kind: "invalid"; pointer: string; message: string }
  | { kind: "not_included" }
  | { kind: "quota_exhausted"; quota: QuotaStatus }
  | { kind: "busy"; inFlight: number; limit: number; scope: "key" | "account" }
  | { kind: "generation_failed"; reason: string; clauses: string[] }
  | { kind: "not_found"; message: string }
  | { kind: "idempotency_conflict" };

export class BacktestRefusal extends Error {
  readonly refusal: Refusal;
  constructor(refusal: Refusal) {
    super(refusal.kind);
    this.refusal = refusal;
  }
}

export interface Generators {
  /** The built-in generator: presets always, prompts when no provider is configured. */
  offline: StrategyGenerator;
  /** An OpenAI-compatible provider for prompts, when configured. */
  provider: StrategyGenerator | null;
}

export interface BacktestServiceOptions {
  store: Store;
  quota: QuotaService;
  clock: Clock;
  generators: Generators;
  scheduler: RunScheduler;
  coins: readonly Coin[];
  /** Runs a key, and an account, may have queued or running at once (BACKTEST_RUNS_PER_KEY, _PER_ACCOUNT). */
  runLimits: RunLimits;
}

/** Who asks, and how their request may be retried. */
export interface Caller {
  key: ApiKeyRecord;
  idempotencyKey: string | null;
  /** The series the caller's plan hides (runs never replay them). */
  hidden: HiddenSeries[];
}

/**
 * Reads a run's answer (`renderRunAnswer` over the page of its results) somewhere else than this
 * thread; null when it cannot now (the answer is then rendered here), a rejection when it failed.
 */
export type RunAnswerReader = (
  run: RunRecord,
  strategy: StrategyRecord | null,
  page: ResultsPage,
) => Promise<LentJson> | null;

/** A run POST's outcome: finished within `wait` or not, and the answer's bytes. */
export interface RunOutcomeAnswer {
  complete: boolean;
  answer: RenderedRunAnswer;
}

const busyRefusal = (b: Busy): Refusal => ({
  kind: "busy",
  inFlight: b.inFlight,
  limit: b.limit,
  scope: b.scope,
});

/**
 * A prompt generated over a preset (PolyHistorical's `prompt` with `preset`): the preset's definition,
 * with every field the prompt set (any that differs from the definition's default) taken from the prompt.
 */
function overPreset(preset: StrategyDefinition, fromPrompt: StrategyDefinition): StrategyDefinition {
  const out: Record<string, unknown> = { ...preset, exit: { ...preset.exit } };
  const defaults = DEFINITION_DEFAULTS as unknown as Record<string, unknown>;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  for (const [field, value] of Object.entries(fromPrompt)) {
    if (field === "exit") continue;
    if (field === "side" || !same(value, defaults[field])) out[field] = value;
  }
  const exitDefaults = DEFINITION_DEFAULTS.exit as unknown as Record<string, unknown>;
  for (const [field, value] of Object.entries(fromPrompt.exit)) {
    if (!same(value, exitDefaults[field])) (out.exit as Record<string, unknown>)[field] = value;
  }
  return out as unknown as StrategyDefinition;
}

/**
 * The body with every object's keys sorted, recursively: the same fields in another order are the
 * same request (an Idempotency-Key retry may be serialized by another client or library).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const fields = Object.keys(value)
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${fields.join(",")}}`;
  }
  return JSON.stringify(value ?? null);
}

function hashOf(endpoint: Endpoint, body: unknown): string {
  return createHash("sha256")
    .update(`${endpoint}\n${canonicalJson(body)}`)
    .digest("hex");
}

const refuse = (refusal: Refusal): never => {
  throw new BacktestRefusal(refusal);
};

export class BacktestService {
  private readonly o: BacktestServiceOptions;
  readonly limits: RunLimits;
  private answerReader: RunAnswerReader | null = null;

  constructor(options: BacktestServiceOptions) {
    this.o = options;
    this.limits = options.runLimits;
  }

  get scheduler(): RunScheduler {
    return this.o.scheduler;
  }

  private read(endpoint: Endpoint, body: unknown): BacktestRequest {
    try {
      return readBacktestBody(endpoint, body, this.o.coins);
    } catch (err) {
      if (err instanceof DefinitionError)
        return refuse({ kind: "invalid", pointer: err.pointer, message: err.message });
      throw err;
    }
  }

  /** The unit a request would spend, refused at once when the month's quota is already used up. */
  private async chargeFor(caller: Caller) {
    const charge = this.o.quota.chargeOf(caller.key, caller.idempotencyKey);
    if (charge === null) return refuse({ kind: "not_included" });
    const status = await this.o.quota.status(caller.key);
    if (status.limit !== null && status.used >= status.limit)
      refuse({ kind: "quota_exhausted", quota: status });
    return charge;
  }

  private async generated(req: BacktestRequest): Promise<GeneratedStrategy | null> {
    const { source } = req;
    if (source.kind === "preset") {
      const definition = presetDefinition(source.preset) as StrategyDefinition;
      return { definition, generator: this.o.generators.offline.kind, model: null, notes: [] };
    }
    if (source.kind !== "prompt") return null;
    const generator = this.o.generators.provider ?? this.o.generators.offline;
    let made: GeneratedStrategy;
    try {
      made = await generator.generate(source.prompt);
    } catch (err) {
      if (err instanceof GenerationError)
        return refuse({ kind: "generation_failed", reason: err.message, clauses: err.clauses });
      throw err;
    }
    if (source.preset === null) return made;
    return {
      ...made,
      definition: overPreset(presetDefinition(source.preset) as StrategyDefinition, made.definition),
    };
  }

  private strategyRecord(caller: Caller, req: BacktestRequest, hash: string, g: GeneratedStrategy | null) {
    const src = req.source;
    const base = g?.definition ?? (src.kind === "definition" ? src.definition : null);
    if (base === null) throw new Error("a strategy needs a definition");
    const definition = applyOverrides(base, req.overrides, req.name);
    const record: StrategyRecord = {
      id: randomUUID(),
      keyId: caller.key.id,
      name: definition.name,
      definition: JSON.stringify(definition),
      source: src.kind === "prompt" || src.kind === "preset" ? src.kind : "definition",
      prompt: src.kind === "prompt" ? src.prompt : null,
      preset: src.kind === "preset" || src.kind === "prompt" ? src.preset : null,
      generator: g?.generator ?? null,
      model: g?.model ?? null,
      notes: JSON.stringify(g?.notes ?? []),
      createdAt: this.o.clock.nowMicros(),
      chargeId: null,
      idempotencyKey: caller.idempotencyKey,
      requestHash: hash,
    };
    return { record, definition };
  }

  /** `POST /v1/backtest-ai/generate`: a strategy from a prompt or preset, for one unit of the quota. */
  async generate(
    caller: Caller,
    body: unknown,
  ): Promise<{ strategy: ReturnType<typeof strategyToWire>; quota: QuotaStatus }> {
    const req = this.read("generate", body);
    const hash = hashOf("generate", body);
    const earlier = await this.bought(caller, hash);
    if (earlier)
      return { strategy: strategyToWire(earlier.strategy), quota: await this.o.quota.status(caller.key) };
    const charge = await this.chargeFor(caller);
    const { record } = this.strategyRecord(caller, req, hash, await this.generated(req));
    const made = await this.o.store.backtests.createStrategy(record, charge, null, this.limits);
    if (made.status === "exhausted")
      return refuse({ kind: "quota_exhausted", quota: this.status(caller, charge.month, made.used) });
    if (made.status === "busy") throw new Error("generate makes no run");
    if (made.strategy === null || made.strategy.requestHash !== hash)
      return refuse({ kind: "idempotency_conflict" });
    return { strategy: strategyToWire(made.strategy), quota: this.status(caller, charge.month, made.used) };
  }

  private status(caller: Caller, month: string, used: number): QuotaStatus {
    return this.o.quota.statusOf(caller.key, month, used);
  }

  /** What an earlier request with the caller's idempotency key bought; a different request with it is refused. */
  private async bought(caller: Caller, hash: string) {
    if (caller.idempotencyKey === null) return null;
    const earlier = await this.o.store.backtests.boughtWith(caller.key.id, caller.idempotencyKey);
    if (earlier && earlier.strategy.requestHash !== hash) refuse({ kind: "idempotency_conflict" });
    return earlier;
  }

  private newRun(
    caller: Caller,
    req: BacktestRequest,
    definition: StrategyDefinition,
    strategyId: string | null,
    hash: string,
    market: StoredMarket | null = null,
  ): NewRun {
    const m = req.markets;
    let selection: StoredSelection;
    if (market !== null) {
      selection = {
        coin: market.coin,
        market_type: market.marketType,
        market_count: 1,
        start_time: null,
        end_time: null,
        hidden: [],
        slugs: [market.slug],
      };
    } else if (m !== null) {
      selection = {
        coin: m.coin,
        market_type: m.marketType,
        market_count: m.count,
        start_time: m.from,
        end_time: m.to,
        hidden: caller.hidden,
        research: req.research,
      };
    } else {
      throw new Error("a run needs markets");
    }
    return {
      id: randomUUID(),
      keyId: caller.key.id,
      account: caller.key.account,
      strategyId,
      definition: JSON.stringify(definition),
      selection: JSON.stringify(selection),
      createdAt: this.o.clock.nowMicros(),
      runner: this.o.scheduler.runner,
      leaseUntil: this.o.scheduler.leaseUntil(),
      idempotencyKey: caller.idempotencyKey,
      requestHash: hash,
    };
  }

  /** `POST /v1/backtest-ai/strategy`: a strategy (one unit) and its run over the selected markets. */
  async strategy(caller: Caller, body: unknown): Promise<RunOutcomeAnswer> {
    const req = this.read("strategy", body);
    const hash = hashOf("strategy", body);
    const earlier = await this.bought(caller, hash);
    if (earlier?.run) return this.settle(earlier.run, earlier.strategy, req.wait);
    if (earlier) return refuse({ kind: "idempotency_conflict" });
    const charge = await this.chargeFor(caller);
    const { record, definition } = this.strategyRecord(caller, req, hash, await this.generated(req));
    this.checkSweep(definition, req);
    const run = this.newRun(caller, req, definition, record.id, hash);
    const made = await this.o.store.backtests.createStrategy(record, charge, run, this.limits);
    if (made.status === "exhausted")
      return refuse({ kind: "quota_exhausted", quota: this.status(caller, charge.month, made.used) });
    if (made.status === "busy") return refuse(busyRefusal(made));
    if (made.strategy === null || made.run === null || made.strategy.requestHash !== hash) {
      return refuse({ kind: "idempotency_conflict" });
    }
    if (made.status === "created") this.submit(made.run);
    return this.settle(made.run, made.strategy, req.wait);
  }

  /** Hands a run this process created to the scheduler, queued fairly by its account and key. */
  private submit(run: RunRecord): void {
    this.o.scheduler.submit(run.id, { account: run.account ?? run.keyId, keyId: run.keyId });
  }

  /** `POST /v1/backtest-ai/run`: a stored strategy or a definition over the selected markets (no unit). */
  async run(caller: Caller, body: unknown): Promise<RunOutcomeAnswer> {
    const req = this.read("run", body);
    const hash = hashOf("run", body);
    const earlier = await this.earlierRun(caller, hash);
    if (earlier) return this.settle(earlier, await this.strategyOf(caller, earlier), req.wait);
    let strategy: StrategyRecord | null = null;
    let base: StrategyDefinition;
    if (req.source.kind === "stored") {
      strategy = await this.o.store.backtests.getStrategy(caller.key.id, req.source.strategyId);
      if (strategy === null)
        return refuse({ kind: "not_found", message: `No strategy ${req.source.strategyId}.` });
      base = parseStoredDefinition(strategy.definition);
    } else if (req.source.kind === "definition") {
      base = req.source.definition;
    } else {
      throw new Error("run takes a strategy id or a definition");
    }
    const definition = applyOverrides(base, req.overrides, req.name);
    this.checkSweep(definition, req);
    if (req.research.sweep !== null) return this.sweepRun(caller, req, hash, definition);
    const run = this.newRun(caller, req, definition, strategy?.id ?? null, hash);
    const made = await this.o.store.backtests.createRun(run, this.limits);
    if (made.status === "busy") return refuse(busyRefusal(made));
    if (made.status === "created") this.submit(made.run);
    if (made.run.requestHash !== hash) return refuse({ kind: "idempotency_conflict" });
    return this.settle(made.run, strategy ?? (await this.strategyOf(caller, made.run)), req.wait);
  }

  /** The sweep's combinations checked against the definition it varies (400 at `/sweep` when one is refused). */
  private checkSweep(definition: StrategyDefinition, req: BacktestRequest): void {
    if (req.research.sweep === null) return;
    try {
      combinations(definition, req.research.sweep);
    } catch (err) {
      if (err instanceof DefinitionError)
        refuse({ kind: "invalid", pointer: err.pointer, message: err.message });
      throw err;
    }
  }

  /**
   * A sweep on `POST /run`: one generation, whatever its combinations (docs/backtests.md "Sweeps").
   * The swept definition is stored as a strategy (source `definition`) with the charge and the run in
   * one transaction, as `POST /strategy` stores its own; an Idempotency-Key retry replays it.
   */
  private async sweepRun(
    caller: Caller,
    req: BacktestRequest,
    hash: string,
    definition: StrategyDefinition,
  ): Promise<RunOutcomeAnswer> {
    const earlier = await this.bought(caller, hash);
    if (earlier?.run) return this.settle(earlier.run, earlier.strategy, req.wait);
    if (earlier) return refuse({ kind: "idempotency_conflict" });
    const charge = await this.chargeFor(caller);
    const record: StrategyRecord = {
      id: randomUUID(),
      keyId: caller.key.id,
      name: definition.name,
      definition: JSON.stringify(definition),
      source: "definition",
      prompt: null,
      preset: null,
      generator: null,
      model: null,
      notes: "[]",
      createdAt: this.o.clock.nowMicros(),
      chargeId: null,
      idempotencyKey: caller.idempotencyKey,
      requestHash: hash,
    };
    const run = this.newRun(caller, req, definition, record.id, hash);
    const made = await this.o.store.backtests.createStrategy(record, charge, run, this.limits);
    if (made.status === "exhausted")
      return refuse({ kind: "quota_exhausted", quota: this.status(caller, charge.month, made.used) });
    if (made.status === "busy") return refuse(busyRefusal(made));
    if (made.strategy === null || made.run === null || made.strategy.requestHash !== hash) {
      return refuse({ kind: "idempotency_conflict" });
    }
    if (made.status === "created") this.submit(made.run);
    return this.settle(made.run, made.strategy, req.wait);
  }

  private async earlierRun(caller: Caller, hash: string): Promise<RunRecord | null> {
    if (caller.idempotencyKey === null) return null;
    const earlier = await this.o.store.backtests.runByIdempotencyKey(caller.key.id, caller.idempotencyKey);
    if (earlier && earlier.requestHash !== hash) refuse({ kind: "idempotency_conflict" });
    return earlier;
  }

  /** `POST /v1/replay`'s body read: the slug it names, for the route to look the market up. */
  readReplay(body: unknown): BacktestRequest {
    return this.read("replay", body);
  }

  /**
   * `POST /v1/replay` (PolyHistorical's): one resolved market replayed as a run of its own, under the
   * same in-flight limits, spending no generation. Waits up to `wait` seconds for it.
   */
  async replayMarket(caller: Caller, req: BacktestRequest, body: unknown, market: StoredMarket) {
    const hash = hashOf("replay", body);
    const earlier = await this.earlierRun(caller, hash);
    let run = earlier;
    if (run === null) {
      const src = req.source;
      if (src.kind !== "definition") throw new Error("a replay takes a definition");
      const definition = applyOverrides(src.definition, req.overrides, req.name);
      const made = await this.o.store.backtests.createRun(
        this.newRun(caller, req, definition, null, hash, market),
        this.limits,
      );
      if (made.status === "busy") return refuse(busyRefusal(made));
      if (made.status === "created") this.submit(made.run);
      if (made.run.requestHash !== hash) return refuse({ kind: "idempotency_conflict" });
      run = made.run;
    }
    await this.o.scheduler.waitFor(run.id, req.wait * 1000);
    const now = (await this.o.store.backtests.getRun(run.id)) ?? run;
    if (now.status !== "complete") return { run: now, result: null, trades: null };
    const [result] = await this.o.store.backtests.listResults(now.id, 1, 0);
    const trades = await this.o.store.backtests.marketTrades(now.id, market.slug);
    return { run: now, result: result ?? null, trades };
  }

  private strategyOf(caller: Caller, run: RunRecord): Promise<StrategyRecord | null> {
    return run.strategyId === null
      ? Promise.resolve(null)
      : this.o.store.backtests.getStrategy(caller.key.id, run.strategyId);
  }

  /** Waits up to `wait` seconds for the run, then answers with it as it stands. */
  private async settle(
    run: RunRecord,
    strategy: StrategyRecord | null,
    wait: number,
  ): Promise<RunOutcomeAnswer> {
    await this.o.scheduler.waitFor(run.id, wait * 1000);
    const now = (await this.o.store.backtests.getRun(run.id)) ?? run;
    const answer = await this.rendered(now, strategy, DEFAULT_RESULTS_LIMIT, 0);
    return { complete: answer.done, answer };
  }

  /**
   * Reads run answers elsewhere from now on (the server's page reader threads): a run's answer with
   * every market is megabytes of stored results joined and encoded, which would hold up every other
   * request on this thread.
   */
  readAnswersWith(reader: RunAnswerReader): void {
    this.answerReader = reader;
  }

  private async rendered(
    run: RunRecord,
    strategy: StrategyRecord | null,
    limit: number,
    offset: number,
  ): Promise<RenderedRunAnswer> {
    const page: ResultsPage = { total: run.marketsDone, limit, offset };
    const elsewhere = this.answerReader?.(run, strategy, page) ?? null;
    if (elsewhere !== null) {
      try {
        return { runId: run.id, done: isFinished(run), json: await elsewhere };
      } catch {
        // The reader failed or was lost: rendered here, where a store error is raised as any other.
      }
    }
    const results = await this.o.store.backtests.listResults(run.id, limit, offset);
    return renderRunAnswer(run, strategy, results, page);
  }

  private async ownRun(key: ApiKeyRecord, id: string): Promise<RunRecord> {
    const run = await this.o.store.backtests.getRun(id);
    if (run === null || run.keyId !== key.id) return refuse({ kind: "not_found", message: `No run ${id}.` });
    return run;
  }

  /** `GET /v1/backtest-ai/runs/{id}`: the run, with `limit` of its markets' results from `offset`. */
  async getRun(key: ApiKeyRecord, id: string, limit = DEFAULT_RESULTS_LIMIT, offset = 0) {
    const run = await this.ownRun(key, id);
    const strategy =
      run.strategyId === null ? null : await this.o.store.backtests.getStrategy(key.id, run.strategyId);
    return this.rendered(run, strategy, limit, offset);
  }

  /** `GET /v1/backtest-ai/runs/{id}/markets/{slug}/trades`: a page of one market's trades, as the worker rendered them. */
  async marketTrades(key: ApiKeyRecord, id: string, slug: string, limit: number, offset: number) {
    const run = await this.ownRun(key, id);
    const lines = await this.o.store.backtests.marketTrades(run.id, slug);
    if (lines === null) return refuse({ kind: "not_found", message: `Run ${id} has no result for ${slug}.` });
    const { items, total } = tradeLinesPage(lines, limit, offset);
    const head = JSON.stringify({ run_id: run.id, slug, total, limit, offset });
    return `${head.slice(0, -1)},"trades":[${items}]}`;
  }

  /** A run's per-market results, read a page of RESULTS_PAGE markets at a time (the exports). */
  async *runResults(run: RunRecord): AsyncGenerator<MarketResult[]> {
    const positionSize = parseStoredDefinition(run.definition).position_size;
    for (let offset = 0; ; offset += EXPORT_PAGE_MARKETS) {
      const page = await this.o.store.backtests.listResults(run.id, EXPORT_PAGE_MARKETS, offset);
      if (page.length > 0) yield page.map((text) => storedResult(text, positionSize));
      if (page.length < EXPORT_PAGE_MARKETS) return;
    }
  }

  /** The key's run (404 for another key's, as `GET /runs/{id}`), for the exports. */
  exportedRun(key: ApiKeyRecord, id: string): Promise<RunRecord> {
    return this.ownRun(key, id);
  }

  /** `GET /v1/backtest-ai/runs/{id}/definition`: the definition the run replayed, as JSON. */
  async runDefinition(key: ApiKeyRecord, id: string): Promise<string> {
    const run = await this.ownRun(key, id);
    return JSON.stringify(parseStoredDefinition(run.definition), null, 2);
  }

  /** `GET /v1/backtest-ai/runs?ids=`: the key's runs side by side, in the order asked; 404 naming the first not the key's. */
  async compareRuns(key: ApiKeyRecord, ids: readonly string[]): Promise<string> {
    const runs = [];
    for (const id of ids) runs.push(renderComparedRun(await this.ownRun(key, id)));
    return `{"runs":[${runs.join(",")}]}`;
  }

  async getStrategy(key: ApiKeyRecord, id: string) {
    const strategy = await this.o.store.backtests.getStrategy(key.id, id);
    if (strategy === null) return refuse({ kind: "not_found", message: `No strategy ${id}.` });
    return strategyToWire(strategy);
  }

  async listStrategies(key: ApiKeyRecord, limit: number, offset: number) {
    const { strategies, total } = await this.o.store.backtests.listStrategies(key.id, limit, offset);
    return { strategies: strategies.map(strategyToWire), total, limit, offset };
  }
}
