import { promisify } from "node:util";
import zlib, { type BrotliOptions, type ZlibOptions, type ZstdOptions } from "node:zlib";
import type { Transform } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/**
 * Compression of answers (DESIGN 3.8): `br`, `zstd` and `gzip`, whichever the request accepts, with
 * the levels measured by bench/compression-levels.ts (docs/decisions.md): on a page of 1000 snapshots
 * with books, brotli 5 gives 1/17 of the JSON in about 20 ms (4 gives 1/13, 11 takes seconds), zstd 6
 * 1/16 in 12 ms, gzip 6 1/12 in 30 ms. Pages of resolved markets are compressed once per encoding and
 * kept beside the page in the page cache; every other JSON answer is compressed as it is sent.
 */
export type Encoding = "br" | "zstd" | "gzip";

/** The server's order among encodings the client accepts equally: fewest bytes first. */
export const ENCODINGS: readonly Encoding[] = ["br", "zstd", "gzip"];

const C = zlib.constants;
const BROTLI: BrotliOptions = {
  params: { [C.BROTLI_PARAM_QUALITY]: 5, [C.BROTLI_PARAM_MODE]: C.BROTLI_MODE_TEXT },
};
const ZSTD: ZstdOptions = { params: { [C.ZSTD_c_compressionLevel]: 6 } };
const GZIP: ZlibOptions = { level: 6 };

const brotliAsync = promisify(zlib.brotliCompress);
const zstdAsync = promisify(zlib.zstdCompress);
const gzipAsync = promisify(zlib.gzip);

/** Bodies up to this size are compressed on the event loop: a trip to the thread pool costs more. */
const SYNC_MAX_BYTES = 32 * 1024;

/**
 * The encoding to answer a request's Accept-Encoding with, or null for identity. q-values are
 * honoured (q=0 refuses); `*` stands for any encoding not named; among equal q, ENCODINGS' order.
 */
export function negotiate(acceptEncoding: string | string[] | undefined): Encoding | null {
  const header = Array.isArray(acceptEncoding) ? acceptEncoding.join(",") : acceptEncoding;
  if (!header) return null;
  // Clients send few distinct headers (each its own, every time): each is read once. Only short ones
  // are kept, so that the memory stays small whatever is sent.
  const known = negotiated.get(header);
  if (known !== undefined) return known;
  const encoding = chooseEncoding(header);
  if (header.length > NEGOTIATED_MAX_LENGTH) return encoding;
  if (negotiated.size >= NEGOTIATED_MAX) negotiated.clear();
  negotiated.set(header, encoding);
  return encoding;
}

/** Accept-Encoding headers read so far and the encoding each chose; past this many it starts over. */
const negotiated = new Map<string, Encoding | null>();
const NEGOTIATED_MAX = 1024;
const NEGOTIATED_MAX_LENGTH = 200;

function chooseEncoding(header: string): Encoding | null {
  const q = new Map<string, number>();
  for (const part of header.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    let weight = 1;
    for (const p of params) {
      const [k, v] = p.trim().split("=");
      if (k === "q") weight = Number(v);
    }
    if (Number.isFinite(weight)) q.set(name, weight);
  }
  let best: Encoding | null = null;
  let bestQ = 0;
  for (const enc of ENCODINGS) {
    const weight = q.get(enc) ?? q.get("*") ?? 0;
    if (weight > bestQ) {
      best = enc;
      bestQ = weight;
    }
  }
  return best;
}

/** The body compressed in one encoding (on the thread pool when large). */
export async function compress(body: Buffer, encoding: Encoding): Promise<Buffer> {
  const small = body.length <= SYNC_MAX_BYTES;
  switch (encoding) {
    case "br": {
      const options = { ...BROTLI, params: { ...BROTLI.params, [C.BROTLI_PARAM_SIZE_HINT]: body.length } };
      return small ? zlib.brotliCompressSync(body, options) : brotliAsync(body, options);
    }
    case "zstd":
      return small ? zlib.zstdCompressSync(body, ZSTD) : zstdAsync(body, ZSTD);
    case "gzip":
      return small ? zlib.gzipSync(body, GZIP) : gzipAsync(body, GZIP);
  }
}

/**
 * Streams (exports) use small windows: a stream lives as long as its reader reads, and a slow reader
 * holds the encoder's state all the while. Measured on 40 MB of a bulk export with books
 * (docs/api.md#compression): brotli 5 with a 2^16 window gives 1/29.9 at 100 MB/s of one core holding about
 * 0.75 MB a stream, against 1/28.8 and 1.7 MB with the default 2^22; zstd 6 with a 2^18 window and
 * 2^16 hash and chain tables 1/26.4 at 186 MB/s and 0.8 MB, against 1/25.4 and 2.8 MB by default.
 * gzip's 32 KiB window is small already (1/20.9, 0.2 MB).
 */
const BROTLI_STREAM: BrotliOptions = {
  params: { ...BROTLI.params, [C.BROTLI_PARAM_LGWIN]: 16 },
};
const ZSTD_STREAM: ZstdOptions = {
  params: {
    ...ZSTD.params,
    [C.ZSTD_c_windowLog]: 18,
    [C.ZSTD_c_hashLog]: 16,
    [C.ZSTD_c_chainLog]: 16,
  },
};

/** A compressing stream of one encoding, for streamed answers (exports). */
export function compressStream(encoding: Encoding): Transform {
  switch (encoding) {
    case "br":
      return zlib.createBrotliCompress(BROTLI_STREAM);
    case "zstd":
      return zlib.createZstdCompress(ZSTD_STREAM);
    case "gzip":
      return zlib.createGzip(GZIP);
  }
}

/** Marks a reply as varying by Accept-Encoding, keeping any Vary already set. */
export function varyOnEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader("vary");
  if (vary === undefined) reply.header("vary", "Accept-Encoding");
  else if (!/accept-encoding/i.test(String(vary))) reply.header("vary", `${String(vary)}, Accept-Encoding`);
}

const isJson = (reply: FastifyReply) => /^application\/json\b/.test(String(reply.getHeader("content-type")));

/**
 * Compresses every JSON answer the request accepts an encoding for, as it is sent. An answer that
 * already carries Content-Encoding (a cached page's own compressed bytes, a compressed export) is left
 * as it is; so are empty bodies (304, HEAD) and streams.
 */
export function compressAnswers(app: FastifyInstance): void {
  // A callback hook, not an async one: most answers (a cached page, a small one not asking for an
  // encoding) leave as they are, and those should not pay a promise and a microtask for it.
  app.addHook(
    "onSend",
    (
      req: FastifyRequest,
      reply: FastifyReply,
      payload: unknown,
      done: (err: Error | null, p?: unknown) => void,
    ) => {
      const encoding = encodingFor(req, reply, payload);
      if (encoding === null) return done(null, payload);
      reply.header("content-encoding", encoding);
      reply.removeHeader("content-length");
      compress(typeof payload === "string" ? Buffer.from(payload) : (payload as Buffer), encoding).then(
        (bytes) => done(null, bytes),
        (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
      );
    },
  );
}

/** The encoding to compress this answer in (a string or a Buffer), or null to send it as it is. */
function encodingFor(req: FastifyRequest, reply: FastifyReply, payload: unknown): Encoding | null {
  if (!isJson(reply)) return null;
  varyOnEncoding(reply);
  if (reply.hasHeader("content-encoding") || req.method === "HEAD") return null;
  if (
    typeof payload === "string" ? payload.length === 0 : !Buffer.isBuffer(payload) || payload.length === 0
  ) {
    return null;
  }
  return negotiate(req.headers["accept-encoding"]);
}
