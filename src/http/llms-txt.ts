import { PLAN_NAMES } from "../domain/api-key.ts";
import type { Plan, Plans } from "../domain/plan.ts";

/**
 * `/llms.txt` (https://llmstxt.org): the service explained to a language model in one markdown file,
 * an H1, a blockquote, then sections of lines. The endpoints are generated from the served OpenAPI
 * document at run time, so the file can never list an endpoint the API does not have or miss one.
 */

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Json;
}

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Json }> };
  security?: unknown[];
}

interface Document {
  info?: { title?: string; description?: string };
  tags?: { name: string; description?: string }[];
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Json> };
}

const METHODS = ["get", "post", "put", "patch", "delete"];

function isJson(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A schema with its `$ref` to a named component followed (one level, as the document writes them). */
function resolved(schema: Json, doc: Document): Json {
  const ref = schema.$ref;
  if (typeof ref !== "string") return schema;
  return doc.components?.schemas?.[ref.replace("#/components/schemas/", "")] ?? schema;
}

function bounds(schema: Json): string | null {
  const max = schema.maximum === Number.MAX_SAFE_INTEGER ? undefined : schema.maximum;
  if (schema.exclusiveMinimum !== undefined) {
    return `above ${String(schema.exclusiveMinimum)}${max === undefined ? "" : `, up to ${String(max)}`}`;
  }
  if (schema.minimum !== undefined && max !== undefined) return `${String(schema.minimum)}..${String(max)}`;
  if (schema.minimum !== undefined) return `>= ${String(schema.minimum)}`;
  return max === undefined ? null : `<= ${String(max)}`;
}

/** A schema's rule in a few words: `integer 1..100, default 100`, `one of desc, asc`. */
export function ruleOfSchema(given: Json, doc: Document): string {
  const schema = resolved(given, doc);
  if (Array.isArray(schema.anyOf)) {
    return schema.anyOf
      .filter(isJson)
      .map((s) => ruleOfSchema(s, doc))
      .join(" or ");
  }
  const parts: string[] = [];
  const named = typeof given.$ref === "string" ? given.$ref.replace("#/components/schemas/", "") : null;
  if (Array.isArray(schema.enum)) parts.push(`one of ${schema.enum.map(String).join(", ")}`);
  else if (named !== null && schema.type === "object") parts.push(`a ${named} object`);
  else if (typeof schema.type === "string") parts.push(schema.type);
  const range = bounds(schema);
  if (range !== null) parts.push(range);
  if (schema.maxLength !== undefined) parts.push(`up to ${String(schema.maxLength)} characters`);
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts.join(", ");
}

function parameterLine(p: Parameter, doc: Document): string {
  const facts = [p.in, p.required ? "required" : "optional", ruleOfSchema(p.schema ?? {}, doc)];
  const description = p.description ? `: ${p.description}` : "";
  return `  - \`${p.name}\` (${facts.filter((f) => f !== "").join(", ")})${description}`;
}

/** A JSON body's fields, PolyHistorical's camelCase aliases left out (the API answers in snake_case). */
function bodyLines(op: Operation, doc: Document): string[] {
  const schema = op.requestBody?.content?.["application/json"]?.schema;
  if (!schema) return [];
  const body = resolved(schema, doc);
  const properties = isJson(body.properties) ? body.properties : {};
  const lines = [`  - JSON body${typeof body.description === "string" ? `: ${body.description}` : ""}`];
  for (const [name, field] of Object.entries(properties)) {
    if (!isJson(field)) continue;
    const description = typeof field.description === "string" ? field.description : "";
    if (description.startsWith("Alias of")) continue;
    const rule = ruleOfSchema(field, doc);
    lines.push(`    - \`${name}\` (${rule})${description ? `: ${description}` : ""}`);
  }
  return lines;
}

function operationLines(method: string, path: string, op: Operation, doc: Document, base: string): string[] {
  const tag = op.tags?.[0] ?? "default";
  const link = `${base}/docs#/${tag}/${op.operationId ?? ""}`;
  const key = Array.isArray(op.security) && op.security.length === 0 ? " No key." : "";
  const lines = [`- [${method.toUpperCase()} ${path}](${link}): ${op.summary ?? ""}.${key}`];
  for (const p of op.parameters ?? []) lines.push(parameterLine(p, doc));
  return [...lines, ...bodyLines(op, doc)];
}

/** One H2 section per tag of the document, in its order, with every operation of the tag. */
function endpointSections(doc: Document, base: string): string[] {
  const byTag = new Map<string, string[]>();
  for (const tag of doc.tags ?? []) byTag.set(tag.name, []);
  for (const [path, methods] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = methods[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? "default";
      const lines = byTag.get(tag) ?? [];
      lines.push(...operationLines(method, path, op, doc, base));
      byTag.set(tag, lines);
    }
  }
  const sections: string[] = [];
  for (const [name, lines] of byTag) {
    if (lines.length === 0) continue;
    const about = doc.tags?.find((t) => t.name === name)?.description;
    sections.push(`## Endpoints: ${name}${about ? `\n\n${about}.` : ""}\n\n${lines.join("\n")}`);
  }
  return sections;
}

function limitText(n: number | null, per: string): string {
  return n === null ? `no limit per ${per}` : `${n} requests per ${per}`;
}

function planLine(plan: Plan): string {
  const generations =
    plan.backtestGenerationsPerMonth === null
      ? "unlimited backtest generations"
      : plan.features.backtest
        ? `${plan.backtestGenerationsPerMonth} backtest generations a month`
        : "no backtests";
  const history =
    Object.keys(plan.history).length > 0
      ? `; only the latest markets of ${Object.keys(plan.history).join(", ")}`
      : "; every market";
  return `- \`${plan.name}\`: ${limitText(plan.requestsPerMinute, "minute")}, ${limitText(plan.requestsPerDay, "day")}, ${generations}${history}`;
}

function introduction(doc: Document, base: string, plans: Plans): string {
  const title = doc.info?.title ?? "API";
  const summary = doc.info?.description ?? "";
  return `# ${title}

> ${summary} A read-only HTTP API (JSON) ${base === "" ? "served where this file is" : `at ${base}`}, with an MCP server for AI agents.

Markets are Polymarket's short-interval crypto "Up or Down" markets: one per coin and series (5m, 15m,
1h, 4h, 24h), named \`{coin}-updown-{type}-{start unix seconds}\` (\`btc-updown-5m-1784851200\`). Each
has a record (start, end, start and end coin price, winner, settlement feed, fees), one snapshot a
second while it was recorded (coin price, Up and Down prices, both order books), coverage with every
recording gap, and its trades. Times in queries are ISO 8601 or epoch milliseconds; answers use ISO
8601 UTC. Errors come in one envelope: \`{"success": false, "error": {"code", "message", "details"},
"request_id", "timestamp"}\`; a 403 \`TIER_ACCESS_DENIED\` names the plan that opens it in
\`details.required_plan\`, a 429 carries \`Retry-After\`.

## Authentication

Every \`/v1\` request and \`/mcp\` need the header \`X-API-Key: <key>\` or \`Authorization: Bearer <key>\` (never put a key in a URL).
Every request with a valid key counts once in the key's UTC minute and UTC day, whatever its status
(\`/v1/account\` and \`/v1/backtest-ai/quota\` do not count); answers carry \`X-RateLimit-Limit\`,
\`X-RateLimit-Remaining\`, \`X-RateLimit-Reset\` and \`X-Tier\`. Plans:

${PLAN_NAMES.map((name) => planLine(plans[name])).join("\n")}

Demo keys: on its first start with an empty database, \`updown serve\` creates one key per plan, prints
them and writes them to \`data/demo-keys.json\` (\`{"starter", "pro", "enterprise"}\`) beside the SQLite
file. Otherwise \`updown keys create --plan pro\` prints a new key.

## MCP (for AI agents)

- [POST ${base}/mcp](${base}/mcp): a Model Context Protocol server over streamable HTTP (stateless,
  JSON answers), authenticated with \`X-API-Key\`. Tools: \`list_series\`, \`list_markets\`,
  \`market_summary\`, \`market_chart\`, \`book_at\`, \`price_order\`, \`run_backtest\`. Each HTTP request
  to /mcp counts once, and each API read a tool makes counts as that read would (each tool's
  description says how many).
- \`updown mcp\`: the same tools over stdio for a local MCP client, with \`UPDOWN_API_KEY\` (the key)
  and \`UPDOWN_URL\` (this service, default http://127.0.0.1:8080) in its environment.

## Reference

- [OpenAPI document](${base}/openapi.json): every endpoint, parameter and answer schema (OpenAPI 3.1)
- [Interactive reference](${base}/docs): the same, browsable`;
}

/**
 * The whole file for a server reached at `base` (PUBLIC_BASE_URL: scheme, host and any path, no
 * trailing slash), or with addresses relative to the file's own when `base` is "". Never from the
 * request's Host: a cache in front would keep and hand other agents, with their keys, any host a
 * client wrote (issue 21).
 */
export function renderLlmsTxt(document: unknown, base: string, plans: Plans): string {
  const doc = (isJson(document) ? document : {}) as Document;
  return `${[introduction(doc, base, plans), ...endpointSections(doc, base)].join("\n\n")}\n`;
}
