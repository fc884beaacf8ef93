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
  /** What the generator could not use, said plainly (parts of a prompt it did not understand). */
  notes: string[];
}

/** A generation that failed: its message says what was wrong, and reaches the caller (422). */
export class GenerationError extends Error {}

export interface StrategyGenerator {
  readonly kind: string;
  generate(prompt: string): Promise<GeneratedStrategy>;
}
