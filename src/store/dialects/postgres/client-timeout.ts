/**
 * The error node-pg gives when the server has not answered a query within the pool's `query_timeout`.
 * A file of its own, not in pg-util.ts: the backend registry loads backend.ts in every process, and
 * node-pg is loaded only with a PostgreSQL store.
 */
export function isClientTimeout(err: unknown): boolean {
  return err instanceof Error && err.message === "Query read timeout";
}
