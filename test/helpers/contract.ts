import { readFileSync } from "node:fs";
import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from "node:zlib";
import type { FastifyInstance } from "fastify";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

/**
 * The committed API document as a checker of answers: every answer the API test suites produce is
 * held against the operation it came from (its status declared, its declared headers present, its
 * body valid against the declared schema of its content type). A mismatch fails the suite.
 */

interface Operation {
  operationId: string;
  responses: Record<
    string,
    { headers?: Record<string, { required?: boolean }>; content?: Record<string, { schema: object }> }
  >;
}

type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object> };
};

const document = JSON.parse(readFileSync(new URL("../../openapi.json", import.meta.url), "utf8")) as Document;

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
// Components are referenced as "#/components/schemas/Name" in the document.
ajv.addSchema({ $id: "doc", components: document.components });

/**
 * Validators by the text of their schema. The document's 306 response schemas are 42 distinct ones
 * (every operation's error answers are the same envelope), and compiling was most of the checker's
 * cost: 4.6 s of the fuzz test's 17.5 s of CPU when each schema object had a validator of its own.
 */
const validators = new Map<string, ReturnType<Ajv2020["compile"]>>();
const validatorsBySchema = new WeakMap<object, ReturnType<Ajv2020["compile"]>>();
function validatorOf(schema: object) {
  let v = validatorsBySchema.get(schema);
  if (v) return v;
  const text = JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/');
  v = validators.get(text);
  if (!v) {
    v = ajv.compile(JSON.parse(text) as object);
    validators.set(text, v);
  }
  validatorsBySchema.set(schema, v);
  return v;
}

/** Every operation of the document, by "GET /v1/markets/{slug}". */
export const OPERATIONS = new Map<string, Operation>();
for (const [path, methods] of Object.entries(document.paths)) {
  for (const [method, op] of Object.entries(methods)) OPERATIONS.set(`${method.toUpperCase()} ${path}`, op);
}

/** Operation ids that a checked answer came from in this process. */
export const checkedOperations = new Set<string>();

export interface Answer {
  method: string;
  /** Fastify's route pattern (`/v1/markets/:slug`), or undefined when no route matched. */
  route: string | undefined;
  status: number;
  headers: Record<string, unknown>;
  /** The body, or null when it was streamed. */
  body: string | null;
}

/** What is wrong with an answer against the document; empty when it matches. */
export function checkAnswer(a: Answer): string[] {
  const path = a.route?.replace(/:([A-Za-z_]+)/g, "{$1}");
  const op = path === undefined ? undefined : OPERATIONS.get(`${a.method} ${path}`);
  const where = `${a.method} ${path ?? "(no route)"} ${a.status}`;
  if (!op) {
    // Undocumented routes (/docs, /openapi.json, aliases) and unknown paths: errors keep the envelope.
    if (a.status < 400 || a.body === null) return [];
    return bodyErrors(where, { $ref: "#/components/schemas/Error" }, a.body);
  }
  checkedOperations.add(op.operationId);
  const declared = op.responses[String(a.status)];
  if (!declared) return [`${where}: status not declared`];
  const problems: string[] = [];
  for (const [name, header] of Object.entries(declared.headers ?? {})) {
    if (header.required && a.headers[name.toLowerCase()] === undefined)
      problems.push(`${where}: no ${name} header`);
  }
  if (!declared.content) return problems;
  const type = String(a.headers["content-type"] ?? "")
    .split(";")[0]
    .trim();
  const media = declared.content[type];
  if (!media) return [...problems, `${where}: content type ${type} not declared`];
  if (a.body === null || type !== "application/json") return problems;
  return [...problems, ...bodyErrors(where, media.schema, a.body)];
}

function bodyErrors(where: string, schema: object, body: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return [`${where}: body is not JSON`];
  }
  const validate = validatorOf(schema);
  if (validate(value)) return [];
  return [`${where}: ${ajv.errorsText(validate.errors)}`];
}

/** A body as sent, decompressed by its Content-Encoding. */
export function decoded(body: Buffer, encoding: unknown): Buffer {
  if (encoding === "br") return brotliDecompressSync(body);
  if (encoding === "zstd") return zstdDecompressSync(body);
  if (encoding === "gzip") return gunzipSync(body);
  return body;
}

/**
 * Checks every answer of `app` against the document. Mismatches are kept (and printed); `verify`
 * throws while there are any, and the process exits non-zero, so the suite fails either way.
 */
export function checkAnswersOf(app: FastifyInstance): { mismatches: string[]; verify(): void } {
  const mismatches: string[] = [];
  app.addHook("onSend", async (req, reply, payload) => {
    const raw =
      typeof payload === "string" ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : null;
    const body = raw === null ? null : decoded(raw, reply.getHeader("content-encoding")).toString("utf8");
    const problems = checkAnswer({
      method: req.method,
      route: req.routeOptions.url,
      status: reply.statusCode,
      headers: reply.getHeaders(),
      body: reply.statusCode === 304 ? null : body,
    });
    if (problems.length > 0) {
      mismatches.push(...problems);
      process.exitCode = 1;
      console.error(`answer outside the API document:\n  ${problems.join("\n  ")}`);
    }
    return payload;
  });
  return {
    mismatches,
    verify() {
      if (mismatches.length > 0)
        throw new Error(`answers outside the API document:\n${mismatches.join("\n")}`);
    },
  };
}
