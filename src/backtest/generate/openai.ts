import {
  checkDefinition,
  DEFINITION_SCHEMA,
  DefinitionError,
  type StrategyDefinition,
} from "../definition.ts";
import { type GeneratedStrategy, GenerationError, type StrategyGenerator } from "./generator.ts";

/**
 * An OpenAI-compatible chat-completions endpoint as a generator (DESIGN 3.7): `LLM_BASE_URL` (the API
 * root, e.g. https://api.openai.com/v1), `LLM_API_KEY`, `LLM_MODEL`. The answer is constrained by the
 * definition's JSON schema (`response_format` json_schema, strict) and checked against it again here;
 * anything else (no answer in time, an error status, text that is not JSON, a definition that breaks
 * the schema) is a GenerationError saying which.
 */

export interface LlmSettings {
  baseUrl: string;
  apiKey: string | null;
  model: string;
  timeoutMs: number;
}

/** The schema as sent: without `$id`, which strict structured output does not take. */
function sentSchema(): Record<string, unknown> {
  const { $id: _id, ...schema } = JSON.parse(JSON.stringify(DEFINITION_SCHEMA)) as Record<string, unknown>;
  return schema;
}

const INSTRUCTIONS = [
  "You turn a trader's description of a strategy into a backtest definition for Polymarket's crypto",
  '"Up or Down" markets: each market pays 1 USDC a share to the winning outcome token (Up if the coin',
  "ends at or above its start price, else Down). Prices are probabilities from 0 to 1. Answer only with",
  "a JSON object following the given schema. version is 1. side is the token bought. entry conditions",
  "must all hold to enter; exit conditions close the position when any holds. Use null for what the",
  "trader does not ask for, [] for no conditions, MARKET orders unless a limit order is asked for,",
  "position_size 100 and max_entries_per_market 1 unless told otherwise.",
].join(" ");

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
    let definition: StrategyDefinition;
    try {
      definition = checkDefinition(parsed);
    } catch (err) {
      if (err instanceof DefinitionError) {
        throw new GenerationError(`The model's definition breaks the schema: ${err.message}.`);
      }
      throw err;
    }
    return { definition, generator: this.kind, model: this.settings.model, notes: [] };
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
        json_schema: { name: "strategy_definition", strict: true, schema: sentSchema() },
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
