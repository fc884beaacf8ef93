import type { FastifyReply, FastifyRequest } from "fastify";
import { badRequest, validationError } from "./errors.ts";

/**
 * Input rules the route schemas cannot state to the validator: numbers in query strings as written
 * (decimal digits, no `0x10`, `1e3`, ` 5` or `Infinity`), no body on GET or HEAD, and a Host header.
 * Each runs before schema validation and answers 400 in the envelope, naming what is wrong.
 */

interface NumberRule {
  type?: unknown;
  minimum?: number;
  maximum?: number;
}

const INTEGER_TEXT = /^-?\d+$/;
const NUMBER_TEXT = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;
const NEGATIVE_ZERO = /^-0+(\.0*)?([eE][+-]?\d+)?$/;

/** The query's numeric parameters of a route, found once per schema. */
const numericParamsOf = new WeakMap<object, [string, NumberRule][]>();

function numericParams(schema: object): [string, NumberRule][] {
  let params = numericParamsOf.get(schema);
  if (!params) {
    const properties = (schema as { properties?: Record<string, NumberRule> }).properties ?? {};
    params = Object.entries(properties).filter(([, r]) => r.type === "integer" || r.type === "number");
    numericParamsOf.set(schema, params);
  }
  return params;
}

function outOfRange(name: string, value: number, rule: NumberRule): Error {
  const above = value > 0;
  const bound = above ? (rule.maximum ?? Number.MAX_SAFE_INTEGER) : (rule.minimum ?? Number.MIN_SAFE_INTEGER);
  return validationError(`${name} must be ${above ? "<=" : ">="} ${bound}`, {
    parameter: name,
    rule: above ? "maximum" : "minimum",
    in: "querystring",
  });
}

/**
 * What the validator would read a number's text as, checked first: its coercion takes `0x10`, `1e3`,
 * ` 5` and `Infinity` for numbers, and skips minimum and maximum for an infinite one.
 */
function checkNumberText(name: string, text: string, rule: NumberRule): void {
  const integer = rule.type === "integer";
  if (!(integer ? INTEGER_TEXT : NUMBER_TEXT).test(text) || NEGATIVE_ZERO.test(text)) {
    const kind = integer ? "an integer in decimal digits" : "a decimal number";
    throw validationError(`${name} must be ${kind}`, { parameter: name, rule: "type", in: "querystring" });
  }
  const value = Number(text);
  if (integer ? !Number.isSafeInteger(value) : !Number.isFinite(value)) throw outOfRange(name, value, rule);
}

/** Every integer or number query parameter is written as one and fits a double exactly. */
function numbersAsWritten(req: FastifyRequest): void {
  const schema = req.routeOptions.schema?.querystring;
  if (!schema || typeof schema !== "object") return;
  const query = req.query as Record<string, unknown>;
  for (const [name, rule] of numericParams(schema)) {
    const text = query[name];
    // Absent, or repeated: the validator answers a repeated one (an array) as not a number.
    if (typeof text === "string") checkNumberText(name, text, rule);
  }
}

function hasBody(req: FastifyRequest): boolean {
  const length = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (length !== undefined && Number(length) !== 0);
}

/**
 * GET and HEAD take no body (one there means nothing to this API, and is how requests are smuggled
 * past proxies that disagree on where it ends); HTTP/1.1 requires Host.
 */
function wellFormed(req: FastifyRequest): void {
  if ((req.method === "GET" || req.method === "HEAD") && hasBody(req)) {
    throw badRequest(`${req.method} takes no body; send parameters in the query string.`, { in: "body" });
  }
  const raw = req.raw;
  if (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1 && req.headers.host === undefined) {
    throw badRequest("An HTTP/1.1 request needs a Host header.", { parameter: "Host", in: "header" });
  }
}

/**
 * preValidation: the request well formed, then its numbers as written. One callback hook, not two
 * async ones: every request passes it (bench/page-profile.ts). A check that fails throws, and Fastify
 * answers the error.
 */
export function strictInput(req: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  wellFormed(req);
  numbersAsWritten(req);
  done();
}
