import { parseArgs } from "node:util";
import { type Option, type OptionName, OPTIONS, type Values } from "./options.ts";

/** How errors name an option, whichever of its spellings was used: `PORT (--port)`, `--lookahead`. */
export function labelOf(option: Option<unknown>): string {
  const flag = option.flags[0];
  if (option.env && flag) return `${option.env} (${flag})`;
  return option.env ?? flag ?? "?";
}

type ParsedFlags = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** node:util's description of the flags of these options; two options of one command never share a flag. */
function flagSpecs(names: readonly OptionName[]) {
  const specs: Record<string, { type: "string" | "boolean"; multiple?: boolean }> = {};
  for (const name of names) {
    const option: Option<unknown> = OPTIONS[name];
    for (const flag of option.flags) {
      const key = flag.slice(2);
      if (key in specs) throw new Error(`two options take ${flag}`);
      specs[key] = {
        type: option.switchTo === undefined ? "string" : "boolean",
        multiple: option.repeatable === true,
      };
    }
  }
  return specs;
}

/** One option: its first flag given, else its environment variable when set and not empty, else its default. */
function readOne(option: Option<unknown>, flags: ParsedFlags, env: NodeJS.ProcessEnv): unknown {
  for (const flag of option.flags) {
    const given = flags[flag.slice(2)];
    if (given === undefined) continue;
    if (option.switchTo !== undefined) return option.switchTo;
    return option.type.parse(Array.isArray(given) ? given.join(",") : String(given), labelOf(option));
  }
  const fromEnv = option.env === undefined ? undefined : env[option.env];
  if (fromEnv !== undefined && fromEnv !== "") return option.type.parse(fromEnv, labelOf(option));
  return option.default;
}

/**
 * Reads the named options from a command line and the environment: flags win over the environment, the
 * environment over the defaults. A flag of no named option is an error (node's ERR_PARSE_ARGS_*), and so
 * is a value that breaks its option's rule (ConfigError), with the same message from a flag or a variable.
 */
export function readOptions<N extends OptionName>(
  names: readonly N[],
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): { values: Values<N>; positionals: string[] } {
  const parsed = parseArgs({
    args: [...args],
    options: flagSpecs(names),
    allowPositionals: true,
    strict: true,
  });
  const values: Record<string, unknown> = {};
  for (const name of names) values[name] = readOne(OPTIONS[name], parsed.values, env);
  // Each value came from its own option's parser, whose type Values<N> names.
  return { values: values as Values<N>, positionals: parsed.positionals };
}
