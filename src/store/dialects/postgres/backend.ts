import type { Backend } from "../../ports/backend.ts";
import { isClientTimeout } from "./client-timeout.ts";

/** Connection-level failures: the database is unreachable or restarting, not wrong about the request. */
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
  "57014", // query_canceled: a statement past PG_STATEMENT_TIMEOUT_MS
]);

/**
 * Server, port, database, user and connection options (a search_path there selects another schema).
 * Two spellings of one server (localhost and 127.0.0.1) are not recognised as one.
 */
function identityOf(url: URL): string {
  const params = [...url.searchParams].filter(([k]) => k === "options" || k === "host").sort();
  return JSON.stringify([
    url.hostname.toLowerCase(),
    url.port || "5432",
    decodeURIComponent(url.pathname.slice(1)),
    decodeURIComponent(url.username),
    params,
  ]);
}

/** The server database: `postgres://` and `postgresql://`, the two schemes PostgreSQL's own clients accept. */
export const POSTGRES_BACKEND: Backend = {
  name: "postgres",
  schemes: ["postgres://", "postgresql://"],
  readsHoldThread: false,
  open: async (url, options) => {
    const { PostgresStore } = await import("./pg-store.ts");
    return new PostgresStore(url, { timeouts: options });
  },
  locate(url) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error("is not a valid PostgreSQL URL");
    }
    return { identity: identityOf(parsed), exists: true };
  },
  /** pg gives SQLSTATE codes and socket errno codes, or only a message when a connection ends mid-query. */
  isUnavailable(err) {
    if (!(err instanceof Error)) return false;
    if (isClientTimeout(err)) return true;
    const { code } = err as { code?: unknown };
    if (typeof code === "string" && (UNAVAILABLE_CODES.has(code) || code.startsWith("08"))) return true;
    return /Connection terminated|timeout exceeded when trying to connect|Client was closed|connection (is )?closed/i.test(
      err.message,
    );
  },
};
