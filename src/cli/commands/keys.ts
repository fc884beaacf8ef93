import { KeyService } from "../../access/keys.ts";
import { loadPlans } from "../../access/plans.ts";
import { PLAN_NAMES } from "../../domain/api-key.ts";
import { systemClock } from "../../domain/time.ts";
import type { Values } from "../../config/options.ts";
import { defineCommand, UsageError, withStore } from "../command.ts";

const HELP = `updown keys create --plan starter|pro|enterprise [--account NAME] [--name TEXT]
                   [--per-minute N] [--per-day N]
updown keys list
updown keys revoke KEY_ID

create prints only the new key on stdout (shown once; only its SHA-256 is stored). --account (default
"default") is who holds the key: a plan allows a number of active keys per account (keys_per_account
in the plans file), and create refuses past it with exit status 1. --per-minute and --per-day set an
enterprise key's own limits (default: the plan's). list shows ids, plans, accounts, states and names
(a header row, then one key a line, tab-separated), never keys. revoke takes the id shown by list
(the 8 characters after ud_) and takes effect at once.`;

type KeyValues = Values<"plan" | "account" | "keyName" | "perMinute" | "perDay">;

async function create(keys: KeyService, values: KeyValues): Promise<void> {
  if (values.plan === null) throw new UsageError(`keys create needs --plan ${PLAN_NAMES.join("|")}`);
  const created = await keys.create({
    plan: values.plan,
    account: values.account ?? undefined,
    name: values.keyName,
    perMinuteLimit: values.perMinute,
    perDayLimit: values.perDay,
  });
  process.stdout.write(`${created.key}\n`);
}

async function list(keys: KeyService): Promise<void> {
  process.stdout.write("id\tplan\taccount\tstate\tname\n");
  for (const k of await keys.list()) {
    const state = k.revokedAt === null ? "active" : "revoked";
    process.stdout.write(`${k.id}\t${k.plan}\t${k.account}\t${state}\t${k.name ?? ""}\n`);
  }
}

async function revoke(keys: KeyService, id: string): Promise<void> {
  const bareId = id.startsWith("ud_") ? id.slice(3, 11) : id;
  if (!(await keys.revoke(bareId))) throw new UsageError(`no active key with id ${bareId}`);
  process.stderr.write(`Revoked ${bareId}.\n`);
}

export const keysCommand = defineCommand({
  name: "keys",
  summary: "Create, list and revoke API keys",
  help: HELP,
  options: ["databaseUrl", "plansFile", "plan", "account", "keyName", "perMinute", "perDay"],
  run: async (values, [action, id]) => {
    const plans = loadPlans(values.plansFile);
    await withStore(values.databaseUrl, async (store) => {
      const keys = new KeyService(store.keys, systemClock, plans);
      if (action === "create") await create(keys, values);
      else if (action === "list") await list(keys);
      else if (action === "revoke" && id) await revoke(keys, id);
      else throw new UsageError(HELP);
    });
  },
});
