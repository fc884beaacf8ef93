import type { Store } from "../../src/store/ports/store.ts";

/**
 * A store whose runs the app's scheduler can claim only while the gate is open: a test that must see a
 * run still queued (a `wait: 0` answer of 202) holds the gate closed until its answer is in, since a
 * small run on a quiet machine (its worker warm) can otherwise end first, and the answer would rightly
 * be a 200.
 */
export class ClaimGate {
  private claims: Promise<void> = Promise.resolve();

  /** The store, its runs claimed only once the gate is open. */
  wrap(store: Store): Store {
    const bound = <T extends object>(target: T, p: string | symbol) => {
      const value = Reflect.get(target, p, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    };
    const backtests = new Proxy(store.backtests, {
      get: (target, p) => {
        if (p !== "claimRun") return bound(target, p);
        return async (...args: Parameters<typeof target.claimRun>) => {
          await this.claims;
          return target.claimRun(...args);
        };
      },
    });
    return new Proxy(store, { get: (target, p) => (p === "backtests" ? backtests : bound(target, p)) });
  }

  /** Runs `work` with the gate closed; it opens again after, whatever `work` did. */
  async closedDuring<T>(work: () => Promise<T>): Promise<T> {
    let open = () => {};
    this.claims = new Promise((resolve) => (open = resolve));
    try {
      return await work();
    } finally {
      open();
    }
  }
}
