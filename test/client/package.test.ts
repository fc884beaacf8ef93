import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { serveTestApp, type ServedApp } from "../helpers/client.ts";
import { ROOT } from "../helpers/paths.ts";

// The client as a package: its generated types match the committed document, its README's examples
// run, its build runs on Node 20, and its bundle runs in a browser, all against a live server.

const run = promisify(execFile);
const CLIENT = join(ROOT, "client");
const NODE_20 = "/usr/bin/node";
const CHROMIUM = "/usr/bin/chromium";

let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), "updown-client-"));
});
after(() => rm(work, { recursive: true, force: true }));

test("client/src/openapi.ts is byte for byte what openapi-typescript makes of the committed openapi.json", async () => {
  const out = join(work, "openapi.ts");
  await run(join(ROOT, "node_modules/.bin/openapi-typescript"), [join(ROOT, "openapi.json"), "-o", out], {
    cwd: CLIENT,
  });
  const fresh = await readFile(out, "utf8");
  const committed = await readFile(join(CLIENT, "src/openapi.ts"), "utf8");
  assert.ok(fresh.includes('"/v1/markets/{slug}/snapshots"'), "the generator ran on the document");
  assert.ok(
    fresh === committed,
    "client/src/openapi.ts is stale: run `npm run client:generate` and commit the result",
  );
});

test("after npm ci alone, the README's import of @updown/client works on Node 20 and Node 24", async () => {
  // The workspace is built by the root package's prepare script, which npm ci runs.
  const probe = `import("@updown/client").then((m) => console.log(typeof m.UpdownClient, typeof m.UpdownError))`;
  for (const node of [NODE_20, process.execPath]) {
    const { stdout } = await run(node, ["--input-type=module", "-e", probe], { cwd: ROOT });
    assert.equal(stdout, "function function\n", node);
  }
});

/** Strict tsc over standalone programs that import the client by path, as a user's project would. */
async function typecheck(files: string[]): Promise<void> {
  const options = ["--noEmit", "--strict", "--module", "nodenext", "--target", "es2022", "--skipLibCheck"];
  const node = [
    "--allowImportingTsExtensions",
    "--types",
    "node",
    "--typeRoots",
    join(ROOT, "node_modules/@types"),
  ];
  await run(join(ROOT, "node_modules/.bin/tsc"), [...options, ...node, ...files]).catch(
    (err: { stdout?: string }) => assert.fail(`the README's examples do not typecheck:\n${err.stdout}`),
  );
}

