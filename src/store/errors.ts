/** Connection-level failures: the store is unreachable or restarting, not wrong about the request. */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
]);

/** SQLite's result codes for a database busy or locked by another connection. */
const SQLITE_BUSY = new Set([5, 6]);

/**
 * Whether an error means the store cannot be reached for now (answer 503 and retry), as opposed to a
 * bug or bad data (500). Drivers differ: pg gives SQLSTATE codes and socket errno codes, or only a
 * message when a connection ends mid-query; node:sqlite gives an `errcode`.
 */
export function isStoreUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const { code, errcode } = err as { code?: unknown; errcode?: unknown };
  if (typeof code === "string" && (UNAVAILABLE_CODES.has(code) || code.startsWith("08"))) return true;
  if (typeof errcode === "number" && SQLITE_BUSY.has(errcode)) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client was closed|connection (is )?closed/i.test(
    err.message,
  );
}
