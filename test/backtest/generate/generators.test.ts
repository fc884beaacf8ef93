import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  checkDefinition,
  type Condition,
  DEFINITION_SCHEMA,
  type StrategyDefinition,
} from "../../../src/backtest/definition.ts";
import { GenerationError } from "../../../src/backtest/generate/generator.ts";
import { OfflineGenerator, PHRASINGS } from "../../../src/backtest/generate/offline.ts";
import { answerSchema } from "../../../src/backtest/generate/openai.ts";
import { PRESET_NAMES, presetDefinition } from "../../../src/backtest/generate/presets.ts";
import { makeTestApp, type TestApp } from "../../helpers/app.ts";
import { ROOT } from "../../helpers/paths.ts";

const offline = new OfflineGenerator();
const generate = async (prompt: string) => (await offline.generate(prompt)).definition;

describe("the built-in generator", () => {
  test("twenty varied prompts give valid definitions, the same prompt the same one", async () => {
    const cases: [string, (d: StrategyDefinition) => void][] = [
      [
        "Buy UP when price_up < 0.4 and sell when price_up > 0.6",
        (d) => {
          assert.deepEqual(d.entry, [{ feature: "price_up", op: "<", value: 0.4 }]);
          assert.deepEqual(d.exit.conditions, [{ feature: "price_up", op: ">", value: 0.6 }]);
        },
      ],
      [
        "buy down below 35c and hold to resolution",
        (d) => {
          assert.deepEqual([d.side, d.exit.hold_to_resolution], ["DOWN", true]);
        },
      ],
      [
        "bet on down when bitcoin is down 15 bps, stop loss 20%",
        (d) => {
          assert.deepEqual(d.entry, [{ feature: "coin_return_bps", op: "<=", value: -15 }]);
          assert.equal(d.exit.stop_loss_pct, 20);
        },
      ],
      [
        "buy up in the last 2 minutes when the up price is under 45c",
        (d) => {
          assert.deepEqual(
            d.entry.map((c) => (c as Condition).feature),
            ["remaining_s", "price_up"],
          );
        },
      ],
      [
        "buy down in the first 60 seconds when the down price is below 0.5, exit after 30 seconds",
        (d) => {
          assert.deepEqual([(d.entry[0] as Condition).value, d.exit.time_limit_s], [60, 30]);
        },
      ],
      [
        "buy up when the spread is under 2 cents and book imbalance is above 0.3",
        (d) => {
          assert.deepEqual(d.entry, [
            { feature: "spread_up", op: "<", value: 0.02 },
            { feature: "book_imbalance_up", op: ">", value: 0.3 },
          ]);
        },
      ],
      [
        "buy up when bid depth is above 500 shares within 3 ticks",
        (d) => {
          assert.deepEqual(d.entry, [{ feature: "depth_bid_up_3", op: ">", value: 500 }]);
        },
      ],
      [
        "buy up when the up price crosses above 0.55, take profit at 15%",
        (d) => {
          assert.equal((d.entry[0] as Condition).op, "crosses_above");
        },
      ],
      [
        "buy down when the down price crosses below the up price",
        (d) => {
          assert.deepEqual(d.entry, [{ feature: "price_down", op: "crosses_below", value: "price_up" }]);
        },
      ],
      ["buy 50 shares of up when the up price is below 0.4", (d) => assert.equal(d.position_size, 50)],
      [
        "buy up below 0.45 with a limit order 1 cent below the bid",
        (d) => {
          assert.deepEqual(
            [d.order_type, d.limit_price],
            ["LIMIT", { reference: "best_bid", offset: -0.01 }],
          );
        },
      ],
      [
        "buy up below 0.5, pay at most 52c, 500 ms latency",
        (d) => {
          assert.deepEqual([d.max_fill_price, d.latency_ms], [0.52, 500]);
        },
      ],
      [
        "buy up below 0.4, up to 3 entries per market, max loss 25%",
        (d) => {
          assert.deepEqual([d.max_entries_per_market, d.max_loss_percent], [3, 25]);
        },
      ],
      ["mean reversion", (d) => assert.equal(d.name, "Mean reversion")],
      [
        "momentum entry on down",
        (d) => {
          assert.deepEqual([d.side, (d.entry[0] as Condition).feature], ["DOWN", "price_down"]);
        },
      ],
      [
        "dip buying, 20 shares, no latency",
        (d) => assert.deepEqual([d.position_size, d.latency_ms], [20, 0]),
      ],
      [
        "quick scalp with market orders",
        (d) => assert.deepEqual([d.order_type, d.limit_price], ["MARKET", null]),
      ],
      [
        "buy up with at least 3 minutes left when the btc price is above 65000",
        (d) => {
          assert.deepEqual(d.entry, [
            { feature: "remaining_s", op: ">=", value: 180 },
            { feature: "coin_price", op: ">", value: 65000 },
          ]);
        },
      ],
      [
        'buy up after 2 minutes when it is below 40%, called "patient"',
        (d) => {
          assert.deepEqual([d.name, (d.entry[1] as Condition).value], ["patient", 0.4]);
        },
      ],
      [
        "I want to buy DOWN on btc 5m markets when the coin rose 10 bps; sell when the ask is above 0.7",
        (d) => {
          assert.deepEqual(d.entry, [{ feature: "coin_return_bps", op: ">=", value: 10 }]);
          assert.deepEqual(d.exit.conditions, [{ feature: "best_ask_down", op: ">", value: 0.7 }]);
        },
      ],
    ];
    assert.equal(cases.length, 20);
    for (const [prompt, check] of cases) {
      const first = await offline.generate(prompt);
      assert.deepEqual(first.notes, [], `${prompt}: nothing left out`);
      assert.deepEqual(checkDefinition(first.definition), first.definition, prompt);
      check(first.definition);
      assert.equal(
        JSON.stringify(await generate(prompt)),
        JSON.stringify(first.definition),
        `${prompt}: the same`,
      );
    }
  });

  test("what it cannot read it says: a failure quoting the clause, never a part left out", async () => {
    await assert.rejects(offline.generate("buy up below 0.4 on tuesdays"), (err: unknown) => {
      assert.ok(err instanceof GenerationError);
      assert.deepEqual(err.clauses, ["buy up below 0.4 on tuesdays"]);
      return true;
    });
    await assert.rejects(offline.generate("make me rich"), GenerationError);
    await assert.rejects(offline.generate("when the up price is below 0.4"), /which side to buy/);
  });

  test("the four presets are valid definitions", () => {
    assert.deepEqual(PRESET_NAMES, ["mean_reversion", "dip_buying", "momentum_entry", "quick_scalp"]);
    for (const name of PRESET_NAMES) checkDefinition(presetDefinition(name));
  });

  test("docs/backtests.md lists every phrasing with its example, and every example generates", async () => {
    const doc = readFileSync(join(ROOT, "docs", "backtests.md"), "utf8");
    assert.ok(PHRASINGS.length >= 20, `${PHRASINGS.length} phrasings`);
    for (const p of PHRASINGS) {
      assert.ok(doc.includes(p.doc.replaceAll("|", "\\|")), `the phrasing ${p.doc}`);
      assert.ok(doc.includes(p.example), `the example ${p.example}`);
      const g = await offline.generate(p.example);
      assert.deepEqual(g.notes, [], p.example);
    }
  });
});

