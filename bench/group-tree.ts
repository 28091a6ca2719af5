// bench:group-tree — the service's group tree since issue 37 (GroupTree over
// the byte-backed LeanTree, src/groups/tree.ts) against what it replaced: a
// @zk-kit/lean-imt LeanIMT of bigints with the same WebAssembly Poseidon,
// its insertMany for additions and update for removals, and a Map of
// decimal commitments. Both take the same changes in one run, in turns, and
// must give the same root: a group of --members, then --rounds additions of
// --batch, then --removals removals. Prints the time of each and the memory
// each tree holds per member (ours: its buffers; theirs: the heap growth,
// measured after a collection, for the tree and its map).
// Both WebAssembly builds (src/wasm-engine.ts), the hash being the process's:
// the bench runs itself once per build in a new process (ZKAGENT_WASM set)
// and prints them one after the other, with the ratio of the builds.
//
//   bun bench/group-tree.ts [--members 20000] [--batch 10000] [--rounds 3] [--removals 200] [--builds wide,portable] [--json]
import { parseArgs } from "node:util";
import { LeanIMT } from "@zk-kit/lean-imt";
import { poseidon2 } from "../src/groups/poseidon";
import { GroupTree } from "../src/groups/tree";
import { WASM_BUILD } from "../src/wasm-engine";
import { argsOf, benchBuilds, runOnBuild } from "./support";

const { values } = parseArgs({
  options: {
    members: { type: "string" },
    batch: { type: "string" },
    rounds: { type: "string" },
    removals: { type: "string" },
    builds: { type: "string" },
    json: { type: "boolean" },
  },
});
const MEMBERS = Number(values.members ?? 20_000);
const BATCH = Number(values.batch ?? 10_000);
const ROUNDS = Number(values.rounds ?? 3);
const REMOVALS = Number(values.removals ?? 200);

const commitment = (i: number) => String(7n + BigInt(i) * 1_000_003n);
const batch = (n: number, from: number) => Array.from({ length: n }, (_, i) => commitment(from + i));

/** The tree before issue 37, reduced to what a change does: lean-imt's levels and a Map of commitments. */
class BigintTree {
  readonly tree = new LeanIMT<bigint>(poseidon2);
  readonly at = new Map<string, number>();
  add(commitments: string[]): void {
    const first = this.tree.size;
    this.tree.insertMany(commitments.map(BigInt));
    commitments.forEach((c, i) => this.at.set(c, first + i));
  }
  remove(c: string): void {
    const index = this.at.get(c)!;
    this.at.delete(c);
    this.tree.update(index, 0n);
  }
  get root(): string {
    return this.tree.root.toString();
  }
}

const heap = () => {
  Bun.gc(true);
  return process.memoryUsage().heapUsed;
};
const timed = (work: () => void) => {
  const started = performance.now();
  work();
  return performance.now() - started;
};

type Result = {
  build: string;
  members: number;
  batch: number;
  rounds: number;
  removals: number;
  ms: { ours: { additions: number; removals: number }; theirs: { additions: number; removals: number } };
  bytesPerMember: { ours: number; theirsAtStart: number };
};
const print = (r: Result) => {
  const { ours, theirs } = r.ms;
  console.log(`${r.build} build: ${r.members} members, then ${r.rounds} × ${r.batch} additions and ${r.removals} removals; same root`);
  console.log(
    `  additions: ours ${ours.additions.toFixed(0)} ms, lean-imt ${theirs.additions.toFixed(0)} ms (×${(theirs.additions / ours.additions).toFixed(2)})`,
  );
  console.log(`  removals:  ours ${ours.removals.toFixed(0)} ms, lean-imt ${theirs.removals.toFixed(0)} ms (×${(theirs.removals / ours.removals).toFixed(2)})`);
  console.log(
    `  memory per member: ours ${r.bytesPerMember.ours.toFixed(0)} B (buffers), lean-imt + Map ${r.bytesPerMember.theirsAtStart.toFixed(0)} B (heap growth)`,
  );
};

// Several builds, or another one than this process's: one new process per build.
const BUILDS = benchBuilds(values.builds);
if (BUILDS.length > 1 || BUILDS[0] !== WASM_BUILD) {
  const runs: Result[] = [];
  for (const build of BUILDS) {
    const run = await runOnBuild<Result>(import.meta.path, [...argsOf(values, ["builds", "json"]), "--builds", build, "--json"], build);
    if (run.build !== build) throw new Error(`the ${build} run loaded the ${run.build} build`);
    runs.push(run);
    if (!values.json) print(run);
  }
  const [a, b] = runs;
  if (a && b && !values.json)
    console.log(
      `${a.build} against ${b.build}: ours' additions ×${(b.ms.ours.additions / a.ms.ours.additions).toFixed(2)}, removals ×${(b.ms.ours.removals / a.ms.ours.removals).toFixed(2)}`,
    );
  if (values.json) console.log(JSON.stringify({ runs }));
  process.exit(0);
}

const before = heap();
const theirs = new BigintTree();
theirs.add(batch(MEMBERS, 0));
const theirBytes = heap() - before;
const ours = new GroupTree();
ours.add(batch(MEMBERS, 0));

const rows = { ours: { additions: 0, removals: 0 }, theirs: { additions: 0, removals: 0 } };
for (let round = 0; round < ROUNDS; round++) {
  const next = batch(BATCH, MEMBERS + round * BATCH);
  rows.ours.additions += timed(() => ours.add(next));
  rows.theirs.additions += timed(() => theirs.add(next));
}
for (let k = 0; k < REMOVALS; k++) {
  rows.ours.removals += timed(() => ours.remove(commitment(k * 13)));
  rows.theirs.removals += timed(() => theirs.remove(commitment(k * 13)));
}
if (ours.state.root !== theirs.root) throw new Error("the trees' roots differ");
const result: Result = {
  build: WASM_BUILD,
  members: MEMBERS,
  batch: BATCH,
  rounds: ROUNDS,
  removals: REMOVALS,
  ms: rows,
  bytesPerMember: { ours: ours.bytes / MEMBERS === 0 ? 0 : ours.bytes / ours.state.size, theirsAtStart: theirBytes / MEMBERS },
};
if (values.json) console.log(JSON.stringify(result));
else print(result);
