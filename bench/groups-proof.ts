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
// Both WebAssembly builds (src/wasm-engine.ts; --builds, default wide,portable
// where the engine runs the wide one): the stock client runs once per depth,
// then each build in a new process (ZKAGENT_WASM set) proves and verifies the
// stock proof against those figures (--against FILE, internal).
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
// Each row runs once per WebAssembly build (src/wasm-engine.ts; --builds,
// default wide,portable where the engine runs the wide one): the child gets
// ZKAGENT_WASM and a cache directory of its own per build, so the two builds
// see the same group and neither finds the other's tables.
//   stock     the stock Semaphore v4 client in a new node process: the same
//             --agent-size members, `new Group(members)` then generateProof
//             (the package's artifacts passed as paths), each timed; the
//             proof verified with the service's verifier. The ratios
//             (stock group + proof against each build's first and next
//             process wall) are printed with it. --skip-stock leaves it out
//             (it takes ≈ 2 minutes at 200,000 members on this machine).
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { LeanIMT } from "@zk-kit/lean-imt";
import { poseidon2 } from "poseidon-lite/poseidon2";
import { createSemaphoreIdentity, loadSemaphoreArtifacts, proveGroupMembership } from "../src/agent";
import { createProver } from "../src/prover";
import { tablesPath } from "../src/prover/tables";
import { proverModuleDigest } from "../src/prover/wasm";
import { semaphoreFile } from "../src/circuits/semaphore";
import { groupMessageOf } from "../src/groups/derivation";
import { parseSemaphoreProof, publicSignals, unpackPoints } from "../src/groups/proof-object";
import { serviceVerifier } from "../src/verifier/service";
import { ARTIFACTS_DIR, ROOT } from "../test/agent/stock-semaphore";
import { WASM_BUILD, type WasmBuild } from "../src/wasm-engine";
import { argsOf, benchBuilds, median, runOnBuild } from "./support";

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
    "skip-stock": { type: "boolean" },
    builds: { type: "string" },
    against: { type: "string" },
  },
});
const iterations = Number(values.iterations ?? 5);
const verifications = Number(values.verifications ?? 50);
const depths = (values.depths ?? "4,10,20,32").split(",").map(Number);
const sizes = (values.sizes ?? "1000,10000").split(",").map(Number);
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);

