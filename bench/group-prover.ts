// Benchmark: a Semaphore v4 group proof made by the agent SDK (zkagent's own
// prover, src/agent/group.ts) against the stock client
// (@semaphore-protocol/proof generateProof: snarkjs fullProve under node, its
// default worker threads), same artifacts, same group, in one run
// (bun run bench:group = bun bench/group-prover.ts).
//
//   zkagent first      the first proof at a depth in a process: artifacts read and
//                      hash-checked, prover built (window tables), proof
//   zkagent            each later proof (the prover kept): tree rebuild, witness,
//                      proof, statement check
//   stock              generateProof with the Group built once, artifacts passed
//                      as paths (snarkjs reads them on every call)
//   tree rebuild       the Lean IMT from a member list (poseidon-lite), per size
//
// The machine is shared: the two sides alternate per depth and every figure is
// a median. Options: --iterations N (proofs per depth and side, default 5),
// --depths 4,10,20,32, --sizes 1000,10000 (tree rebuild), --json.
import { LeanIMT } from "@zk-kit/lean-imt";
import { poseidon2 } from "poseidon-lite/poseidon2";
import { createSemaphoreIdentity, proveGroupMembership } from "../src/agent";
import { ARTIFACTS_DIR, ROOT } from "../test/agent/stock-semaphore";
import { median } from "./support";

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : fallback);
const iterations = Number(option("--iterations", "5"));
const depths = option("--depths", "4,10,20,32").split(",").map(Number);
const sizes = option("--sizes", "1000,10000").split(",").map(Number);
const json = args.includes("--json");
const log = (line: string) => (json ? process.stderr : process.stdout).write(`${line}\n`);

const ids = Array.from({ length: 16 }, () => createSemaphoreIdentity());
const members = ids.map((id) => id.identity_commitment);
const root = new LeanIMT<bigint>((a, b) => poseidon2([a, b]), members.map(BigInt)).root.toString();
const challenge = (depth: number, i: number) => ({
  challenge_id: "ch_bench",
  nonce: "00",
  action: "purchase",
  group_id: "bench",
  merkle_tree_root: root,
  merkle_tree_depth: depth,
  message: String(1000 + i),
  scope: "42",
  circuit_id: `semaphore-${depth}`,
});

const entry = (pkg: string) => JSON.stringify(Bun.resolveSync(pkg, ROOT));
const STOCK = `
import { generateProof } from ${entry("@semaphore-protocol/proof")};
import { Identity } from ${entry("@semaphore-protocol/identity")};
import { Group } from ${entry("@semaphore-protocol/group")};
const { privateKey, members, depth, iterations } = JSON.parse(process.argv[1]);
const identity = Identity.import(privateKey);
const group = new Group(members.map(BigInt));
const dir = ${JSON.stringify(ARTIFACTS_DIR)};
const artifacts = { wasm: dir + "/semaphore-" + depth + ".wasm", zkey: dir + "/semaphore-" + depth + ".zkey" };
const times = [];
for (let i = 0; i < iterations; i++) {
  const t = performance.now();
  await generateProof(identity, group, String(1000 + i), "42", depth, artifacts);
  times.push(performance.now() - t);
}
process.stdout.write(JSON.stringify(times));
process.exit(0);`;

async function stock(depth: number): Promise<number[]> {
  const payload = JSON.stringify({ privateKey: ids[3]!.private_key, members, depth, iterations });
  const child = Bun.spawn(["node", "--input-type=module", "-e", STOCK, payload], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`stock generateProof under node exited ${code}: ${err}`);
  return JSON.parse(out);
}

const results: Record<string, unknown>[] = [];
for (const depth of depths) {
  const first = performance.now();
  await proveGroupMembership({ privateKey: ids[3]!.private_key, members, challenge: challenge(depth, 0) });
  const firstMs = performance.now() - first;
  const ours: number[] = [];
  for (let i = 1; i <= iterations; i++) {
    const t = performance.now();
    await proveGroupMembership({ privateKey: ids[3]!.private_key, members, challenge: challenge(depth, i) });
    ours.push(performance.now() - t);
  }
  const theirs = await stock(depth);
  const row = { depth, zkagent_first_ms: firstMs, zkagent_ms: median(ours), stock_ms: median(theirs), ratio: median(theirs) / median(ours) };
  results.push(row);
  log(
    `depth ${String(depth).padStart(2)}: zkagent ${row.zkagent_ms.toFixed(0)} ms (first ${firstMs.toFixed(0)} ms) · stock generateProof ${row.stock_ms.toFixed(0)} ms · stock/zkagent ${row.ratio.toFixed(2)}×`,
  );
}

const rebuild: Record<string, number> = {};
for (const size of sizes) {
  const leaves = Array.from({ length: size }, (_, i) => BigInt(i + 1) * 7919n);
  const t = performance.now();
  new LeanIMT<bigint>((a, b) => poseidon2([a, b]), leaves);
  rebuild[size] = performance.now() - t;
  log(`tree rebuild, ${size} members: ${rebuild[size]!.toFixed(0)} ms (${((rebuild[size]! / size) * 1000).toFixed(0)} µs per member)`);
}
if (json) process.stdout.write(`${JSON.stringify({ iterations, proofs: results, tree_rebuild_ms: rebuild })}\n`);
