import * as z from "zod";
import type { components } from "../../client/src/openapi.ts";
import document from "../../openapi.json" with { type: "json" };

/**
 * The API's shapes as zod, for the MCP tools' schemas: converted at load from the committed OpenAPI
 * document (the wire schemas' one rendering, which the client's types are generated from), so that a
 * tool's answer restates no field of the API. zod's own converter (`z.fromJSONSchema`) reads each
 * schema once the document's `$ref`s are put in place; the TypeScript type of each is the client's
 * type of the same component, so the tools' handlers are typed by the API too.
 */

type Schemas = components["schemas"];
type Name = keyof Schemas;
type JsonSchema = Parameters<typeof z.fromJSONSchema>[0];

const COMPONENTS: Record<string, unknown> = document.components.schemas;
const REF = "#/components/schemas/";

/** A schema of the document with every reference to a component replaced by that component. */
export function inlined(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(inlined);
  if (node === null || typeof node !== "object") return node;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === "string" && ref.startsWith(REF)) {
    const target = COMPONENTS[ref.slice(REF.length)];
    if (target === undefined) throw new Error(`the API document has no component ${ref}`);
    return inlined(target);
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlined(value)]));
}

function converted(schema: unknown): z.ZodType {
  return z.fromJSONSchema(inlined(schema) as JsonSchema);
}

/** A component of the API document, whole. */
export function component<N extends Name>(name: N): z.ZodType<Schemas[N]> {
  // The document and the client's types come from the same schemas (a test fails when the client's
  // are stale), so what this schema accepts is what the type says.
  return converted(COMPONENTS[name]) as z.ZodType<Schemas[N]>;
}

/**
 * Some required fields of an object component, each as zod, for a compact answer made of them. A
 * field the document does not list as required is refused, since the view would then claim it always.
 */
export function fieldsOf<N extends Name, const K extends keyof Schemas[N] & string>(
  name: N,
  keys: readonly K[],
): { [P in K]: z.ZodType<Schemas[N][P]> } {
  const schema = COMPONENTS[name] as { properties?: Record<string, unknown>; required?: string[] };
  const fields: Record<string, z.ZodType> = {};
  for (const key of keys) {
    if (!schema.required?.includes(key)) throw new Error(`${name}.${key} is not a required field`);
    fields[key] = converted(schema.properties?.[key]);
  }
  // Each field converted from the component's own property, typed as the client's type of it.
  return fields as { [P in K]: z.ZodType<Schemas[N][P]> };
}