/** The ```ts blocks of client/README.md, in order. */
async function readmeExamples(): Promise<string[]> {
  const text = await readFile(join(CLIENT, "README.md"), "utf8");
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

describe("client package against a live server", () => {
  let s: ServedApp;
  let key: string;
  let slug: string;
  let total: number;
  before(async () => {
    s = await serveTestApp({ exchange: true });
    // Unlimited, so that the examples never meet a minute window on the app's stopped clock.
    key = (await s.t.keys.create({ plan: "enterprise", account: "readme" })).key;
    const market = (await s.t.get("/v1/markets?coin=btc&market_type=1h&limit=1")).json().markets[0];
    slug = market.slug;
    total = (await s.t.get(`/v1/markets/${slug}/snapshots?limit=1`)).json().total;
    assert.ok(total > 500, `a market of several pages (${total})`);
  });
  after(() => s.close());

  test("every ts example of client/README.md typechecks (strict), runs to exit 0 and prints", async () => {
    const examples = await readmeExamples();
    assert.ok(examples.length >= 10, `${examples.length} examples`);
    const index = join(CLIENT, "src/index.ts");
    const files = examples.map((_, i) => join(work, `readme-example-${i + 1}.mts`));
    for (const [i, example] of examples.entries()) {
      assert.match(example, /from "@updown\/client";/, `example ${i + 1} imports the package`);
      await writeFile(
        files[i],
        example.replaceAll('from "@updown/client";', `from ${JSON.stringify(index)};`),
      );
    }
    await typecheck(files);
    for (const [i, example] of examples.entries()) {
      const file = files[i];
      const env = { ...process.env, UPDOWN_URL: s.baseUrl, UPDOWN_KEY: key };
      const { stdout } = await run(process.execPath, [file], { env }).catch((err: { stderr?: string }) => {
        assert.fail(`example ${i + 1} failed:\n${example}\n${err.stderr}`);
      });
      assert.ok(stdout.trim().length > 0, `example ${i + 1} printed nothing`);
    }
  });

  test("client/dist: built by tsc as ESM with declarations, and run by Node 20 to page a market", async (t) => {
    const dist = join(work, "dist");
    await run(join(ROOT, "node_modules/.bin/tsc"), ["-p", "tsconfig.build.json", "--outDir", dist], {
      cwd: CLIENT,
    });
    const files = await readdir(dist);
    for (const f of ["index.js", "index.d.ts", "client.js", "openapi.d.ts"]) assert.ok(files.includes(f), f);
    const js = await Promise.all(
      files.filter((f) => f.endsWith(".js")).map((f) => readFile(join(dist, f), "utf8")),
    );
    assert.ok(
      !js.some((text) => /from "node:|\.ts"/.test(text)),
      "no Node-only imports, no .ts specifiers left",
    );
    if (!existsSync(NODE_20)) return t.skip(`${NODE_20} is missing: Node 20 not run`);
    const { stdout: version } = await run(NODE_20, ["--version"]);
    const script = join(work, "page-a-market.mjs");
    await writeFile(
      script,
      `import { UpdownClient, UpdownError } from ${JSON.stringify(pathToFileURL(join(dist, "index.js")).href)};
const client = new UpdownClient({ baseUrl: process.env.UPDOWN_URL, apiKey: process.env.UPDOWN_KEY });
const times = [];
for await (const s of client.snapshots(process.argv[2], { limit: 250 })) times.push(s.time);
const missing = await client.market("btc-updown-5m-1").catch((err) => err);
console.log(JSON.stringify({ count: times.length, distinct: new Set(times).size,
  error: missing instanceof UpdownError ? missing.code : String(missing) }));`,
    );
    const env = { ...process.env, UPDOWN_URL: s.baseUrl, UPDOWN_KEY: key };
    const { stdout } = await run(NODE_20, [script, slug], { env });
    assert.deepEqual(
      JSON.parse(stdout),
      { count: total, distinct: total, error: "RESOURCE_NOT_FOUND" },
      version,
    );
  });

  test("in Chromium, from a page on another origin: pages, typed errors, a POST with a generated key", async (t) => {
    if (!existsSync(CHROMIUM)) return t.skip(`${CHROMIUM} is missing`);
    const bundle = await build({
      entryPoints: [join(CLIENT, "src/index.ts")],
      bundle: true,
      format: "iife",
      globalName: "Updown",
      platform: "browser",
      target: "es2022",
      write: false,
    });
    const page = await servePage();
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu"],
    });
    try {
      const tab = await browser.newPage();
      await tab.goto(page.url);
      await tab.addScriptTag({ content: bundle.outputFiles[0].text });
      const result = await tab.evaluate(browserScenario, { baseUrl: s.baseUrl, key, slug });
      assert.equal(result.origin, page.origin);
      assert.equal(result.count, total);
      assert.equal(result.distinct, total);
      assert.deepEqual(result.error, {
        name: "UpdownError",
        code: "RESOURCE_NOT_FOUND",
        status: 404,
        requestId: result.error?.requestId,
      });
      assert.match(String(result.error?.requestId), /^[0-9a-f-]{36}$/, "the request id reached the page");
      assert.equal(result.aborted, "ABORTED");
      const post = s.seen.find((r) => r.method === "POST");
      assert.match(String(post?.headers["idempotency-key"]), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab]/);
      assert.equal(result.strategySource, "preset");
    } finally {
      await browser.close();
      await new Promise((done) => page.server.close(done));
    }
  });
});

/** Runs in the browser: the bundle's `Updown` global against the API on another origin. */
async function browserScenario(args: { baseUrl: string; key: string; slug: string }) {
  type Lib = typeof import("../../client/src/index.ts");
  const { UpdownClient } = (globalThis as unknown as { Updown: Lib }).Updown;
  const client = new UpdownClient({ baseUrl: args.baseUrl, apiKey: args.key });
  const times: string[] = [];
  for await (const s of client.snapshots(args.slug, { limit: 300 })) times.push(s.time);
  const err = await client.market("btc-updown-5m-1").catch((e: InstanceType<Lib["UpdownError"]>) => e);
  const controller = new AbortController();
  controller.abort();
  const aborted = await client.account({ signal: controller.signal }).catch((e: { code: string }) => e.code);
  // As on a plain-HTTP page, where browsers withhold randomUUID: the key comes from getRandomValues.
  Object.defineProperty(crypto, "randomUUID", { value: undefined });
  const generated = await client.generateStrategy({ preset: "quick_scalp" });
  return {
    origin: (globalThis as unknown as { location: { origin: string } }).location.origin,
    count: times.length,
    distinct: new Set(times).size,
    error:
      "code" in err ? { name: err.name, code: err.code, status: err.status, requestId: err.requestId } : null,
    aborted,
    strategySource: generated.strategy.source,
  };
}

/** An empty page on its own origin (another port), as a web app calling the API would be. */
async function servePage(): Promise<{ server: Server; url: string; origin: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>client test</title>");
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, url: `${origin}/`, origin };
}
