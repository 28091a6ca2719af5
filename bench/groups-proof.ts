// Benchmark: a Semaphore v4 group proof, both ends, against the stock client
// in one run (bun run bench:groups-proof = bun bench/groups-proof.ts).
//
//   zkagent proof      the agent SDK end to end (src/agent/group/proof.ts
//                      proveGroupMembership: tree rebuilt from the member list,
//                      witness, zkagent's own prover, statement check); "first":
//                      the first proof at a depth in the process (artifacts read
//                      and hash-checked, prover built), then each later proof
//   stock proof        @semaphore-protocol/proof generateProof (snarkjs
//                      fullProve under node, its worker threads), the Group
//                      built once, the package's artifacts passed as paths
//   zkagent verify     the service's WebAssembly verifier (the depth's vk) on
//                      the stock client's proof
//   stock verify       @semaphore-protocol/proof verifyProof under node on the
//                      same proof
//   tree rebuild       the Lean IMT from a member list (poseidon-lite), per size
//
// The prover alone (zkagent's against snarkjs, per stage) is bench:prover.
// The machine is shared: the two sides alternate per depth and every figure
// is a median. Options: --iterations N (proofs per depth and side, default 5),
// --verifications N (per depth and side, default 50), --depths 4,10,20,32
// (at least 4: the group has 16 members),
// --sizes 1000,10000 (tree rebuild), --json (one object on stdout).
//
// --agent: instead, the agent's rows of issue 32, each proof in a new process
// (`bun -e` calling proveGroupChallenge, its own $XDG_CACHE_HOME) against a
// stand-in for the members route's changes feed on a loopback port
// (test/agent/group-feed-server.ts: the wire contract, pages of 100,000):
//   first     a group of --agent-size leaves (default 200,000), empty caches
//             (no tree, no prover tables): a sync from 0, the proof
//   next      a new process after --agent-added members (default 1,000) were
//             added, once the first process's detached table builder is done
//   large     a group of --agent-large leaves (default 1,000,000) after its
//             first sync: the cache file that sync writes is written by the
//             same writeTree from the bench's own tree (the first sync itself
//             costs what `first` shows per leaf; it is not re-run here)
// Each row: the child's wall time (process start to exit), the time of the
// sync and the proof (the sync timed on its own first), the leaf records the
// server sent; every proof is verified with the service's verifier.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { LeanIMT } from "@zk-kit/lean-imt";
import { poseidon2 } from "poseidon-lite/poseidon2";
import { createSemaphoreIdentity, loadSemaphoreArtifacts, proveGroupMembership } from "../src/agent";
import { cachedTablesPath, createProver } from "../src/prover";
import { semaphoreFile } from "../src/circuits/semaphore";
import { parseSemaphoreProof, publicSignals, unpackPoints } from "../src/groups/proof-object";
import { serviceVerifier } from "../src/verifier/service";
import { ARTIFACTS_DIR, ROOT } from "../test/agent/stock-semaphore";
import { median } from "./support";

const { values } = parseArgs({
  options: {
    iterations: { type: "string" },
    verifications: { type: "string" },
    depths: { type: "string" },
    sizes: { type: "string" },
    json: { type: "boolean" },
    agent: { type: "boolean" },
    "agent-size": { type: "string" },
    "agent-added": { type: "string" },
    "agent-large": { type: "string" },
  },
});
const iterations = Number(values.iterations ?? 5);
const verifications = Number(values.verifications ?? 50);
const depths = (values.depths ?? "4,10,20,32").split(",").map(Number);
const sizes = (values.sizes ?? "1000,10000").split(",").map(Number);
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);

if (values.agent) {
  const rows = await agentRows(Number(values["agent-size"] ?? 200_000), Number(values["agent-added"] ?? 1_000), Number(values["agent-large"] ?? 1_000_000));
  if (values.json) process.stdout.write(`${JSON.stringify({ agent: rows })}\n`);
  process.exit(0);
}

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
// One node process per depth: `warm` proofs first (snarkjs's start-up, discarded), then the timed ones, then verifyProof on the last.
const STOCK = `
import { generateProof, verifyProof } from ${entry("@semaphore-protocol/proof")};
import { Identity } from ${entry("@semaphore-protocol/identity")};
import { Group } from ${entry("@semaphore-protocol/group")};
const { privateKey, members, depth, iterations, verifications } = JSON.parse(process.argv[1]);
const identity = Identity.import(privateKey);
const group = new Group(members.map(BigInt));
const dir = ${JSON.stringify(ARTIFACTS_DIR)};
const artifacts = { wasm: dir + "/semaphore-" + depth + ".wasm", zkey: dir + "/semaphore-" + depth + ".zkey" };
let proof = await generateProof(identity, group, "999", "42", depth, artifacts);
const prove = [];
for (let i = 0; i < iterations; i++) {
  const t = performance.now();
  proof = await generateProof(identity, group, String(1000 + i), "42", depth, artifacts);
  prove.push(performance.now() - t);
}
if (!(await verifyProof(proof))) throw new Error("stock verifyProof refused the stock proof");
const verify = [];
for (let i = 0; i < verifications; i++) {
  const t = performance.now();
  await verifyProof(proof);
  verify.push(performance.now() - t);
}
process.stdout.write(JSON.stringify({ prove, verify, proof }));
process.exit(0);`;

