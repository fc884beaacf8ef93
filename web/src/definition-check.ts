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

export function checkDefinition(schema: object, text: string): Checked {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, problems: [{ pointer: "", message: `is not JSON: ${(err as Error).message}` }] };
  }
  // The schema is the API's own JSON; TypeBox's types describe the schemas it builds.
  const [ok, errors] = Errors(schema as Parameters<typeof Errors>[0], value);
  if (ok) return { ok: true, definition: value };
  const problems = problemsOf(errors as unknown as SchemaError[]);
  return {
    ok: false,
    problems: problems.length > 0 ? problems : [{ pointer: "", message: "does not match the schema" }],
  };
}
