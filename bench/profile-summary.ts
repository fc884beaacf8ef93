/**
 * Summarizes a .cpuprofile (from `BENCH_CPU_PROF=dir npm run bench` or `node --cpu-prof`): the
 * functions with the most self time, and the most inclusive time, with their source location.
 *
 *   node bench/profile-summary.ts bench/results/profiles/cold-books-.cpuprofile [top=30]
 */
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topText] = process.argv.slice(2);
if (!file) {
  console.error("usage: node bench/profile-summary.ts FILE.cpuprofile [top]");
  process.exit(2);
}
const top = Number(topText ?? 30);
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const label = (f: CallFrame) =>
  `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\/(node_modules|src)\//, "$1/")}:${f.lineNumber + 1}`;

const selfUs = new Map<string, number>();
const totalUs = new Map<string, number>();
let all = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0;
  all += dt;
  let node = byId.get(profile.samples[i]);
  if (!node) continue;
  const self = label(node.callFrame);
  selfUs.set(self, (selfUs.get(self) ?? 0) + dt);
  const seen = new Set<string>();
  while (node) {
    const l = label(node.callFrame);
    if (!seen.has(l)) {
      seen.add(l);
      totalUs.set(l, (totalUs.get(l) ?? 0) + dt);
    }
    const p = parent.get(node.id);
    node = p === undefined ? undefined : byId.get(p);
  }
}

const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (of ${(all / 1000).toFixed(0)} ms)`);
  for (const [name, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${((100 * us) / all).toFixed(1).padStart(6)}%  ${name}`);
  }
};
show("self time", selfUs);
show("total time", totalUs);
