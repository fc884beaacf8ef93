import { type OptionName, OPTIONS, type Values } from "../config/options.ts";
import { readOptions } from "../config/read.ts";
import { accessSync, constants, existsSync, type Stats, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ConfigError } from "../config/error.ts";
import { openAndMigrate } from "../store/open.ts";
import type { StoreOptions } from "../store/ports/backend.ts";
import type { MigrationReport, Store } from "../store/ports/store.ts";
import { displayUrl, oneLine } from "./messages.ts";

/** A command line that cannot be run; main turns it into one line on stderr and exit status 2. */
export class UsageError extends Error {}

/** One `updown` command: its name, its help, the options it reads (src/config/options.ts) and its work. */
export interface Command {
  readonly name: string;
  /** Its line in `updown --help`. */
  readonly summary: string;
  /** How it is called and what it does; `--help` adds its options, from the table. */
  readonly help: string;
  readonly options: readonly OptionName[];
  run(args: readonly string[], env: NodeJS.ProcessEnv): Promise<void>;
}

export interface CommandSpec<N extends OptionName> {
  name: string;
  summary: string;
  help: string;
  options: readonly N[];
  /** The work, given the values of its options (flags over environment over defaults) and the positionals. */
  run(values: Values<N>, positionals: string[], env: NodeJS.ProcessEnv): Promise<void>;
}

/** A command whose options are read from its arguments and the environment by the one shared reader. */
export function defineCommand<N extends OptionName>(spec: CommandSpec<N>): Command {
  return {
    name: spec.name,
    summary: spec.summary,
    help: spec.help,
    options: spec.options,
    run: (args, env) => {
      const { values, positionals } = readCommandLine(spec, args, env);
      return spec.run(values, positionals, env);
    },
  };
}

/** The options read; a command line Node's parser refuses is one plain line and the command's usage. */
function readCommandLine<N extends OptionName>(
  spec: CommandSpec<N>,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
) {
  try {
    return readOptions(spec.options, args, env);
  } catch (err) {
    if (!(err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) throw err;
    const usage = spec.help.split("\n\n")[0];
    throw new UsageError(
      `${parseProblem((err as Error).message, spec.options)}\n\n${usage}\nRun 'updown ${spec.name} --help' for its options.`,
    );
  }
}

/** Node's words for a refused flag, said plainly: which flag, and the nearest one the command takes. */
function parseProblem(message: string, options: readonly OptionName[]): string {
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown) {
    const flags = options.flatMap((name) => OPTIONS[name].flags);
    const near = flags
      .map((flag) => ({ flag, d: editDistance(flag, unknown[1]) }))
      .sort((a, b) => a.d - b.d)[0];
    const hint = near && near.d <= 2 ? ` (did you mean ${near.flag}?)` : "";
    return `unknown option ${unknown[1]}${hint}`;
  }
  const value = /^Option '(\S+?)(?: <value>)?' (.+)$/.exec(message);
  if (value) return `${value[1]}: ${value[2]}`;
  return message.split(". ")[0];
}

/** Levenshtein distance: the fewest single-character edits from one word to the other. */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}

/**
 * Opens (and migrates) the store a command works on; one that cannot be opened (a SQLite path under a
 * file, an unreachable PostgreSQL) stops the command with one line naming it and why.
 */
export async function openDatabase(
  databaseUrl: string,
  options: StoreOptions = {},
): Promise<{ store: Store; migration: MigrationReport }> {
  try {
    return await openAndMigrate(databaseUrl, options);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new UsageError(`cannot open the database ${displayUrl(databaseUrl)}: ${oneLine(err)}`);
  }
}

/** Opens (and migrates) the store, does the work, and closes the store whatever happens. */
export async function withStore<T>(databaseUrl: string, work: (store: Store) => Promise<T>): Promise<T> {
  const { store } = await openDatabase(databaseUrl);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Stops a command, before it starts work, when a file it reads is missing, unreadable or a folder. */
export function requireFile(path: string, what: string): void {
  let stats: Stats;
  try {
    stats = statSync(path);
    accessSync(path, constants.R_OK);
  } catch (err) {
    throw new UsageError(`${what} ${path}: ${reasonOf(err)}`);
  }
  if (stats.isDirectory()) throw new UsageError(`${what} ${path} is a folder, not a file`);
}

/** Stops a command, before it starts work, when the folder a file is to be written in is missing. */
export function requireFolderFor(path: string, what: string): void {
  const folder = dirname(resolve(path));
  let stats: Stats;
  try {
    stats = statSync(folder);
  } catch (err) {
    throw new UsageError(`${what} ${path}: folder ${folder}: ${reasonOf(err)}`);
  }
  if (!stats.isDirectory()) throw new UsageError(`${what} ${path}: ${folder} is not a folder`);
  if (existsSync(path) && statSync(path).isDirectory()) {
    throw new UsageError(`${what} ${path} is a folder; name a file in it`);
  }
}

function reasonOf(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === "ENOENT") return "no such file or folder";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "ENOTDIR") return "a part of the path is a file, not a folder";
  return oneLine(err);
}
