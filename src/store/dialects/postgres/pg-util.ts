import pg, { type CustomTypesConfig, type Pool, type PoolClient } from "pg";
import { isClientTimeout } from "./client-timeout.ts";

/**
 * Advisory lock keys, in the two-int4 form: the first number says what is locked (so that our locks
 * stay apart from each other and from anything else using advisory locks in the same database), the
 * second which one. A hash collision between two accounts or keys only makes them wait for each other.
 */
export const SCHEMA_LOCK = { namespace: 0x75707301, migrations: 1, partitions: 2 } as const;
export const ACCOUNT_KEYS_LOCK_NAMESPACE = 0x75707302;
export const QUOTA_LOCK_NAMESPACE = 0x75707303;
/** One event stream's writers (src/store/rules/event-blocks.ts), by a hash of the stream's name. */
export const EVENT_STREAM_LOCK_NAMESPACE = 0x75707304;

const INT8_OID = 20;

/**
 * BIGINT (times in microseconds, Unix seconds, keys, counts) as a number, not node-pg's default string.
 * Every value the store keeps is below 2^53; one that is not would be silently rounded, so it throws.
 */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`BIGINT ${text} is beyond JavaScript's exact integers`);
  return n;
}

/** The pool's type parsers: node-pg's defaults but for BIGINT; set per pool, not globally on pg.types. */
export const STORE_TYPES: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID && format !== "binary"
      ? parseInt8
      : pg.types.getTypeParser(oid, format)) as CustomTypesConfig["getTypeParser"],
};

/** Pool or a client in a transaction: both run a query the same way. */
export type Queryable = Pool | PoolClient;

/** Runs `work` in a transaction on one client of the pool: committed if it resolves, else rolled back. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A lost connection is also an 'error' event on the client, which the pool hears only while the client
  // is idle in it; unheard while checked out, the event would crash the process.
  let lost: Error | undefined;
  const onError = (err: Error) => {
    lost = err;
  };
  client.on("error", onError);
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    if (isClientTimeout(err)) {
      // The server has not answered the statement in time (frozen, unreachable): a ROLLBACK would
      // wait behind it as long again. The connection is dropped instead, which ends the transaction.
      broken = err as Error;
    } else {
      try {
        await client.query("ROLLBACK");
      } catch (rollbackErr) {
        // A connection that cannot even roll back is not given back to the pool.
        broken = rollbackErr as Error;
      }
    }
    // After a loss the next query only says the client is unusable; the loss says why (503, not 500).
    throw lost ?? err;
  } finally {
    client.removeListener("error", onError);
    client.release(lost ?? broken);
  }
}
