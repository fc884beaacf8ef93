import { POSTGRES_BACKEND } from "./dialects/postgres/backend.ts";
import { SQLITE_BACKEND } from "./dialects/sqlite/backend.ts";
import type { Backend } from "./ports/backend.ts";

/**
 * Every kind of database the service opens, one line each: opening, `updown copy`, `/readyz` and the
 * 503 of the error handler go through this list, never through a URL's spelling or a driver's codes.
 */
export const BACKENDS: readonly Backend[] = [SQLITE_BACKEND, POSTGRES_BACKEND];

/** The backend that opens `url`, or null when no backend's scheme starts it. */
export function backendOf(url: string): Backend | null {
  return BACKENDS.find((b) => b.schemes.some((scheme) => url.startsWith(scheme))) ?? null;
}

/** "sqlite:, postgres:// or postgresql://": the schemes a store URL may start with, for messages. */
export function knownSchemes(): string {
  const all = BACKENDS.flatMap((b) => b.schemes);
  return all.length < 2 ? all.join("") : `${all.slice(0, -1).join(", ")} or ${all.at(-1)}`;
}
