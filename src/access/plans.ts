import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PlanConfigError, type Plans, parsePlans } from "../domain/plan.ts";

/** The defaults of DESIGN 3.3, shipped as a file so that operators can read and copy them. */
export const DEFAULT_PLANS_FILE = fileURLToPath(new URL("../../config/plans.json", import.meta.url));

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new PlanConfigError(`cannot read plans file ${path}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new PlanConfigError(`plans file ${path} is not JSON: ${(err as Error).message}`);
  }
}

/** The default plans, with `PLANS_FILE` (when given) laid over them. */
export function loadPlans(plansFile: string | null = null): Plans {
  const defaults = readJson(DEFAULT_PLANS_FILE);
  if (plansFile === null) return parsePlans(defaults);
  const override = readJson(plansFile);
  try {
    return parsePlans(defaults, override);
  } catch (err) {
    throw err instanceof PlanConfigError ? new PlanConfigError(`${plansFile}: ${err.message}`) : err;
  }
}
