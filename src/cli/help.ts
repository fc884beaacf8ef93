import { type Option, type OptionName, OPTIONS, ruleOf, shownDefault } from "../config/options.ts";
import type { Command } from "./command.ts";

const WIDTH = 100;

/** Words into lines of at most WIDTH columns, each after `indent`. */
function wrap(text: string, indent: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && indent.length + line.length + 1 + word.length > WIDTH) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  lines.push(indent + line);
  return lines.join("\n");
}

/** One option of a command's help: its flags, then what it is for, its variable, default and rule. */
function optionHelp(name: OptionName): string {
  const option: Option<unknown> = OPTIONS[name];
  const isSwitch = option.switchTo !== undefined;
  const flags = option.flags.join(", ") + (isSwitch ? "" : ` ${option.type.placeholder}`);
  const facts = [
    `${option.doc[0].toUpperCase()}${option.doc.slice(1)}.`,
    isSwitch ? `A switch: sets ${option.type.show(option.switchTo)}.` : "",
    option.env && option.flags.length > 0 ? `Environment: ${option.env}.` : "",
    `Default: ${shownDefault(option)}.`,
    `Rule: ${ruleOf(option)}.`,
  ];
  const head = option.flags.length > 0 ? flags : `${option.env} (environment only)`;
  return `  ${head}\n${wrap(facts.filter((f) => f !== "").join(" "), "      ")}`;
}

/** `updown <command> --help`: how to call it, what it does, and every option it reads. */
export function commandHelp(command: Command): string {
  const options = command.options.map(optionHelp).join("\n");
  return `${command.help}\n\nOptions (a flag wins over its environment variable; see docs/configuration.md):\n${options}`;
}

/** `updown --help`: the commands and where configuration comes from. */
export function mainHelp(commands: readonly Command[]): string {
  const list = commands.map((c) => `  ${c.name.padEnd(8)}  ${c.summary}`).join("\n");
  return `updown: historical Polymarket Up or Down market data

Usage: updown <command> [options]

Commands:
${list}

Run 'updown <command> --help' for a command's options.
Configuration comes from the environment (PORT, HOST, DATABASE_URL, REDIS_URL, PLANS_FILE, LOG_LEVEL,
PAGE_CACHE_MB, SEED_DEMO, DEMO_COUNTS, ...); every variable but the secrets (METRICS_TOKEN, LLM_API_KEY,
UPDOWN_API_KEY) has a flag too (PORT: --port), and flags override the environment. See
docs/configuration.md.`;
}
