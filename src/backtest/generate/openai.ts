import {
  checkDefinition,
  DEFINITION_DEFAULTS,
  DEFINITION_SCHEMA,
  DefinitionError,
  type StrategyDefinition,
} from "../definition.ts";
import { type GeneratedStrategy, GenerationError, type StrategyGenerator } from "./generator.ts";
import { leftover } from "./offline.ts";

/**
 * An OpenAI-compatible chat-completions endpoint as a generator (DESIGN 3.7): `LLM_BASE_URL` (the API
 * root, e.g. https://api.openai.com/v1), `LLM_API_KEY`, `LLM_MODEL`. The answer is constrained by a
 * JSON schema (`response_format` json_schema, strict): the definition, and the prompt's clauses each
 * with the parts of the definition it became. Both are checked here as the built-in generator's
 * reading is (docs/backtests.md, "Honest generation"): the definition against its schema; every clause
 * quoted word for word from the prompt; every clause became a part the definition holds; the clauses
 * cover the whole prompt but filler words; every part of the definition came from a clause. Anything
 * else (no answer in time, an error status, text that is not JSON, a check failing) is a
 * GenerationError saying which, quoting the clauses not made part of the definition.
 */

export interface LlmSettings {
  baseUrl: string;
  apiKey: string | null;
  model: string;
  timeoutMs: number;
}

/** The definition's schema as sent: without `$id`, which strict structured output does not take. */
function definitionSchema(): Record<string, unknown> {
  const { $id: _id, ...schema } = JSON.parse(JSON.stringify(DEFINITION_SCHEMA)) as Record<string, unknown>;
  return schema;
}

/** What the model answers: the definition, and which clause of the prompt became which part of it. */
export function answerSchema(): Record<string, unknown> {
  return {
    type: "object",
    additionalProperties: false,
    required: ["definition", "clauses"],
    properties: {
      definition: definitionSchema(),
      clauses: {
        type: "array",
        description: "Every clause of the prompt, in order, each copied word for word",
        items: {
          type: "object",
          additionalProperties: false,
          required: ["text", "parts"],
          properties: {
            text: { type: "string", description: "The clause, copied word for word from the prompt" },
            parts: {
              type: "array",
              items: { type: "string" },
              description:
                "JSON pointers of the parts of the definition this clause became (/side, /entry/0, " +
                "/exit/take_profit_pct, ...); [] when the definition cannot express it",
            },
          },
        },
      },
    },
  };
}

const INSTRUCTIONS = [
  "You turn a trader's description of a strategy into a backtest definition for Polymarket's crypto",
  '"Up or Down" markets: each market pays 1 USDC a share to the winning outcome token (Up if the coin',
  "ends at or above its start price, else Down). Prices are probabilities from 0 to 1. Answer only with",
  "a JSON object following the given schema. definition.version is 2. side is the token bought. entry",
  "conditions must all hold to enter; exit conditions close the position when any holds; a condition may",
  "be a group {all: [...]}, {any: [...]} or {not: ...}. Use null for what the trader does not ask for, []",
  "for no conditions, MARKET orders unless a limit order is asked for, position_size 100 and",
  "max_entries_per_market 1 unless told otherwise. In clauses, copy every clause of the prompt word for",
  "word, and give the JSON pointers of the parts of the definition it became. Never guess: a clause the",
  "definition cannot express exactly (for instance one that needs the market's outcome, or a feature",
  "the schema does not have) gets parts [], and nothing is put in the definition that no clause asked for.",
].join(" ");

interface ModelClause {
  text: string;
  parts: string[];
}

/** The value at a JSON pointer, or undefined. */
function at(value: unknown, pointer: string): unknown {
  if (pointer === "") return value;
  if (!pointer.startsWith("/")) return undefined;
  let here: unknown = value;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (typeof here !== "object" || here === null || !Object.hasOwn(here, key)) return undefined;
    here = (here as Record<string, unknown>)[key];
  }
  return here;
}

/** The parts of a definition that a clause must have asked for: what differs from a bare definition. */
function partsOf(d: StrategyDefinition): string[] {
  const parts = ["/side"];
  d.entry.forEach((_, i) => parts.push(`/entry/${i}`));
  d.exit.conditions.forEach((_, i) => parts.push(`/exit/conditions/${i}`));
  for (const key of ["take_profit_pct", "stop_loss_pct", "time_limit_s"] as const) {
    if (d.exit[key] !== null) parts.push(`/exit/${key}`);
  }
  if (d.exit.hold_to_resolution) parts.push("/exit/hold_to_resolution");
  for (const key of Object.keys(DEFINITION_DEFAULTS) as (keyof typeof DEFINITION_DEFAULTS)[]) {
    if (["version", "name", "entry", "exit", "limit_price"].includes(key)) continue;
    if (JSON.stringify(d[key]) !== JSON.stringify(DEFINITION_DEFAULTS[key])) parts.push(`/${key}`);
  }
  return parts;
}

const squeeze = (text: string) => text.replace(/\s+/g, " ").trim();

/**
 * The honesty check of a model's answer (DESIGN 3.7): throws a GenerationError quoting each clause
 * that did not become part of the definition; returns the notes saying which clause became what.
 */
