import type { StrategyDefinition } from "../definition.ts";

/**
 * Generators turn a prompt into a strategy definition (DESIGN 3.7), behind one interface: the built-in
 * offline generator (offline.ts, the default) and an OpenAI-compatible provider (openai.ts).
 */

export interface GeneratedStrategy {
  definition: StrategyDefinition;
  /** Which generator made it: `offline`, or `openai-compatible`. */
  generator: string;
  /** The model that answered, for a provider; null offline. */
  model: string | null;
  /**
   * Remarks on the generation. Never a part of the prompt left out: a clause that did not become part
   * of the definition fails the generation (DESIGN 3.7), so the built-in generator leaves this empty.
   */
  notes: string[];
}

/**
 * A generation that failed: its message says what was wrong, and reaches the caller (422). `clauses`
 * quotes, as the prompt wrote them, the clauses that did not become part of a definition.
 */
export class GenerationError extends Error {
  readonly clauses: string[];
  constructor(message: string, clauses: string[] = []) {
    super(message);
    this.clauses = clauses;
  }
}

export interface StrategyGenerator {
  readonly kind: string;
  generate(prompt: string): Promise<GeneratedStrategy>;
}