/** The prompt the provider tests send, and the clauses a good answer quotes from it. */
const DIP_PROMPT = "buy the dip on up, take profit at 20% and stop loss at 25%";
const DIP_CLAUSES = [
  { text: "buy the dip on up", parts: ["/side", "/entry/0", "/entry/1", "/entry/2"] },
  { text: "take profit at 20%", parts: ["/exit/take_profit_pct"] },
  { text: "stop loss at 25%", parts: ["/exit/stop_loss_pct"] },
];

type Mode =
  | "good"
  | "malformed"
  | "off-schema"
  | "hang"
  | "error"
  | "no-clauses"
  | "unquoted"
  | "unexpressed"
  | "uncovered"
  | "unasked";

/** A local server playing an OpenAI-compatible chat-completions endpoint, answering as told. */
class FakeModel {
  mode: Mode = "good";
  readonly requests: { headers: IncomingMessage["headers"]; body: Record<string, unknown> }[] = [];
  private readonly hanging: ServerResponse[] = [];
  private server: Server | null = null;
  url = "";

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let text = "";
      req.on("data", (chunk: Buffer) => (text += chunk.toString()));
      req.on("end", () => {
        this.requests.push({ headers: req.headers, body: JSON.parse(text) as Record<string, unknown> });
        this.answer(res);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/v1`;
  }

  /** The answer's content for the mode: the definition and its clauses, or something wrong. */
  private content(): string {
    const good = { ...presetDefinition("dip_buying"), name: "From the model" };
    const clauses = DIP_CLAUSES;
    switch (this.mode) {
      case "malformed":
        return "Sure! Here is your strategy: {side: UP";
      case "off-schema":
        return JSON.stringify({
          definition: { ...good, entry: [{ feature: "price_up", op: "below", value: 0.4 }] },
          clauses,
        });
      case "no-clauses":
        return JSON.stringify(good);
      case "unquoted":
        return JSON.stringify({
          definition: good,
          clauses: [...clauses, { text: "on tuesdays", parts: [] }],
        });
      case "unexpressed":
        // The model says it could not express the stop loss (and leaves it out).
        return JSON.stringify({
          definition: { ...good, exit: { ...good.exit, stop_loss_pct: null } },
          clauses: [clauses[0], clauses[1], { text: "stop loss at 25%", parts: [] }],
        });
      case "uncovered":
        return JSON.stringify({
          definition: { ...good, exit: { ...good.exit, stop_loss_pct: null } },
          clauses: clauses.slice(0, 2),
        });
      case "unasked":
        return JSON.stringify({ definition: { ...good, max_loss_percent: 30 }, clauses });
      default:
        return JSON.stringify({ definition: good, clauses });
    }
  }

  private answer(res: ServerResponse): void {
    if (this.mode === "hang") {
      this.hanging.push(res);
      return;
    }
    if (this.mode === "error") {
      res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"overloaded"}}');
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content: this.content() } }] }),
    );
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

describe("an OpenAI-compatible provider (LLM_BASE_URL) against a local fake", () => {
  const model = new FakeModel();
  const llm = (timeoutMs: number) => ({ baseUrl: model.url, apiKey: "sk-test", model: "fake-1", timeoutMs });
  let t: TestApp;
  /** The same app with a short timeout, for the model that never answers. */
  let impatient: TestApp;
  before(async () => {
    await model.start();
    // The fake answers at once, but a loaded machine can take longer than any short timeout to pass the
    // answer along: the cases that answer must not race a timer, so theirs is far beyond any run.
    t = await makeTestApp({ seed: false, config: { llm: llm(600_000) } });
    // A model that never answers times out however fast or slow the machine is.
    impatient = await makeTestApp({ seed: false, config: { llm: llm(300) } });
  });
  after(async () => {
    await impatient.close();
    await t.close();
    await model.stop();
  });
  const generateVia = (key: string, at: TestApp = t) =>
    at.app.inject({
      method: "POST",
      url: "/v1/backtest-ai/generate",
      payload: { prompt: DIP_PROMPT },
      headers: { "x-api-key": key },
    });
  const used = async (key: string, at: TestApp = t) =>
    (await at.get("/v1/backtest-ai/quota", { "x-api-key": key })).json().used;

  test("a good answer: the model's definition, asked for under the definition's schema", async () => {
    model.mode = "good";
    const res = await generateVia(t.key);
    assert.equal(res.statusCode, 200);
    const strategy = res.json().strategy;
    assert.deepEqual(
      [strategy.generator, strategy.model, strategy.definition.name],
      ["openai-compatible", "fake-1", "From the model"],
    );
    const asked = model.requests.at(-1);
    assert.equal(asked?.headers.authorization, "Bearer sk-test");
    assert.equal(asked?.body.model, "fake-1");
    const { $id: _id, ...schema } = JSON.parse(JSON.stringify(DEFINITION_SCHEMA)) as Record<string, unknown>;
    const format = asked?.body.response_format as {
      type: string;
      json_schema: {
        name: string;
        strict: boolean;
        schema: { required: string[]; properties: Record<string, unknown> };
      };
    };
    assert.deepEqual(
      [format.type, format.json_schema.name, format.json_schema.strict],
      ["json_schema", "strategy_definition", true],
    );
    assert.deepEqual(format.json_schema.schema, answerSchema());
    assert.deepEqual(format.json_schema.schema.required, ["definition", "clauses"]);
    // The definition's own schema.
    assert.deepEqual(format.json_schema.schema.properties.definition, schema);
    // Which clause became which part, as the model said, in the notes.
    assert.deepEqual(strategy.notes, [
      '"buy the dip on up" became /side, /entry/0, /entry/1, /entry/2',
      '"take profit at 20%" became /exit/take_profit_pct',
      '"stop loss at 25%" became /exit/stop_loss_pct',
    ]);
    assert.match(strategy.definition_text, /^"From the model" \(definition version 2\)\nBuy Up: 100 shares/);
    assert.equal(await used(t.key), 1);
  });

  test("an answer that does not account for every clause: 422 quoting it, nothing charged", async () => {
    const key = await t.keyFor("pro");
    const failures: [Mode, RegExp, string[]][] = [
      ["no-clauses", /holds no clauses/, []],
      ["unquoted", /quoted "on tuesdays", which is not in the prompt/, []],
      ["unexpressed", /Not understood.*"stop loss at 25%"/, ["stop loss at 25%"]],
      ["uncovered", /Not understood.*"and stop loss at 25%"/, ["and stop loss at 25%"]],
      ["unasked", /holds \/max_loss_percent, which no clause of the prompt asked for/, []],
    ];
    for (const [mode, reason, clauses] of failures) {
      model.mode = mode;
      const res = await generateVia(key);
      assert.equal(res.statusCode, 422, mode);
      const error = res.json().error;
      assert.equal(error.code, "GENERATION_FAILED");
      assert.match(error.details.reason, reason, mode);
      assert.deepEqual(error.details.clauses, clauses, mode);
      assert.equal(error.details.charged, false);
      assert.equal(await used(key), 0, `${mode}: nothing charged`);
    }
  });

  test("malformed JSON, a schema-failing definition, a timeout and a 500: each 422, each refunded", async () => {
    const key = await t.keyFor("pro");
    const slowKey = await impatient.keyFor("pro");
    const failures: [Mode, RegExp, TestApp, string][] = [
      ["malformed", /answer is not JSON/, t, key],
      ["off-schema", /breaks the schema: \/entry\/0\/op must be one of/, t, key],
      ["hang", /did not answer within 300 ms/, impatient, slowKey],
      ["error", /answered 500/, t, key],
    ];
    for (const [mode, reason, at, k] of failures) {
      model.mode = mode;
      const res = await generateVia(k, at);
      assert.equal(res.statusCode, 422, mode);
      assert.equal(res.json().error.code, "GENERATION_FAILED");
      assert.match(res.json().error.details.reason, reason);
      assert.equal(await used(k, at), 0, `${mode}: nothing charged`);
    }
    model.mode = "good";
    assert.equal((await generateVia(key)).statusCode, 200);
    assert.equal(await used(key), 1);
  });

  test("presets never ask the model", async () => {
    const before = model.requests.length;
    const res = await t.app.inject({
      method: "POST",
      url: "/v1/backtest-ai/generate",
      payload: { preset: "quick_scalp" },
      headers: { "x-api-key": t.key },
    });
    assert.equal(res.json().strategy.generator, "offline");
    assert.equal(model.requests.length, before);
  });
});
