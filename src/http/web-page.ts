import { readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { sendFile, type ServedFile, servedFile } from "./documents.ts";
import { ApiError, notFound } from "./errors.ts";

/**
 * The web page at `/` (DESIGN 3.9): `web/` bundled by esbuild in memory, once per process, at the
 * first request for the page or one of its assets, so that `npm ci && npm start` serves it with no
 * build step and no build output is ever committed or stale (docs/decisions.md). Assets are named by
 * their content's hash and cached for a year; the page itself is revalidated by its ETag.
 */

/** The repository's `web/` folder. */
export const WEB_DIR = fileURLToPath(new URL("../../web/", import.meta.url));

/**
 * Only this origin, for scripts, styles, images and requests; lightweight-charts draws on canvases
 * and needs nothing more once its attribution logo (an injected <style>) is off and named in the
 * page's footer instead.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE_CACHE = "no-cache";
const ASSET_CACHE = "public, max-age=31536000, immutable";

interface WebBundle {
  page: ServedFile;
  /** By file name under /assets/. */
  assets: Map<string, ServedFile>;
}

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

/** Builds the bundle: the page's script and styles, and index.html pointing at their hashed names. */
export async function buildWebBundle(webDir: string): Promise<WebBundle> {
  // Loaded here, not at the top: a process that never serves the page never loads esbuild.
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    entryPoints: [join(webDir, "src", "main.ts")],
    bundle: true,
    write: false,
    format: "esm",
    target: "es2022",
    minify: true,
    outdir: "/assets",
    entryNames: "[name]-[hash]",
    // The libraries' licence comments stay at the end of the script.
    legalComments: "eof",
    logLevel: "silent",
  });
  const assets = new Map<string, ServedFile>();
  let html = await readFile(join(webDir, "index.html"), "utf8");
  for (const out of result.outputFiles) {
    const name = basename(out.path);
    const ext = /\.[a-z]+$/.exec(name)?.[0] ?? "";
    assets.set(
      name,
      servedFile(Buffer.from(out.contents), CONTENT_TYPES[ext] ?? "application/octet-stream", ASSET_CACHE),
    );
    if (/^main-[^.]+\.js$/.test(name)) html = html.replace("/assets/main.js", `/assets/${name}`);
    if (/^main-[^.]+\.css$/.test(name)) html = html.replace("/assets/main.css", `/assets/${name}`);
  }
  return { page: servedFile(Buffer.from(html), "text/html; charset=utf-8", PAGE_CACHE), assets };
}

/** One build per web folder and process; a failed build is tried again at the next request. */
const bundles = new Map<string, Promise<WebBundle>>();

function bundleOf(webDir: string): Promise<WebBundle> {
  let bundle = bundles.get(webDir);
  if (!bundle) {
    bundle = buildWebBundle(webDir);
    bundles.set(webDir, bundle);
    bundle.catch(() => bundles.delete(webDir));
  }
  return bundle;
}

/** The bundle, or a 500 in the envelope (logged with the cause) when it cannot be built. */
async function loadBundle(req: FastifyRequest, webDir: string): Promise<WebBundle> {
  try {
    return await bundleOf(webDir);
  } catch (err) {
    req.log.error({ err }, "the web page could not be built");
    throw new ApiError("INTERNAL_ERROR", "The web page could not be built; the server's log says why.");
  }
}

/** `GET /` (the page) and `GET /assets/:file` (its script and styles), outside the API document. */
export function webPageRoutes(app: FastifyInstance, webDir: string = WEB_DIR): void {
  app.get("/", { schema: { hide: true } }, async (req, reply) => {
    const bundle = await loadBundle(req, webDir);
    reply.header("content-security-policy", PAGE_CSP);
    reply.header("referrer-policy", "no-referrer");
    return sendFile(req, reply, bundle.page);
  });
  app.get<{ Params: { file: string } }>("/assets/:file", { schema: { hide: true } }, async (req, reply) => {
    const bundle = await loadBundle(req, webDir);
    const file = bundle.assets.get(req.params.file);
    if (!file) throw notFound(`No asset ${req.params.file}; the page at / names its assets.`);
    return sendFile(req, reply, file);
  });
}
