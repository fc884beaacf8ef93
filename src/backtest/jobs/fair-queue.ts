/**
 * The order queued runs start in (issue 24): round robin over accounts, and within an account round
 * robin over its keys, each key's runs first come first served. One account's twenty runs through ten
 * keys then hold up another account's run by at most one start, where a first-in first-out queue made
 * it wait for all twenty.
 */

/** Whose a run is: the account its key belongs to, and the key. */
export interface RunOwner {
  account: string;
  keyId: string;
}

export class FairQueue {
  /** Accounts in the order they are next served; each one's keys likewise, each key's runs oldest first. */
  private readonly accounts = new Map<string, Map<string, string[]>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(runId: string, owner: RunOwner): void {
    let keys = this.accounts.get(owner.account);
    if (keys === undefined) {
      keys = new Map();
      this.accounts.set(owner.account, keys);
    }
    const runs = keys.get(owner.keyId);
    if (runs === undefined) keys.set(owner.keyId, [runId]);
    else runs.push(runId);
    this.count++;
  }

  /** The next run to start: the next account's next key's oldest run; both then go to the back. */
  shift(): string | undefined {
    const next = this.accounts.entries().next();
    if (next.done === true) return undefined;
    const [account, keys] = next.value;
    const [keyId, runs] = keys.entries().next().value as [string, string[]];
    const runId = runs.shift() as string;
    this.count--;
    // A Map iterates in insertion order: deleting and setting again moves an entry to the back.
    keys.delete(keyId);
    if (runs.length > 0) keys.set(keyId, runs);
    this.accounts.delete(account);
    if (keys.size > 0) this.accounts.set(account, keys);
    return runId;
  }
}
