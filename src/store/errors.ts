import { BACKENDS } from "./backends.ts";

/**
 * Whether an error means the store cannot serve for now (answer 503 and retry), as opposed to a bug
 * or bad data (500): whichever backend's driver threw it says so (src/store/backends.ts).
 */
export function isStoreUnavailable(err: unknown): boolean {
  return BACKENDS.some((backend) => backend.isUnavailable(err));
}
