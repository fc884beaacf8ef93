import { Errors } from "typebox/schema";

/**
 * A strategy definition checked in the browser against the schema the API serves
 * (`GET /v1/backtest-ai/schema`, the same one that checks it on the server), before it is sent.
 * TypeBox's JSON Schema interpreter does the checking: it runs no generated code, so the page's CSP
 * needs no 'unsafe-eval'.
 */

export interface Problem {
  /** A JSON pointer into the definition ("" for the whole of it). */
  pointer: string;
  message: string;
}

export type Checked = { ok: true; definition: unknown } | { ok: false; problems: Problem[] };

interface SchemaError {
  keyword: string;
  instancePath: string;
  params: { requiredProperties?: string[]; additionalProperties?: string[] };
  message: string;
}

/** One problem per field, the field named by its pointer. */
function problemsOf(errors: SchemaError[]): Problem[] {
  const problems: Problem[] = [];
  for (const e of errors) {
    if (e.keyword === "required" && e.params.requiredProperties) {
      for (const name of e.params.requiredProperties)
        problems.push({ pointer: `${e.instancePath}/${name}`, message: "is required" });
    } else if (e.keyword === "additionalProperties" && e.params.additionalProperties) {
      for (const name of e.params.additionalProperties)
        problems.push({ pointer: `${e.instancePath}/${name}`, message: "is not a field of a definition" });
    } else if (e.keyword !== "anyOf" && e.keyword !== "oneOf") {
      problems.push({ pointer: e.instancePath, message: e.message });
    }
  }
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.pointer} ${p.message}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

type Schema = Parameters<typeof Errors>[0];

/** The problems of a value against a schema, each pointer prefixed with where the value sits. */
function errorsOf(schema: unknown, value: unknown, at = ""): Problem[] {
  // The schema is the API's own JSON; TypeBox's types describe the schemas it builds.
  const [ok, errors] = Errors(schema as Schema, value);
  if (ok) return [];
  const problems = problemsOf(errors as unknown as SchemaError[]);
  if (problems.length === 0) return [{ pointer: at, message: "does not match the schema" }];
  return problems.map((p) => ({ ...p, pointer: at + p.pointer }));
}

interface NodeSchema {
  anyOf?: { properties?: Record<string, { items?: unknown } & Record<string, unknown>> }[];
}

/**
 * A condition tree's problems, node by node (version 2): a node is a condition or a group, one branch
 * of the schema's union, and is checked against the branch its keys name, so that the problems listed
 * are its own rather than what each other branch misses.
 */
function nodeProblems(schema: NodeSchema, node: unknown, at: string): Problem[] {
  const branches = schema.anyOf;
  if (!branches || typeof node !== "object" || node === null || Array.isArray(node)) {
    return errorsOf(schema, node, at);
  }
  const keys = Object.keys(node);
  const group = keys.length === 1 ? ["all", "any", "not"].indexOf(keys[0]) : -1;
  if (group < 0) return errorsOf(branches[0], node, at);
  const key = keys[0];
  const member = branches[group + 1]?.properties?.[key];
  if (!member) return errorsOf(schema, node, at);
  const members = (node as Record<string, unknown>)[key];
  if (key === "not") return nodeProblems(member as NodeSchema, members, `${at}/not`);
  if (!Array.isArray(members)) return errorsOf(member, members, `${at}/${key}`);
  return members.flatMap((m, i) => nodeProblems(member.items as NodeSchema, m, `${at}/${key}/${i}`));
}

interface DefinitionSchema {
  properties?: {
    entry?: { items?: NodeSchema };
    exit?: { properties?: { conditions?: { items?: NodeSchema } } };
  };
}

/** The problems of `entry` and `exit.conditions`, node by node. */
function treeProblems(schema: object, value: unknown): Problem[] {
  const s = schema as DefinitionSchema;
  if (typeof value !== "object" || value === null) return [];
  const d = value as { entry?: unknown; exit?: { conditions?: unknown } };
  const lists: [string, unknown, NodeSchema | undefined][] = [
    ["/entry", d.entry, s.properties?.entry?.items],
    ["/exit/conditions", d.exit?.conditions, s.properties?.exit?.properties?.conditions?.items],
  ];
  return lists.flatMap(([at, list, node]) =>
    Array.isArray(list) && node ? list.flatMap((n, i) => nodeProblems(node, n, `${at}/${i}`)) : [],
  );
}

/** The problems of everything but the trees (checked above, so left empty here). */
function restProblems(schema: object, value: unknown): Problem[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return errorsOf(schema, value);
  const d = { ...(value as Record<string, unknown>) };
  if (Array.isArray(d.entry)) d.entry = [];
  const exit = d.exit;
  if (
    typeof exit === "object" &&
    exit !== null &&
    Array.isArray((exit as { conditions?: unknown }).conditions)
  ) {
    d.exit = { ...exit, conditions: [] };
  }
  return errorsOf(schema, d);
}

export function checkDefinition(schema: object, text: string): Checked {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, problems: [{ pointer: "", message: `is not JSON: ${(err as Error).message}` }] };
  }
  const problems = [...treeProblems(schema, value), ...restProblems(schema, value)];
  return problems.length === 0 ? { ok: true, definition: value } : { ok: false, problems };
}
