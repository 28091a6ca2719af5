// The prover on Semaphore v4 (the stock artifacts, depths 1–20): proofs of
// random statements — random groups, members, messages and scopes — pass the
// stock client's verifyProof (@semaphore-protocol/proof) and snarkjs
// groth16.verify, both under node in two child processes for the whole batch
// (they start worker threads that never finish under Bun), and each fails for
// a neighbouring statement (message, scope, root or nullifier changed: the
// stock verifyProof under node, our verifier here). The
// witness and H's coefficients are compared with snarkjs's in
// differential.test.ts, which runs the same staged checks on Semaphore.
//
// Depths are spread so that the test stays within its budget: a proof costs
// ≈ 0.39 s of CPU at depth 1 and ≈ 1.3 s at depth 20 (no tables, measured
// under load), so 200 at depth 20 would be ≈ 260 s. Here: 156 statements at
// depth 1, 6 at each of 2–5, 2 at each of 6–10, 1 at each of 11–20. Two
// child processes prove (one per core, test/prover/semaphore-prove.ts), each
// depth's prover built once there, with window tables only where they pay
// (depth 1; differential.test.ts covers both modes of the MSM).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { Groth16Verifier } from "../../src/verifier";
import { R, ROOT } from "./support";
import { semaphoreArtifacts } from "./semaphore";
import type { ProvedStatement } from "./semaphore-prove";

// ≈ 126 s of CPU in all (measured at load average ≈ 4): ≈ 55–65 s on two quiet cores; the margin is for a shared machine.
setDefaultTimeout(600_000);

/** Statements per depth: 200 in all, most where a proof is cheapest (depth 1: 1,761 signals; depth 20: 6,454). */
const PER_DEPTH = (d: number) => (d === 1 ? 156 : d <= 5 ? 6 : d <= 10 ? 2 : 1);
const DEPTHS = Array.from({ length: 20 }, (_, i) => i + 1);

interface Case {
  depth: number;
  vkey: unknown;
  publicSignals: string[];
  proof: unknown;
  semaphore: { merkleTreeDepth: number; merkleTreeRoot: string; nullifier: string; message: string; scope: string };
  /** Which neighbour: 0 message, 1 scope, 2 root, 3 nullifier changed by one. */
  neighbour: number;
}

// Under node: for each case, [stock verifyProof, snarkjs verify, stock verifyProof on the
// neighbouring statement]. (Our verifier checks the neighbouring public signals in the test itself.)
const SCRIPT = `
import * as snarkjs from ${JSON.stringify(join(ROOT, "node_modules/snarkjs/main.js"))};
import { verifyProof, packGroth16Proof } from ${JSON.stringify(join(ROOT, "node_modules/@semaphore-protocol/proof/dist/index.node.js"))};
let text = "";
for await (const chunk of process.stdin) text += chunk;
const quiet = { log() {}, info() {}, debug() {}, warn() {}, error() {} };
const R = ${R}n;
const bump = (x) => ((BigInt(x) + 1n) % R).toString();
const out = [];
for (const c of JSON.parse(text)) {
  const points = packGroth16Proof(c.proof);
  const proof = { ...c.semaphore, points };
  const other = { ...proof };
  if (c.neighbour === 0) { other.message = bump(other.message); }
  else if (c.neighbour === 1) { other.scope = bump(other.scope); }
  else if (c.neighbour === 2) { other.merkleTreeRoot = bump(other.merkleTreeRoot); }
  else { other.nullifier = bump(other.nullifier); }
  out.push([
    await verifyProof(proof),
    await snarkjs.groth16.verify(c.vkey, c.publicSignals, c.proof, quiet),
    await verifyProof(other),
  ]);
}
process.stdout.write(JSON.stringify(out));
process.exit(0);`;

async function nodeVerify(cases: Case[]): Promise<boolean[][]> {
  const child = Bun.spawn(["node", "--input-type=module", "-e", SCRIPT], { cwd: ROOT, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  child.stdin.write(JSON.stringify(cases));
  await child.stdin.end();
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`verification under node exited ${code}: ${stderr}`);
  return JSON.parse(stdout);
}

/** nodeVerify in two node processes at once (one per core), verdicts in the cases' order. */
async function nodeVerifyAll(cases: Case[]): Promise<boolean[][]> {
  const half = Math.ceil(cases.length / 2);
  const [a, b] = await Promise.all([nodeVerify(cases.slice(0, half)), nodeVerify(cases.slice(half))]);
  return [...a, ...b];
}

/** Proves the [depth, groupSize] jobs in a child process (test/prover/semaphore-prove.ts). */
async function proveInChild(jobs: [number, number][]): Promise<ProvedStatement[]> {
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "semaphore-prove.ts")], { cwd: ROOT, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  child.stdin.write(JSON.stringify(jobs));
  await child.stdin.end();
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`the proving child exited ${code}: ${stderr}`);
  return JSON.parse(stdout);
}

describe("Semaphore v4, depths 1–20", () => {
  test("200 random statements: each proof passes the stock verifyProof and snarkjs, and fails for a neighbouring statement", async () => {
    // Groups of 1 to 2^min(depth, 7) members, so that shallow trees inside deep circuits occur too.
    const jobs: [number, number][] = DEPTHS.flatMap((depth) =>
      Array.from({ length: PER_DEPTH(depth) }, () => [depth, 1 + Math.floor(Math.random() * 2 ** Math.min(depth, 7))] as [number, number]),
    );
    expect(jobs).toHaveLength(200);
    // Two children, one per core, each with every other job.
    const halves = await Promise.all([0, 1].map((half) => proveInChild(jobs.filter((_, i) => i % 2 === half))));
    const proved = halves.flat();
    const cases: Case[] = [];
    const verifiers = new Map<number, Groth16Verifier>();
    for (const p of proved) {
      const artifacts = semaphoreArtifacts(p.depth);
      if (!verifiers.has(p.depth)) verifiers.set(p.depth, await Groth16Verifier.fromVerificationKey(artifacts.vkey));
      // The circuit's public signals are what the stock client derives: the root first; and our verifier accepts.
      expect(p.publicSignals[0]).toBe(p.merkleTreeRoot);
      const verifier = verifiers.get(p.depth)!;
      expect(verifier.verify(JSON.stringify(p.proof), p.publicSignals)).toEqual({ ok: true });
      // The neighbour in the circuit's terms: one public signal (root, nullifier, hash(message), hash(scope)) plus one.
      const neighbour = cases.length % 4;
      const otherSignals = [...p.publicSignals];
      const at = [2, 3, 0, 1][neighbour]!;
      otherSignals[at] = ((BigInt(otherSignals[at]!) + 1n) % R).toString();
      expect(verifier.verify(JSON.stringify(p.proof), otherSignals).ok).toBe(false);
      cases.push({
        depth: p.depth,
        vkey: artifacts.vkey,
        publicSignals: p.publicSignals,
        proof: p.proof,
        semaphore: { merkleTreeDepth: p.depth, merkleTreeRoot: p.merkleTreeRoot, nullifier: p.publicSignals[1]!, message: p.message, scope: p.scope },
        neighbour,
      });
    }
    expect(cases).toHaveLength(200);
    const verdicts = await nodeVerifyAll(cases);
    const wrong = verdicts.flatMap((v, i) => (v.join() === "true,true,false" ? [] : [{ depth: cases[i]!.depth, neighbour: cases[i]!.neighbour, v }]));
    expect(wrong).toEqual([]);
  });
});