if (values.agent) {
  const result = await agentRows(
    Number(values["agent-size"] ?? 200_000),
    Number(values["agent-added"] ?? 1_000),
    Number(values["agent-large"] ?? 1_000_000),
    benchBuilds(values.builds),
    values["skip-stock"] !== true,
  );
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
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

type Stock = Awaited<ReturnType<typeof stock>>;
interface DepthRow {
  build: WasmBuild;
  depth: number;
  zkagent_proof_first_ms: number;
  zkagent_proof_ms: number;
  stock_proof_ms: number;
  proof_ratio: number;
  zkagent_verify_ms: number;
  stock_verify_ms: number;
  verify_ratio: number;
}

/** Our proofs at a depth in this process (its build), and our verifier on the stock client's proof. */
async function depthRow(depth: number, theirs: Stock): Promise<DepthRow> {
  const first = performance.now();
  await proveGroupMembership({ privateKey: ids[3]!.private_key, members, challenge: challenge(depth, 0) });
  const firstMs = performance.now() - first;
  const ours: number[] = [];
  for (let i = 1; i <= iterations; i++) {
    const t = performance.now();
    await proveGroupMembership({ privateKey: ids[3]!.private_key, members, challenge: challenge(depth, i) });
    ours.push(performance.now() - t);
  }

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
  return {
    build: WASM_BUILD,
    depth,
    zkagent_proof_first_ms: firstMs,
    zkagent_proof_ms: median(ours),
    stock_proof_ms: median(theirs.prove),
    proof_ratio: median(theirs.prove) / median(ours),
    zkagent_verify_ms: median(verifyTimes),
    stock_verify_ms: median(theirs.verify),
    verify_ratio: median(theirs.verify) / median(verifyTimes),
  };
}

const logRow = (row: DepthRow) =>
  log(
    `depth ${String(row.depth).padStart(2)} (${row.build.padEnd(8)}): proof zkagent ${row.zkagent_proof_ms.toFixed(0)} ms (first ${row.zkagent_proof_first_ms.toFixed(0)} ms) · stock generateProof ${row.stock_proof_ms.toFixed(0)} ms · stock/zkagent ${row.proof_ratio.toFixed(2)}×` +
      ` | verify zkagent ${row.zkagent_verify_ms.toFixed(2)} ms · stock verifyProof ${row.stock_verify_ms.toFixed(2)} ms · stock/zkagent ${row.verify_ratio.toFixed(2)}×`,
  );

// A child of the run below: our rows on this process's build, against the stock figures and proofs the parent measured.
if (values.against) {
  const stocks = JSON.parse(readFileSync(values.against, "utf8")) as Record<string, Stock>;
  const rows: DepthRow[] = [];
  for (const depth of depths) rows.push(await depthRow(depth, stocks[depth]!));
  console.log(JSON.stringify({ build: WASM_BUILD, depths: rows }));
  process.exit(0);
}

const results: DepthRow[] = [];
const BUILDS = benchBuilds(values.builds);
if (BUILDS.length > 1 || BUILDS[0] !== WASM_BUILD) {
  // Both builds: the stock client once per depth, then each build in a new process (ZKAGENT_WASM set) against its figures and proofs.
  const stocks: Record<number, Stock> = {};
  for (const depth of depths) stocks[depth] = await stock(depth);
  const dir = mkdtempSync(join(tmpdir(), "zkagent-bench-groups-proof-"));
  const file = join(dir, "stock.json");
  writeFileSync(file, JSON.stringify(stocks));
  try {
    for (const build of BUILDS) {
      const args = [...argsOf(values, ["builds", "json"]), "--against", file, "--builds", build, "--json"];
      const run = await runOnBuild<{ build: WasmBuild; depths: DepthRow[] }>(import.meta.path, args, build);
      if (run.build !== build) throw new Error(`the ${build} run loaded the ${run.build} build`);
      for (const row of run.depths) logRow(row);
      results.push(...run.depths);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const [a, b] = BUILDS;
  if (a && b)
    for (const depth of depths) {
      const x = results.find((r) => r.build === a && r.depth === depth)!;
      const y = results.find((r) => r.build === b && r.depth === depth)!;
      log(
        `depth ${String(depth).padStart(2)}: ${a} against ${b}: proof ×${(y.zkagent_proof_ms / x.zkagent_proof_ms).toFixed(2)}, first proof ×${(y.zkagent_proof_first_ms / x.zkagent_proof_first_ms).toFixed(2)}, verify ×${(y.zkagent_verify_ms / x.zkagent_verify_ms).toFixed(2)}`,
      );
    }
} else
  for (const depth of depths) {
    const row = await depthRow(depth, await stock(depth));
    results.push(row);
    logRow(row);
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

/**
 * The stock client in a new node process: `n` members as the bench's feed
 * holds them, `new Group(members)`, then generateProof. A function: the
 * --agent run calls it before the module's later constants exist.
 */
function stockGroupScript(): string {
  const entry = (pkg: string) => JSON.stringify(Bun.resolveSync(pkg, ROOT));
  return `
import { generateProof } from ${entry("@semaphore-protocol/proof")};
import { Identity } from ${entry("@semaphore-protocol/identity")};
import { Group } from ${entry("@semaphore-protocol/group")};
const { privateKey, commitment, n, at, depth, message } = JSON.parse(process.argv[1]);
const members = Array.from({ length: n - 1 }, (_, i) => BigInt(i + 1) * 7919n + 11n);
members.splice(at, 0, BigInt(commitment));
const t0 = performance.now();
const group = new Group(members);
const t1 = performance.now();
const dir = ${JSON.stringify(ARTIFACTS_DIR)};
const proof = await generateProof(Identity.import(privateKey), group, message, "42", depth, { wasm: dir + "/semaphore-" + depth + ".wasm", zkey: dir + "/semaphore-" + depth + ".zkey" });
const t2 = performance.now();
process.stdout.write(JSON.stringify({ group_ms: t1 - t0, prove_ms: t2 - t1, root: group.root.toString(), proof }));
process.exit(0);`;
}

interface AgentRow {
  row: string;
  build: WasmBuild;
  leaves: number;
  depth: number;
  wall_ms: number;
  prove_ms: number;
  sync_ms: number;
  records_served: number;
  tables_cached_before: boolean;
}
interface StockRow {
  leaves: number;
  depth: number;
  group_ms: number;
  prove_ms: number;
  wall_ms: number;
}

async function agentRows(size: number, added: number, large: number, builds: WasmBuild[], withStock: boolean) {
  const { startFeedServer } = await import("../test/agent/group-feed-server");
  const { treePath, writeTree } = await import("../src/agent/group/cache");
  const feed = startFeedServer();
  feed.pageSize = 100_000;
  // One cache directory ($XDG_CACHE_HOME) per build: tables are per module, and each build's first proof starts empty.
  const homes = Object.fromEntries(builds.map((b) => [b, mkdtempSync(join(tmpdir(), `zkagent-bench-agent-${b}-`))])) as Record<WasmBuild, string>;
  const tablesDir = (build: WasmBuild) => join(homes[build], "zkagent", "prover-tables");
  const member = createSemaphoreIdentity();
  const filler = (n: number, from: number) => Array.from({ length: n }, (_, i) => BigInt(from + i + 1) * 7_919n + 11n);
  const rows: AgentRow[] = [];
  let stockRow: StockRow | undefined;

  const build = (group: string, n: number) => {
    const t = performance.now();
    const leaves = filler(n - 1, 0);
    leaves.splice(Math.floor(n / 3), 0, BigInt(member.identity_commitment));
    // In slices: the server's own tree (LeanTree, the agent's hashing) grows as a service's does.
    for (let at = 0; at < leaves.length; at += 100_000) feed.add(group, leaves.slice(at, at + 100_000));
    log(`(setup) the server's tree of ${n} leaves: ${((performance.now() - t) / 1000).toFixed(1)} s`);
  };

  const verified = async (label: string, object: unknown) => {
    const proof = parseSemaphoreProof(object);
    if (!proof) throw new Error(`${label}: no proof`);
    const verifier = await serviceVerifier(JSON.parse(new TextDecoder().decode(await semaphoreFile(proof.merkleTreeDepth, "vk"))));
    const verdict = await verifier.verify(unpackPoints(proof.points), publicSignals(proof));
    if (!verdict.ok) throw new Error(`${label}: the proof does not verify (${verdict.reason})`);
    return proof;
  };

  const proveInChild = async (group: string, label: string, build: WasmBuild) => {
    const state = feed.state(group);
    const nonce = randomBytes(31).toString("hex");
    const challenge = {
      challenge_id: "ch_bench",
      nonce,
      action: "purchase",
      group_id: group,
      merkle_tree_root: state.root.toString(),
      merkle_tree_depth: Math.max(1, state.depth),
      // The message a service derives from the nonce, action and context: the SDK refuses any other.
      message: groupMessageOf({ nonce, action: "purchase", context: {} }).toString(),
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
    // This build's tables for the depth (the file is named after the zkey and the module): a next proof that finds none, or the other build's, pays for them.
    const artifacts = await loadSemaphoreArtifacts(challenge.merkle_tree_depth);
    const tablesBefore = existsSync(tablesPath(tablesDir(build), artifacts.zkeySha256, await proverModuleDigest(build)));
    feed.served.records = 0;
    const started = performance.now();
    const child = Bun.spawn([process.execPath, "-e", script], {
      cwd: ROOT,
      env: { ...process.env, XDG_CACHE_HOME: homes[build], ZKAGENT_WASM: build },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    const wallMs = performance.now() - started;
    if (code !== 0) throw new Error(`${label} (${build} build): the agent process exited ${code}: ${err}`);
    const result = JSON.parse(out);
    await verified(`${label} (${build} build)`, result.proof);
    const row: AgentRow = {
      row: label,
      build,
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
      `agent ${label} (${build} build): ${state.size} leaves (depth ${state.depth}): ${(wallMs / 1000).toFixed(2)} s process wall (${(result.prove_ms / 1000).toFixed(2)} s sync and proof, ${(result.sync_ms / 1000).toFixed(2)} s of it the sync), ${feed.served.records} leaf records served, tables cached before: ${tablesBefore}; verified`,
    );
    return row;
  };
  const waitForBuilder = async (build: WasmBuild) => {
    const dir = tablesDir(build);
    const t = performance.now();
    while (readdirSync(dir).some((f) => f.endsWith(".building")) || !readdirSync(dir).some((f) => f.endsWith(".tables"))) await Bun.sleep(250);
    log(`(setup) the ${build} build's detached table builder finished ${((performance.now() - t) / 1000).toFixed(1)} s after its first process exited`);
  };

  const stock = async (group: string) => {
    const state = feed.state(group);
    const payload = JSON.stringify({
      privateKey: member.private_key,
      commitment: member.identity_commitment,
      n: state.size,
      at: Math.floor(state.size / 3),
      depth: Math.max(1, state.depth),
      message: String(Date.now()),
    });
    const started = performance.now();
    const child = Bun.spawn(["node", "--input-type=module", "-e", stockGroupScript(), payload], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    const wallMs = performance.now() - started;
    if (code !== 0) throw new Error(`the stock client under node exited ${code}: ${err}`);
    const result = JSON.parse(out);
    // The same members as the feed's group: the same root, else the comparison is of two different groups.
    if (result.root !== state.root.toString()) throw new Error(`the stock client's group has root ${result.root}, the feed's ${state.root}`);
    await verified("stock proof", result.proof);
    stockRow = {
      leaves: state.size,
      depth: state.depth,
      group_ms: Math.round(result.group_ms),
      prove_ms: Math.round(result.prove_ms),
      wall_ms: Math.round(wallMs),
    };
    log(
      `stock client, new node process: ${state.size} leaves (depth ${state.depth}): new Group(members) ${(result.group_ms / 1000).toFixed(1)} s + generateProof ${(result.prove_ms / 1000).toFixed(2)} s = ` +
        `${((result.group_ms + result.prove_ms) / 1000).toFixed(1)} s (process wall ${(wallMs / 1000).toFixed(1)} s); verified`,
    );
  };

  try {
    build("bench-first", size);
    for (const b of builds) {
      // mkdir for the "tables before" probe only: it stays empty until the first process's builder writes it.
      Bun.spawnSync(["mkdir", "-p", tablesDir(b)]);
      await proveInChild("bench-first", "first proof, new process, empty caches", b);
      // Its detached table builder runs on after it: done before the next build's first proof (or the stock client) shares the cores.
      await waitForBuilder(b);
    }
    if (withStock) await stock("bench-first");
    feed.add("bench-first", filler(added, 10_000_000));
    for (const b of builds) await proveInChild("bench-first", `next proof, new process, ${added} members added since`, b);

    if (large > 0) {
      build("bench-large", large);
      const depth = Math.max(1, feed.state("bench-large").depth);
      for (const b of builds) {
        // The file the first sync of this group writes (same function, same content), without paying its hashing twice here.
        // And the tables its first proof's detached builder leaves (built here, as build-tables.ts does, on that build).
        (await createProver(await loadSemaphoreArtifacts(depth), { precompute: true, tableCache: tablesDir(b), build: b })).close();
        const dir = join(homes[b], "zkagent", "group-trees");
        writeTree(dir, treePath(dir, feed.url, "bench-large"), feed.url, "bench-large", feed.state("bench-large").version, feed.tree("bench-large"));
        await proveInChild("bench-large", "proof after its first sync", b);
      }
    }
  } finally {
    feed.stop();
    for (const home of Object.values(homes)) rmSync(home, { recursive: true, force: true });
  }

  // Side by side: each build's first and next process against the stock client's group + proof (the field-engine table's row).
  const stockMs = stockRow ? stockRow.group_ms + stockRow.prove_ms : undefined;
  for (const kind of ["first", "next"] as const) {
    const line = builds.map((b) => {
      const r = rows.find((x) => x.build === b && x.row.startsWith(kind));
      if (!r) return `${b} —`;
      return `${b} ${(r.wall_ms / 1000).toFixed(2)} s${stockMs ? ` (${(stockMs / r.wall_ms).toFixed(1)}× the stock client)` : ""}`;
    });
    log(
      `${kind} proof, new process: ${line.join(" · ")}` +
        (stockMs ? `; stock ${(stockMs / 1000).toFixed(1)} s; goal ≥ ${kind === "first" ? 20 : 100}×` : "; stock client not measured (--skip-stock)"),
    );
  }
  return { builds, agent: rows, stock: stockRow };
}
