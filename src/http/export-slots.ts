/**
 * Exports streaming at once in this process (issue 21): each holds a reader's worth of memory for as
 * long as its reader takes, so a key may have `perKey` at once and the process `perProcess`. The counts
 * are this process's: with replicas, each has its own.
 */
export type ExportSlot = { taken: true; release: () => void } | { taken: false; full: "key" | "process" };

export class ExportSlots {
  private readonly byKey = new Map<string, number>();
  private total = 0;
  readonly perKey: number;
  readonly perProcess: number;

  constructor(limits: { perKey: number; perProcess: number }) {
    this.perKey = limits.perKey;
    this.perProcess = limits.perProcess;
  }

  /** A slot for one export of the key, given back once by `release`; or which cap is full. */
  take(keyId: string): ExportSlot {
    const mine = this.byKey.get(keyId) ?? 0;
    if (mine >= this.perKey) return { taken: false, full: "key" };
    if (this.total >= this.perProcess) return { taken: false, full: "process" };
    this.byKey.set(keyId, mine + 1);
    this.total++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.byKey.get(keyId) ?? 1) - 1;
      if (left === 0) this.byKey.delete(keyId);
      else this.byKey.set(keyId, left);
    };
    return { taken: true, release };
  }

  /** Exports streaming now: the key's, or all. */
  inFlight(keyId?: string): number {
    return keyId === undefined ? this.total : (this.byKey.get(keyId) ?? 0);
  }
}
