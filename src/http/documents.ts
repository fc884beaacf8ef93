import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, extname, join } from "node:path";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { compress, type Encoding, negotiate, varyOnEncoding } from "./compression.ts";
import { JSON_TYPE } from "./media-types.ts";

/**
 * Files served from memory: rendered once, compressed once per encoding asked for, answered with a
 * strong ETag and Cache-Control, and 304 to a matching If-None-Match. `/openapi.json` is 574 KB of
 * JSON and took 8 ms of CPU to serialize per request (issue 21): a keyless client asking for it in a
 * loop took the CPU every authenticated request needed. The web page's bundle is served the same way.
 */

export interface ServedFile {
  contentType: string;
  body: Buffer;
  /** Strong, from the bytes; the same for every encoding of them (the answer varies by Accept-Encoding). */
  etag: string;
  cacheControl: string;
  /** Whether the bytes are worth compressing (text, not images). */
  compressible: boolean;
  /** The body in each encoding asked for so far, compressed once. */
  encoded: Map<Encoding, Promise<Buffer>>;
}

export function servedFile(body: Buffer, contentType: string, cacheControl: string): ServedFile {
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  const compressible = /^(text\/|application\/(json|javascript|x-yaml)|image\/svg)/.test(contentType);
  return { contentType, body, etag, cacheControl, compressible, encoded: new Map() };
}

/** Whether an If-None-Match names the file's ETag (a list, weak forms, `*`: RFC 9110 13.1.2). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t === etag || t === `W/${etag}`;
  });
}

/** Answers with the file: 304 when the client holds it, else its bytes in the best encoding accepted. */
export async function sendFile(
  req: FastifyRequest,
  reply: FastifyReply,
  file: ServedFile,
): Promise<FastifyReply> {
  reply.header("content-type", file.contentType);
  reply.header("cache-control", file.cacheControl);
  reply.header("etag", file.etag);
  if (file.compressible) varyOnEncoding(reply);
  if (matches(req.headers["if-none-match"], file.etag)) return reply.code(304).send();
  const encoding = file.compressible ? negotiate(req.headers["accept-encoding"]) : null;
  if (encoding === null) return reply.send(file.body);
  let encoded = file.encoded.get(encoding);
  if (!encoded) {
    encoded = compress(file.body, encoding);
    file.encoded.set(encoding, encoded);
  }
  reply.header("content-encoding", encoding);
  return reply.send(await encoded);
}

/** A file made at its first request, once; a failure is tried again at the next request. */
export function onFirstRequest(make: () => ServedFile | Promise<ServedFile>): () => Promise<ServedFile> {
  let made: Promise<ServedFile> | null = null;
  return () => {
    if (made === null) {
      const attempt = Promise.resolve().then(make);
      made = attempt;
      attempt.catch(() => {
        if (made === attempt) made = null;
      });
    }
    return made;
  };
}

/** The documents change only with the process (a new version, a new plans file): revalidated every 5 minutes. */
export const DOCUMENT_CACHE = "public, max-age=300";
/** Swagger UI's assets change only with the package's version; their names carry no hash. */
const DOCS_ASSET_CACHE = "public, max-age=86400";

const CONTENT_TYPES: Record<string, string> = {
  ".js": "application/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".json": JSON_TYPE,
  ".png": "image/png",
  ".svg": "image/svg+xml",
};

/** Swagger UI's static files (under /docs/static/), as @fastify/swagger-ui would send them from disk. */
function swaggerUiAssets(): Map<string, () => Promise<ServedFile>> {
  const require = createRequire(import.meta.url);
  const dir = join(dirname(require.resolve("@fastify/swagger-ui/package.json")), "static");
  const assets = new Map<string, () => Promise<ServedFile>>();
  for (const name of readdirSync(dir)) {
    // index.html is the plugin's own route (a redirect to /docs/), never the file.
    if (name === "index.html" || !Object.hasOwn(CONTENT_TYPES, extname(name))) continue;
    const type = CONTENT_TYPES[extname(name)];
    assets.set(
      `/docs/static/${name}`,
      onFirstRequest(() => servedFile(readFileSync(join(dir, name)), type, DOCS_ASSET_CACHE)),
    );
  }
  return assets;
}

export interface DocumentSources {
  /** The OpenAPI document, as JSON text. */
  openApi(): string;
  /** The same as YAML (/docs/yaml). */
  openApiYaml(): string;
  llmsTxt(): string;
}

/**
 * /openapi.json and /llms.txt as routes, and /docs's JSON, YAML and static assets answered from memory
 * before @fastify/swagger-ui's own handlers (which would serialize or read the disk per request).
 */
export function documentRoutes(app: FastifyInstance, sources: DocumentSources): void {
  const openApi = onFirstRequest(() => servedFile(Buffer.from(sources.openApi()), JSON_TYPE, DOCUMENT_CACHE));
  const llmsTxt = onFirstRequest(() =>
    servedFile(Buffer.from(sources.llmsTxt()), "text/plain; charset=utf-8", DOCUMENT_CACHE),
  );
  const files = new Map<string, () => Promise<ServedFile>>([
    ["/openapi.json", openApi],
    ["/docs/json", openApi],
    [
      "/docs/yaml",
      onFirstRequest(() =>
        servedFile(Buffer.from(sources.openApiYaml()), "application/x-yaml", DOCUMENT_CACHE),
      ),
    ],
    ...swaggerUiAssets(),
  ]);
  app.get("/openapi.json", { schema: { hide: true } }, async (req, reply) =>
    sendFile(req, reply, await openApi()),
  );
  app.get("/llms.txt", { schema: { hide: true } }, async (req, reply) =>
    sendFile(req, reply, await llmsTxt()),
  );
  // By the route matched (the path as the router decoded it), so that no spelling of a path reaches
  // the plugin's handler instead. A callback hook: every request passes it, and all but /docs's go on
  // at once, without a promise and a microtask for it.
  app.addHook("onRequest", (req, reply, done) => {
    const route = req.routeOptions.url;
    if ((req.method !== "GET" && req.method !== "HEAD") || !route?.startsWith("/docs/")) return done();
    const name = route === "/docs/static/*" ? `/docs/static/${(req.params as { "*": string })["*"]}` : route;
    const file = files.get(name);
    if (!file) return done();
    file()
      .then((served) => sendFile(req, reply, served))
      .then(() => done(), done);
  });
}
