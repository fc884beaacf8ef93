import { KeyPolicyError } from "../access/keys.ts";
import { ArchiveError } from "../archive/archive.ts";
import { ImportError } from "../archive/upstream-import.ts";
import { ConfigError } from "../config.ts";
import { PlanConfigError } from "../domain/plan.ts";
import { WireFormatError } from "../wire/wire.ts";
import { ListenError } from "../server.ts";
import { CopyError } from "../store/copy.ts";
import { type Command, UsageError } from "./command.ts";
import { backfillCommand } from "./commands/backfill.ts";
import { backtestCommand } from "./commands/backtest.ts";
import { collectCommand } from "./commands/collect.ts";
import { copyCommand } from "./commands/copy.ts";
import { exportCommand } from "./commands/export.ts";
import { importCommand } from "./commands/import.ts";
import { keysCommand } from "./commands/keys.ts";
import { mcpCommand } from "./commands/mcp.ts";
import { migrateCommand } from "./commands/migrate.ts";
import { seedCommand } from "./commands/seed.ts";
import { serveCommand } from "./commands/serve.ts";
import { commandHelp, mainHelp } from "./help.ts";
import { isSystemError, oneLine } from "./messages.ts";

/** Every command, in the order `updown --help` lists them. */
export const COMMANDS: readonly Command[] = [
  serveCommand,
  collectCommand,
  migrateCommand,
  seedCommand,
  importCommand,
  exportCommand,
  keysCommand,
  copyCommand,
  backfillCommand,
  backtestCommand,
  mcpCommand,
];

/** Errors that mean "this cannot be done as asked": one line on stderr and exit status 2, no stack. */
const USAGE_ERRORS = [
  UsageError,
  ConfigError,
  PlanConfigError,
  ImportError,
  ArchiveError,
  WireFormatError,
  CopyError,
  ListenError,
];

async function run(argv: readonly string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "help") {
    process.stdout.write(`${mainHelp(COMMANDS)}\n`);
    return;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command ${name}\n\n${mainHelp(COMMANDS)}`);
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
      (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
    // A file or folder that a command meets only while it works (an output that cannot be written)
    // is as much the command line's matter as one it checks first.
    if (usage || isSystemError(err)) {
      process.stderr.write(`error: ${usage ? (err as Error).message : oneLine(err)}\n`);
      process.exit(2);
    }
    throw err;
  }
}
