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
 * A migrated store over a schema of its own, dropped when the store closes: what openTestStore gives
 * the API tests when they run over PostgreSQL (UPDOWN_TEST_STORE=postgres).
 */
export async function openScratchStore(url: string): Promise<PostgresStore> {
  const schemas = new ScratchSchemas(url);
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
