/**
 * `npm run openapi`: writes the API document the routes generate to openapi.json at the repository's
 * root, the committed contract that clients are generated from. test/http/openapi.test.ts fails while the
 * served document differs from the committed one, so a change of contract is always a reviewed diff.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildApp } from "../src/http/app.ts";
import { SqliteStore } from "../src/store/dialects/sqlite/sqlite-store.ts";

export const OPENAPI_PATH = fileURLToPath(new URL("../openapi.json", import.meta.url));

/** The document as committed: the served JSON, two-space indented, with a final newline. */
export async function renderOpenApi(): Promise<string> {
  const store = new SqliteStore(":memory:");
  await store.migrate();
  const app = await buildApp({ store });
  try {
    const served = await app.inject({ method: "GET", url: "/openapi.json" });
    return `${JSON.stringify(served.json(), null, 2)}\n`;
  } finally {
    await app.close();
    await store.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(OPENAPI_PATH, await renderOpenApi());
  console.log(`wrote ${OPENAPI_PATH}`);
}
