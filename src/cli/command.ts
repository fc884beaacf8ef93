import type { OptionName, Values } from "../config/options.ts";
import { readOptions } from "../config/read.ts";
import { openStore } from "../store/open.ts";
import type { Store } from "../store/store.ts";

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
  run(values: Values<N>, positionals: string[]): Promise<void>;
}

/** A command whose options are read from its arguments and the environment by the one shared reader. */
export function defineCommand<N extends OptionName>(spec: CommandSpec<N>): Command {
  return {
    name: spec.name,
    summary: spec.summary,
    help: spec.help,
    options: spec.options,
    run: (args, env) => {
      const { values, positionals } = readOptions(spec.options, args, env);
      return spec.run(values, positionals);
    },
  };
}

/** Opens (and migrates) the store, does the work, and closes the store whatever happens. */
export async function withStore<T>(databaseUrl: string, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(databaseUrl);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
