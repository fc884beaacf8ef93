import { KeyPolicyError } from "../access/keys.ts";
import { ImportError } from "../archive/upstream-import.ts";
import { ConfigError } from "../config.ts";
import { PlanConfigError } from "../domain/plan.ts";
import { CopyError } from "../store/copy.ts";
import { type Command, UsageError } from "./command.ts";
import { commandHelp, mainHelp } from "./help.ts";
import { isSystemError, oneLine } from "./messages.ts";

/**
 * Every command by name, in the order `updown --help` lists them. A command's module is loaded only
 * when that command runs, and it imports the heavy part of its work (the server, the archive, the
 * backtest engine, the MCP SDK) only where it runs it: `updown --help`, which loads every command's
 * module for its summary, and a usage error load none of that (test/cli/main.test.ts).
 */
const COMMANDS: readonly (readonly [name: string, load: () => Promise<Command>])[] = [
  ["serve", async () => (await import("./commands/serve.ts")).serveCommand],
  ["collect", async () => (await import("./commands/collect.ts")).collectCommand],
  ["migrate", async () => (await import("./commands/migrate.ts")).migrateCommand],
  ["seed", async () => (await import("./commands/seed.ts")).seedCommand],
  ["import", async () => (await import("./commands/import.ts")).importCommand],
  ["export", async () => (await import("./commands/export.ts")).exportCommand],
  ["keys", async () => (await import("./commands/keys.ts")).keysCommand],
  ["copy", async () => (await import("./commands/copy.ts")).copyCommand],
  ["backfill", async () => (await import("./commands/backfill.ts")).backfillCommand],
  ["backtest", async () => (await import("./commands/backtest.ts")).backtestCommand],
  ["mcp", async () => (await import("./commands/mcp.ts")).mcpCommand],
];

/** Every command, loaded: what `updown --help` lists. */
export async function loadCommands(): Promise<Command[]> {
  return Promise.all(COMMANDS.map(([, load]) => load()));
}

/** The command of that name, loaded; null for a name no command has. */
async function loadCommand(name: string): Promise<Command | null> {
  const load = COMMANDS.find(([n]) => n === name)?.[1];
  return load ? load() : null;
}

/** Errors that mean "this cannot be done as asked": one line on stderr and exit status 2, no stack. */
const USAGE_ERRORS = [UsageError, ConfigError, PlanConfigError, ImportError, CopyError];

/**
 * The same, from modules that are heavy to load: imported only once an error is not one of the
 * above (a module that threw one of its own errors is loaded already, so this costs nothing then).
 */
async function isUsageErrorOfLoadedModule(err: unknown): Promise<boolean> {
  const [{ ArchiveError }, { WireFormatError }, { ListenError }] = await Promise.all([
    import("../archive/archive.ts"),
    import("../wire/wire.ts"),
    import("../server.ts"),
  ]);
  return [ArchiveError, WireFormatError, ListenError].some((E) => err instanceof E);
}

async function run(argv: readonly string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "help") {
    process.stdout.write(`${mainHelp(await loadCommands())}\n`);
    return;
  }
  const command = await loadCommand(name);
  if (!command) throw new UsageError(`unknown command ${name}\n\n${mainHelp(await loadCommands())}`);
  if (rest.includes("--help")) {
    process.stdout.write(`${commandHelp(command)}\n`);
    return;
  }
  await command.run(rest, process.env);
}

/** `updown <command> ...`: results on stdout; errors on stderr, exit 2 for usage, 1 for a refused key. */
export async function main(argv: readonly string[]): Promise<void> {
  try {
    await run(argv);
  } catch (err) {
    if (err instanceof KeyPolicyError) {
      process.stderr.write(`refused: ${err.message}\n`);
      process.exit(1);
    }
    const usage =
      USAGE_ERRORS.some((E) => err instanceof E) ||
      (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS") ||
      (!isSystemError(err) && (await isUsageErrorOfLoadedModule(err)));
    // A file or folder that a command meets only while it works (an output that cannot be written)
    // is as much the command line's matter as one it checks first.
    if (usage || isSystemError(err)) {
      process.stderr.write(`error: ${usage ? (err as Error).message : oneLine(err)}\n`);
      process.exit(2);
    }
    throw err;
  }
}
