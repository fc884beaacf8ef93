import type { SwaggerOptions } from "@fastify/swagger";

/**
 * How /openapi.json is generated from the route schemas. The document is the contract a client is
 * generated from, so it is committed (openapi.json at the repository's root, rewritten by
 * `npm run openapi`) and a test fails when the served document differs from it.
 */

const TAGS = [
  { name: "markets", description: "Market records and how completely each was recorded" },
  { name: "snapshots", description: "Per-second snapshots of a market: prices and both order books" },
  { name: "trades", description: "Polymarket trades of a market's outcome tokens" },
  { name: "exchange", description: "Binance spot and futures data (DESIGN 3.6)" },
  { name: "account", description: "The key's plan, limits and quota (not counted)" },
  { name: "backtest", description: "Backtest AI" },
  { name: "operations", description: "Liveness, readiness and metrics, without a key" },
];

type Json = Record<string, unknown>;

/** Headers marked `required` in a route schema: the flag belongs to the header, not its schema. */
function liftRequiredHeaders(document: Json): Json {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  for (const operation of Object.values(paths).flatMap((p) => Object.values(p))) {
    const responses = (operation.responses ?? {}) as Record<string, Json>;
    for (const response of Object.values(responses)) {
      for (const header of Object.values((response.headers ?? {}) as Record<string, Json>)) {
        const schema = header.schema as Json;
        if (schema.required === true) header.required = true;
        delete schema.required;
      }
    }
  }
  return document;
}

export const openApiOptions: SwaggerOptions = {
  openapi: {
    openapi: "3.1.0",
    info: {
      title: "Up or Down history API",
      version: "1.0.0",
      description:
        "Recorded history of Polymarket's short-interval crypto Up or Down markets: market records and per-second snapshots with order books, and Binance spot and futures data.",
    },
    tags: TAGS,
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
        bearer: { type: "http", scheme: "bearer", description: "The same API key as a bearer token" },
      },
    },
    security: [{ apiKey: [] }, { bearer: [] }],
  },
  // Components are named by their $id (Market, Snapshot, ...), never def-0.
  refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  transformObject: (documentObject) => {
    const document =
      "openapiObject" in documentObject ? documentObject.openapiObject : documentObject.swaggerObject;
    return liftRequiredHeaders(document as Json) as typeof document;
  },
};