async function stock(depth: number): Promise<{ prove: number[]; verify: number[]; proof: unknown }> {
  const payload = JSON.stringify({ privateKey: ids[3]!.private_key, members, depth, iterations, verifications });
  const child = Bun.spawn(["node", "--input-type=module", "-e", STOCK, payload], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`the stock client under node exited ${code}: ${err}`);
  return JSON.parse(out);
}

const results: Record<string, number>[] = [];
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
  const proof = parseSemaphoreProof(theirs.proof);
  if (!proof) throw new Error(`depth ${depth}: the stock proof does not parse`);
  const verifier = await serviceVerifier(JSON.parse(new TextDecoder().decode(await semaphoreFile(depth, "vk"))));
  const points = unpackPoints(proof.points);
  const signals = publicSignals(proof);
  const verifyTimes: number[] = [];
  for (let i = 0; i < verifications; i++) {
    const t = performance.now();
    const verdict = await verifier.verify(points, signals);
    verifyTimes.push(performance.now() - t);
    if (!verdict.ok) throw new Error(`depth ${depth}: zkagent's verifier refused the stock proof (${verdict.reason})`);
  }

  const row = {
    depth,
    zkagent_proof_first_ms: firstMs,
    zkagent_proof_ms: median(ours),
    stock_proof_ms: median(theirs.prove),
    proof_ratio: median(theirs.prove) / median(ours),
    zkagent_verify_ms: median(verifyTimes),
    stock_verify_ms: median(theirs.verify),
    verify_ratio: median(theirs.verify) / median(verifyTimes),
  };
  results.push(row);
  log(
    `depth ${String(depth).padStart(2)}: proof zkagent ${row.zkagent_proof_ms.toFixed(0)} ms (first ${firstMs.toFixed(0)} ms) · stock generateProof ${row.stock_proof_ms.toFixed(0)} ms · stock/zkagent ${row.proof_ratio.toFixed(2)}×` +
      ` | verify zkagent ${row.zkagent_verify_ms.toFixed(2)} ms · stock verifyProof ${row.stock_verify_ms.toFixed(2)} ms · stock/zkagent ${row.verify_ratio.toFixed(2)}×`,
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
if (values.json) process.stdout.write(`${JSON.stringify({ iterations, verifications, depths: results, tree_rebuild_ms: rebuild })}\n`);
// The verifier may hold a worker; the figures are out.
process.exit(0);

async function agentRows(size: number, added: number, large: number): Promise<Record<string, unknown>[]> {
  const { startFeedServer } = await import("../test/agent/group-feed-server");
  const { treePath, writeTree } = await import("../src/agent/group/cache");
  const feed = startFeedServer();
  feed.pageSize = 100_000;
  const home = mkdtempSync(join(tmpdir(), "zkagent-bench-agent-"));
  const member = createSemaphoreIdentity();
  const filler = (n: number, from: number) => Array.from({ length: n }, (_, i) => BigInt(from + i + 1) * 7_919n + 11n);
  const rows: Record<string, unknown>[] = [];

  const build = (group: string, n: number) => {
    const t = performance.now();
    const leaves = filler(n - 1, 0);
    leaves.splice(Math.floor(n / 3), 0, BigInt(member.identity_commitment));
    // In slices: the server's own tree (LeanTree, the agent's hashing) grows as a service's does.
    for (let at = 0; at < leaves.length; at += 100_000) feed.add(group, leaves.slice(at, at + 100_000));
    log(`(setup) the server's tree of ${n} leaves: ${((performance.now() - t) / 1000).toFixed(1)} s`);
  };

  const proveInChild = async (group: string, label: string) => {
    const state = feed.state(group);
    const challenge = {
      challenge_id: "ch_bench",
      nonce: "00",
      action: "purchase",
      group_id: group,
      merkle_tree_root: state.root.toString(),
      merkle_tree_depth: Math.max(1, state.depth),
      message: String(Date.now()),
      scope: "42",
      circuit_id: `semaphore-${state.depth}`,
      size: state.size,
    };
    const script = `
      const t0 = performance.now();
      const { proveGroupChallenge, syncGroupTree } = await import(${JSON.stringify(join(ROOT, "src/agent/index.ts"))});
      const t1 = performance.now();
      // The sync alone first (cache read, changes fetched and applied, root checked); proveGroupChallenge then finds the tree in memory and asks once more (no change).
      await syncGroupTree(${JSON.stringify(feed.url)}, ${JSON.stringify(group)}, { allowInsecureLoopback: true });
      const t2 = performance.now();
      const proof = await proveGroupChallenge({ privateKey: ${JSON.stringify(member.private_key)}, challenge: ${JSON.stringify(challenge)}, service: ${JSON.stringify(feed.url)} }, { allowInsecureLoopback: true });
      process.stdout.write(JSON.stringify({ import_ms: t1 - t0, sync_ms: t2 - t1, prove_ms: performance.now() - t1, proof }));
      process.exit(0);`;
    const artifacts = await loadSemaphoreArtifacts(challenge.merkle_tree_depth);
    const tablesBefore = existsSync(await cachedTablesPath(artifacts.zkey, join(home, "zkagent", "prover-tables")));
    feed.served.records = 0;
    const started = performance.now();
    const child = Bun.spawn([process.execPath, "-e", script], { cwd: ROOT, env: { ...process.env, XDG_CACHE_HOME: home }, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    const wallMs = performance.now() - started;
    if (code !== 0) throw new Error(`${label}: the agent process exited ${code}: ${err}`);
    const result = JSON.parse(out);
    const proof = parseSemaphoreProof(result.proof);
    if (!proof) throw new Error(`${label}: no proof`);
    const verifier = await serviceVerifier(JSON.parse(new TextDecoder().decode(await semaphoreFile(proof.merkleTreeDepth, "vk"))));
    const verdict = await verifier.verify(unpackPoints(proof.points), publicSignals(proof));
    if (!verdict.ok) throw new Error(`${label}: the proof does not verify (${verdict.reason})`);
    const row = {
      row: label,
      leaves: state.size,
      depth: state.depth,
      wall_ms: Math.round(wallMs),
      prove_ms: Math.round(result.prove_ms),
      sync_ms: Math.round(result.sync_ms),
      records_served: feed.served.records,
      tables_cached_before: tablesBefore,
    };
    rows.push(row);
    log(
      `agent ${label}: ${state.size} leaves (depth ${state.depth}): ${(wallMs / 1000).toFixed(2)} s process wall (${(result.prove_ms / 1000).toFixed(2)} s sync and proof, ${(result.sync_ms / 1000).toFixed(2)} s of it the sync), ${feed.served.records} leaf records served, tables cached before: ${tablesBefore}; verified`,
    );
    return row;
  };
  const waitForBuilder = async () => {
    const dir = join(home, "zkagent", "prover-tables");
    const t = performance.now();
    while (readdirSync(dir).some((f) => f.endsWith(".building")) || !readdirSync(dir).some((f) => f.endsWith(".tables"))) await Bun.sleep(250);
    log(`(setup) the detached table builder finished ${((performance.now() - t) / 1000).toFixed(1)} s after the first process exited`);
  };

  try {
    build("bench-first", size);
    rmSync(join(home, "zkagent"), { recursive: true, force: true });
    // mkdir for the "tables before" probe only: it stays empty.
    Bun.spawnSync(["mkdir", "-p", join(home, "zkagent", "prover-tables")]);
    await proveInChild("bench-first", "first proof, new process, empty caches");
    await waitForBuilder();
    feed.add("bench-first", filler(added, 10_000_000));
    await proveInChild("bench-first", `next proof, new process, ${added} members added since`);

    if (large > 0) {
      build("bench-large", large);
      // The file the first sync of this group writes (same function, same content), without paying its hashing twice here.
      // And the tables its first proof's detached builder leaves (built here, as build-tables.ts does).
      const depth = Math.max(1, feed.state("bench-large").depth);
      (await createProver(await loadSemaphoreArtifacts(depth), { precompute: true, tableCache: join(home, "zkagent", "prover-tables") })).close();
      const dir = join(home, "zkagent", "group-trees");
      writeTree(dir, treePath(dir, feed.url, "bench-large"), feed.url, "bench-large", feed.state("bench-large").version, feed.tree("bench-large"));
      await proveInChild("bench-large", "proof after its first sync");
    }
  } finally {
    feed.stop();
    rmSync(home, { recursive: true, force: true });
  }
  return rows;
}
