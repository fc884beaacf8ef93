import { randomBytes } from "node:crypto";
import pg from "pg";
import { PostgresStore } from "../../src/store/dialects/postgres/pg-store.ts";

/** The PostgreSQL server the tests use, or null when DATABASE_URL names none. */
export function postgresTestUrl(): string | null {
  const url = process.env.DATABASE_URL;
  return url?.startsWith("postgres://") || url?.startsWith("postgresql://") ? url : null;
}

/**
 * Empty schemas of their own for tests that share one database: each scratch URL points
 * search_path at a new schema, and dropAll removes every schema made.
 */
export class ScratchSchemas {
  private readonly url: string;
  private readonly made: string[] = [];

  constructor(url: string) {
    this.url = url;
  }

  /** A URL whose connections see only a new, empty schema. */
  async create(): Promise<string> {
    const schema = `t_${randomBytes(6).toString("hex")}`;
    await this.admin(`CREATE SCHEMA ${schema}`);
    this.made.push(schema);
    const url = new URL(this.url);
    const options = [url.searchParams.get("options"), `-c search_path=${schema}`];
    url.searchParams.set("options", options.filter(Boolean).join(" "));
    return url.toString();
  }

  /** A migrated store over a new, empty schema. */
  async openStore(): Promise<PostgresStore> {
    const store = new PostgresStore(await this.create());
    await store.migrate();
    return store;
  }

  async dropAll(): Promise<void> {
    for (const schema of this.made.splice(0)) await this.admin(`DROP SCHEMA ${schema} CASCADE`);
  }

  private async admin(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }
}

/**
 * `url` with commits that do not wait for the WAL to reach the disk (synchronous_commit=off): what a
 * transaction wrote is seen by every session all the same, and is lost only if the server crashes,
 * which the tests of the shared server never do (those that stop one start their own). On a server
 * that syncs (as a developer's does; .ci/run's runs with fsync=off), the API tests over PostgreSQL
 * waited on the disk at every commit (WALSync in pg_stat_activity): a backtest of sixty markets
 * commits sixty times, and in a run beside a benchmark writing large files one of them did not end
 * within the three minutes the test gives it.
 */
function withAsyncCommit(url: string): string {
  const parsed = new URL(url);
  const options = [parsed.searchParams.get("options"), "-c synchronous_commit=off"];
  parsed.searchParams.set("options", options.filter(Boolean).join(" "));
  return parsed.toString();
}

/**
 * A migrated store over a schema of its own, dropped when the store closes: what openTestStore gives
 * the API tests when they run over PostgreSQL (UPDOWN_TEST_STORE=postgres).
 */
export async function openScratchStore(url: string): Promise<PostgresStore> {
  const schemas = new ScratchSchemas(withAsyncCommit(url));
  const store = await schemas.openStore();
  const close = store.close.bind(store);
  let closed = false;
  store.close = async () => {
    if (closed) return;
    closed = true;
    await close();
    await schemas.dropAll();
  };
  return store;
}

/**
 * Names the seeded template databases of one run of tests (testOnPostgres in
 * test/helpers/api-on-postgres.ts sets it for the files it runs, and drops that run's databases after
 * them).
 */
export const TEMPLATE_RUN_VARIABLE = "UPDOWN_TEST_PG_TEMPLATE_RUN";

/** `url` with another database name (its user, server and options kept). */
function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

function databaseOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1)) || "postgres";
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The prefix of every database a run of tests makes beside DATABASE_URL's, so that it can drop them. */
export function runDatabasePrefix(url: string, run: string): string {
  return `${databaseOf(url)}_r${run}_`.toLowerCase();
}

async function adminQuery(url: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** Drops every database a run of tests made (templates and the copies a crashed test left). */
export async function dropRunDatabases(url: string, run: string): Promise<void> {
  const prefix = runDatabasePrefix(url, run);
  const { rows } = await adminQuery(url, "SELECT datname FROM pg_database WHERE starts_with(datname, $1)", [
    prefix,
  ]);
  for (const { datname } of rows as { datname: string }[]) {
    await adminQuery(url, `DROP DATABASE IF EXISTS ${quoted(datname)} WITH (FORCE)`);
  }
}

/** Templates this process knows to be made, by name. */
const templates = new Map<string, Promise<void>>();

/**
 * Makes the template database once for the run, whichever test process asks first: the others wait
 * on an advisory lock, then find it made. Nothing is connected to it once made, so it can be copied.
 */
function seededTemplate(url: string, template: string, seed: (store: PostgresStore) => Promise<void>) {
  let made = templates.get(template);
  if (made === undefined) {
    made = (async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        // Released when this session ends, whatever happens.
        await client.query("SELECT pg_advisory_lock(hashtext($1))", [template]);
        const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [template]);
        if (found.rowCount !== 0) return;
        await client.query(`CREATE DATABASE ${quoted(template)}`);
        try {
          const store = new PostgresStore(withAsyncCommit(withDatabase(url, template)));
          try {
            await store.migrate();
            await seed(store);
          } finally {
            await store.close();
          }
        } catch (err) {
          await client.query(`DROP DATABASE ${quoted(template)} WITH (FORCE)`);
          throw err;
        }
      } finally {
        await client.end();
      }
    })();
    templates.set(template, made);
  }
  return made;
}

/**
 * A migrated store holding what `seed` writes, over a database of its own that is dropped when the
 * store closes. When the run names its templates (TEMPLATE_RUN_VARIABLE) the database is a copy
 * (CREATE DATABASE ... TEMPLATE) of one seeded once for the run under `name`: seeding costs about a
 * second over PostgreSQL, copying a tenth of that. Otherwise it is a scratch schema, seeded.
 */
export async function openSeededScratchStore(
  url: string,
  name: string,
  seed: (store: PostgresStore) => Promise<void>,
): Promise<PostgresStore> {
  const run = process.env[TEMPLATE_RUN_VARIABLE];
  if (!run) {
    const store = await openScratchStore(url);
    await seed(store);
    return store;
  }
  const prefix = runDatabasePrefix(url, run);
  const template = `${prefix}t_${name}`;
  await seededTemplate(url, template, seed);
  const copy = `${prefix}c_${randomBytes(6).toString("hex")}`;
  await adminQuery(url, `CREATE DATABASE ${quoted(copy)} TEMPLATE ${quoted(template)}`);
  const store = new PostgresStore(withAsyncCommit(withDatabase(url, copy)));
  await store.migrate();
  const close = store.close.bind(store);
  let closed = false;
  store.close = async () => {
    if (closed) return;
    closed = true;
    await close();
    await adminQuery(url, `DROP DATABASE IF EXISTS ${quoted(copy)} WITH (FORCE)`);
  };
  return store;
}