export function checkClauses(prompt: string, d: StrategyDefinition, clauses: ModelClause[]): string[] {
  const text = squeeze(prompt);
  const lower = text.toLowerCase();
  const covered = new Array<boolean>(text.length).fill(false);
  const unread: string[] = [];
  const claimed: string[] = [];
  for (const c of clauses) {
    const quote = squeeze(c.text);
    const start = quote === "" ? -1 : lower.indexOf(quote.toLowerCase());
    if (start < 0) {
      throw new GenerationError(
        `The model quoted ${JSON.stringify(c.text.slice(0, 200))}, which is not in the prompt.`,
      );
    }
    covered.fill(true, start, start + quote.length);
    const held = c.parts.filter((p) => at(d, p) !== undefined && at(d, p) !== null);
    if (c.parts.length === 0 || held.length < c.parts.length)
      unread.push(text.slice(start, start + quote.length));
    claimed.push(...held);
  }
  // What no clause quoted: runs of the prompt's text left uncovered, kept when more than filler.
  let run = "";
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && !covered[i]) {
      run += text[i];
      continue;
    }
    const fragment = run.trim().replace(/^[,;.!?\s]+|[,;.!?\s]+$/g, "");
    if (fragment !== "" && leftover(fragment.toLowerCase()) !== "") unread.push(fragment);
    run = "";
  }
  if (unread.length > 0) {
    throw new GenerationError(
      `Not understood, so no strategy was made (every clause must become part of it): ${unread.map((u) => JSON.stringify(u)).join("; ")}.`,
      unread,
    );
  }
  const related = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
  const unasked = partsOf(d).filter((part) => !claimed.some((p) => related(p, part)));
  if (unasked.length > 0) {
    throw new GenerationError(
      `The model's definition holds ${unasked.join(", ")}, which no clause of the prompt asked for.`,
    );
  }
  return clauses.map((c) => `${JSON.stringify(squeeze(c.text))} became ${c.parts.join(", ")}`);
}

interface ChatAnswer {
  choices?: { message?: { content?: unknown; refusal?: unknown } }[];
}

export class OpenAiCompatibleGenerator implements StrategyGenerator {
  readonly kind = "openai-compatible";
  private readonly settings: LlmSettings;

  constructor(settings: LlmSettings) {
    this.settings = settings;
  }

  async generate(prompt: string): Promise<GeneratedStrategy> {
    const answer = await this.ask(prompt);
    const content = answer.choices?.[0]?.message;
    if (typeof content?.refusal === "string" && content.refusal !== "") {
      throw new GenerationError(`The model refused: ${content.refusal.slice(0, 300)}`);
    }
    if (typeof content?.content !== "string") {
      throw new GenerationError("The model's answer holds no message content.");
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(content.content);
    } catch {
      throw new GenerationError(
        `The model's answer is not JSON: ${JSON.stringify(content.content.slice(0, 200))}`,
      );
    }
    const reply = parsed as { definition?: unknown; clauses?: unknown };
    if (typeof parsed !== "object" || parsed === null || !Array.isArray(reply.clauses)) {
      throw new GenerationError(
        "The model's answer holds no clauses: which clause became which part is required.",
      );
    }
    const clauses = reply.clauses as unknown[];
    const wellFormed = clauses.every(
      (c): c is ModelClause =>
        typeof c === "object" &&
        c !== null &&
        typeof (c as ModelClause).text === "string" &&
        Array.isArray((c as ModelClause).parts) &&
        (c as ModelClause).parts.every((p) => typeof p === "string"),
    );
    if (!wellFormed) throw new GenerationError("The model's clauses are not {text, parts} objects.");
    let definition: StrategyDefinition;
    try {
      definition = checkDefinition(reply.definition);
    } catch (err) {
      if (err instanceof DefinitionError) {
        throw new GenerationError(`The model's definition breaks the schema: ${err.message}.`);
      }
      throw err;
    }
    const notes = checkClauses(prompt, definition, clauses as ModelClause[]);
    return { definition, generator: this.kind, model: this.settings.model, notes };
  }

  private async ask(prompt: string): Promise<ChatAnswer> {
    const { baseUrl, apiKey, model, timeoutMs } = this.settings;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (apiKey !== null) headers.authorization = `Bearer ${apiKey}`;
    const body = {
      model,
      temperature: 0,
      messages: [
        { role: "system", content: INSTRUCTIONS },
        { role: "user", content: prompt },
      ],
      response_format: {
        type: "json_schema",
        json_schema: { name: "strategy_definition", strict: true, schema: answerSchema() },
      },
    };
    let res: Response;
    try {
      res = await fetch(`${baseUrl.replace(/\/+$/, "")}/chat/completions`, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!res.ok) {
        const text = (await res.text()).slice(0, 200);
        throw new GenerationError(`The model's endpoint answered ${res.status}${text ? `: ${text}` : ""}`);
      }
      return (await res.json()) as ChatAnswer;
    } catch (err) {
      if (err instanceof GenerationError) throw err;
      const name = (err as Error).name;
      if (name === "TimeoutError" || name === "AbortError") {
        throw new GenerationError(`The model did not answer within ${timeoutMs} ms.`);
      }
      if (err instanceof SyntaxError)
        throw new GenerationError("The model's endpoint answered with a body that is not JSON.");
      throw new GenerationError(`The model's endpoint could not be reached: ${(err as Error).message}`);
    }
  }
}
