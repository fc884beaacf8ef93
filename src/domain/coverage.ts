import type { Micros } from "./time.ts";

/**
 * How completely a market was recorded. The holes come from the stored snapshots themselves (so that
 * imported and demo data are judged the same way as recorded data); their causes come from the gaps
 * the collector recorded, matched by overlap.
 */

export interface RecordedGap {
  from: Micros;
  to: Micros;
  cause: string;
  detail: string | null;
}

export interface CoverageInput {
  startTime: number;
  endTime: number;
  now: Micros;
  cadence: Micros;
  recorded: number;
  first: Micros | null;
  last: Micros | null;
  /** Consecutive snapshots farther apart than 1.5 cadences. */
  holes: { after: Micros; before: Micros }[];
  gaps: RecordedGap[];
}

export interface CoverageHole {
  /** The last snapshot before the hole, or the market's start. */
  from: Micros;
  /** The first snapshot after the hole, or the end of what could be recorded so far. */
  to: Micros;
  missing: number;
  cause: string;
  detail: string | null;
}

export interface Coverage {
  /** The end of what could be recorded so far: the market's end, or now while it is live. */
  until: Micros;
  expected: number;
  recorded: number;
  missing: number;
  /** The longest span without a snapshot, in microseconds (0 when there is no hole). */
  largestGap: Micros;
  holes: CoverageHole[];
}

/** A hole with no recorded cause: data imported, or recorded before gaps were kept. */
const UNKNOWN = { cause: "unknown", detail: "no cause was recorded for this span" };

/** The cause of the recorded gap overlapping the span most. */
function causeOf(from: Micros, to: Micros, gaps: RecordedGap[]): { cause: string; detail: string | null } {
  let best: RecordedGap | null = null;
  let bestOverlap = 0;
  for (const g of gaps) {
    const overlap = Math.min(to, g.to) - Math.max(from, g.from);
    if (overlap >= 0 && (best === null || overlap > bestOverlap)) {
      best = g;
      bestOverlap = overlap;
    }
  }
  return best ? { cause: best.cause, detail: best.detail } : UNKNOWN;
}

export function computeCoverage(input: CoverageInput): Coverage {
  const { cadence } = input;
  const start = input.startTime * 1e6;
  const until = Math.max(start, Math.min(input.now, input.endTime * 1e6));
  let expected = Math.floor((until - start) / cadence);
  // While a market is live, the slot in progress counts once its snapshot is in (else a market recorded
  // up to this second would show one snapshot more than expected).
  const live = until < input.endTime * 1e6;
  if (live && input.last !== null && input.last >= start + expected * cadence) expected += 1;
  const spans: { from: Micros; to: Micros; missing: number }[] = [];
  if (input.first === null || input.last === null) {
    if (expected > 0) spans.push({ from: start, to: until, missing: expected });
  } else {
    // The slot at the start is due in [start, start + cadence).
    const leading = Math.floor((input.first - start) / cadence);
    if (leading > 0) spans.push({ from: start, to: input.first, missing: leading });
    for (const h of input.holes) {
      spans.push({ from: h.after, to: h.before, missing: Math.round((h.before - h.after) / cadence) - 1 });
    }
    if (until - input.last > 1.5 * cadence) {
      spans.push({ from: input.last, to: until, missing: Math.ceil((until - input.last) / cadence) - 1 });
    }
  }
  const holes = spans
    .filter((s) => s.missing > 0)
    .map((s) => ({ ...s, ...causeOf(s.from, s.to, input.gaps) }));
  return {
    until,
    expected,
    recorded: input.recorded,
    missing: holes.reduce((sum, h) => sum + h.missing, 0),
    largestGap: holes.reduce((max, h) => Math.max(max, h.to - h.from), 0),
    holes,
  };
}

/** Recorded against expected snapshots over a span; `coverage` null when nothing was expected. */
export interface SpanCoverage {
  expected: number;
  recorded: number;
  coverage: number | null;
}

function spanCoverage(fromUs: Micros, toUs: Micros, cadence: Micros, recorded: number): SpanCoverage {
  const expected = Math.max(0, Math.floor((toUs - fromUs) / cadence));
  const coverage = expected === 0 ? null : Math.min(1, Math.round((recorded / expected) * 1e4) / 1e4);
  return { expected, recorded, coverage };
}

export interface SeriesCoverageInput {
  /** The series' first market's start and its last market's end (Unix seconds). */
  firstStart: number;
  lastEnd: number;
  snapshots: number;
  /** Snapshots at or after `windowStart`. */
  snapshotsInWindow: number;
  /** Unix second the recent window starts at (now less a day). */
  windowStart: number;
  now: Micros;
  cadence: Micros;
}

/**
 * How completely a series was recorded, overall and over the recent window. A series' markets follow
 * each other without a pause, so every cadence from its first recorded market's start until now (or
 * its last market's end, if earlier) is expected, whether or not that market's record was stored.
 */
export function seriesCoverage(i: SeriesCoverageInput): { overall: SpanCoverage; recent: SpanCoverage } {
  const until = Math.min(i.now, i.lastEnd * 1e6);
  const recentFrom = Math.max(i.windowStart, i.firstStart) * 1e6;
  return {
    overall: spanCoverage(i.firstStart * 1e6, until, i.cadence, i.snapshots),
    recent: spanCoverage(recentFrom, until, i.cadence, i.snapshotsInWindow),
  };
}
