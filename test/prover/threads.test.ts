// One proof on several threads (src/prover/threads.ts): the plan covers every
// base exactly once, the sum of ranges is the whole MSM bit for bit (in the
// test build, in one instance and across two), and provers with helpers give
// proofs that snarkjs (under node) and the service verifier accept, also after
// a helper dies.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { identityCommitment } from "../../src/identity/commitment";
import { createProver, type Prover, writeProveInput } from "../../src/prover";
import { baseCost, fixedCost, type Part, planParts, type SetShape } from "../../src/prover/threads";
import { BaseSet, instantiateProver, type ProverTestExports, ProverStatus, readIo, Tables, writeIo } from "../../src/prover/wasm";
import type { WitnessCalculator } from "../../src/prover/witness";
import { parseZkey, pointSection } from "../../src/prover/zkey";
import { Groth16Verifier } from "../../src/verifier";
import { semaphoreArtifacts, semaphoreStatement } from "./semaphore";
import { agentCircuit, ROOT, randomField, referenceVerifyAll } from "./support";
import { buildPath, PROVER_TEST_WASM_PATH, PROVER_WASM_PATH } from "../../scripts/asc-build";
import { WASM_BUILD, type WasmBuild, wideArithmeticSupported } from "../../src/wasm-engine";

setDefaultTimeout(180_000);

const SETS = Object.values(BaseSet);
const shape = (counts: number[], windows = 20): SetShape[] => counts.map((count, set) => ({ set, count, windows }));

describe("planParts", () => {
  const cases: [string, SetShape[]][] = [
    ["Semaphore depth 20", shape([6194, 4181, 4181, 6450, 8192])],
    ["agent circuit", [221, 147, 147, 418, 512].map((count, set) => ({ set, count, windows: [29, 32, 32, 26, 26][set]! }))],
    ["tiny", shape([3, 3, 3, 1, 4], 128)],
    ["empty H and C", shape([50, 40, 40, 0, 0])],
    ["one huge set", shape([100_000, 3, 3, 3, 16])],
  ];
  for (const [name, shapes] of cases) {
    test(`${name}: for 1 to 8 threads every base of every set is in exactly one range; H stays with the caller`, () => {
      for (let threads = 1; threads <= 8; threads++) {
        const plan = planParts(shapes, threads);
        expect(plan.length).toBe(threads);
        for (const s of shapes) {
          const ranges = plan
            .flat()
            .filter((p) => p.set === s.set)
            .sort((a, b) => a.lo - b.lo);
          let at = 0;
          for (const r of ranges) {
            expect(r.lo).toBe(at);
            expect(r.hi).toBeGreaterThan(r.lo);
            at = r.hi;
          }
          expect(at).toBe(s.count);
        }
        expect(plan.slice(1).some((parts) => parts.some((p) => p.set === BaseSet.H))).toBe(false);
      }
    });
  }

  test("Semaphore depth 20 on 2 and 4 threads: no thread's estimated cost is more than 15 % above an even share", () => {
    const shapes = cases[0]![1];
    const shapeOf = (p: Part) => shapes.find((s) => s.set === p.set)!;
    // The planner's own unit: the test checks the plan against its model, not the model against the machine.
    const cost = (p: Part) => (p.set === BaseSet.H ? fixedCost(shapeOf(p)) : (p.hi - p.lo) * baseCost(shapeOf(p)));
    for (const threads of [2, 4]) {
      const loads = planParts(shapes, threads).map((parts) => parts.reduce((sum, p) => sum + cost(p), 0));
      const total = loads.reduce((a, b) => a + b, 0);
      // With 4 threads H and the quotient alone exceed a share: the helpers split the rest evenly.
      const even = threads === 2 ? total / 2 : (total - loads[0]!) / 3;
      for (const load of threads === 2 ? loads : loads.slice(1)) expect(load).toBeLessThanOrEqual(even * 1.15);
    }
  });
});

describe("ranges of an MSM (test build)", () => {
  let module: WebAssembly.Module;
  beforeAll(async () => {
    module = await WebAssembly.compile(readFileSync(buildPath(PROVER_TEST_WASM_PATH, WASM_BUILD)));
  });

  test("Semaphore depth 3: for every set, ranges summed here, and ranges summed in a second instance holding only their table rows, equal the whole MSM", async () => {
    const { zkey, wasm } = semaphoreArtifacts(3);
    const prover = (await createProver({ zkey, wasm }, { module })) as unknown as { wasm: ProverTestExports; witness: WitnessCalculator };
    const main = prover.wasm;
    const z = parseZkey(zkey);
    writeProveInput(main, await prover.witness.calculate(semaphoreStatement(3, 5).input), randomField() || 1n, randomField() || 1n);
    expect(main.proveWitness()).toBe(ProverStatus.OK);
    expect(main.proveQuotient()).toBe(ProverStatus.OK);
    const read = (set: number) => {
      const size = main.readMsm(set);
      return Buffer.from(readIo(main, size)).toString("hex");
    };
    const other = (await instantiateProver(module)) as ProverTestExports;
    expect(other.setup(z.nVars, z.nPublic, z.domainLog, 0)).toBe(ProverStatus.OK);
    writeIo(other, z.headerPoints);
    expect(other.loadPoints()).toBe(ProverStatus.OK);
    for (const set of SETS) {
      expect(main.proveMsmRange(set, 0, main.basesCount(set), 0)).toBe(ProverStatus.OK);
      const whole = read(set);
      const k = main.basesCount(set);
      const [a, b] = [Math.floor(k / 3), Math.floor((2 * k) / 3)];
      // Three ranges here.
      main.proveMsmRange(set, 0, a, 0);
      main.proveMsmRange(set, a, b, 1);
      main.proveMsmRange(set, b, k, 1);
      expect(read(set)).toBe(whole);
      // The middle range in the other instance, from its rows alone.
      const { points, count } = pointSection(z, set);
      writeIo(other, points);
      expect(other.loadBases(set, count, main.basesWindow(set), Tables.FROM_CALLER)).toBe(ProverStatus.OK);
      const row = main.basesTableBytes(set) / k;
      const rows = new Uint8Array(main.memory.buffer, main.basesTable(set) + a * row, (b - a) * row).slice();
      new Uint8Array(other.memory.buffer, other.basesTable(set) + a * row, rows.length).set(rows);
      const scalars = readIo(main, main.msmScalars(set));
      writeIo(other, scalars);
      const size = other.msmRemote(set, a, b);
      expect(size).toBe(set === BaseSet.B2 ? 216 : 108);
      const sum = readIo(other, size);
      main.proveMsmRange(set, 0, a, 0);
      writeIo(main, sum);
      expect(main.msmResultIn(set, 1)).toBe(ProverStatus.OK);
      main.proveMsmRange(set, b, k, 1);
      expect(read(set)).toBe(whole);
      // A range the other instance does not hold is refused, not summed.
      expect(other.msmRemote(set, 0, k + 1)).toBe(0);
    }
    expect(main.proveMsmRange(BaseSet.A, 2, 1, 0)).toBe(ProverStatus.FORMAT);
  });
});

describe("provers with helper threads", () => {
  const provers: Prover[] = [];
  afterAll(() => provers.forEach((p) => p.close()));

  const agentInput = async () => {
    const secret = randomField();
    return {
      secret: secret.toString(),
      identity_commitment: (await identityCommitment(secret)).toString(),
      nonce: randomField().toString(),
      action_hash: randomField().toString(),
      context_hash: randomField().toString(),
    };
  };

  test("Semaphore depth 4 on 2 and 3 threads and the agent circuit on 2: every proof verifies (service verifier and snarkjs under node), also after a helper dies", async () => {
    const semaphore = semaphoreArtifacts(4);
    const cases: { vkey: unknown; publicSignals: string[]; proof: unknown }[] = [];
    const check = async (prover: Prover, vkey: unknown, input: () => Promise<Record<string, unknown>> | Record<string, unknown>, runs: number) => {
      const verifier = await Groth16Verifier.fromVerificationKey(vkey as any);
      for (let i = 0; i < runs; i++) {
        const { proof, publicSignals } = await prover.prove((await input()) as any);
        expect(verifier.verify(proof, publicSignals).ok).toBe(true);
        cases.push({ vkey, publicSignals, proof });
      }
    };
    for (const threads of [2, 3]) {
      const prover = await createProver(semaphore, { threads });
      provers.push(prover);
      expect(prover.helpers).toBe(threads - 1);
      await check(prover, semaphore.vkey, () => semaphoreStatement(4, 1 + Math.floor(Math.random() * 16)).input, 3);
      // A helper that dies: its ranges are summed by the caller from then on.
      (prover as unknown as { helperThreads: { fail(e: Error): void }[] }).helperThreads[0]!.fail(new Error("test"));
      expect(prover.helpers).toBe(threads - 2);
      await check(prover, semaphore.vkey, () => semaphoreStatement(4, 3).input, 2);
      prover.close();
      expect(prover.helpers).toBe(0);
      await check(prover, semaphore.vkey, () => semaphoreStatement(4, 3).input, 1);
    }
    const agent = await createProver(agentCircuit, { threads: 2 });
    provers.push(agent);
    expect(agent.helpers).toBe(1);
    await check(agent, agentCircuit.vkey, agentInput, 3);
    expect(await referenceVerifyAll(cases)).toEqual(cases.map(() => true));
  });

  test("a prover on a named WebAssembly build, the process's or the other: the calling thread and its helper compile that build's module (the SHA-256 each reports is the file's), and its proofs verify", async () => {
    const semaphore = semaphoreArtifacts(4);
    const verifier = await Groth16Verifier.fromVerificationKey(semaphore.vkey as any);
    // Both builds wherever the engine runs the wide one, whichever the process loaded (CI runs this file under ZKAGENT_WASM=portable too).
    const builds: WasmBuild[] = wideArithmeticSupported() ? ["portable", "wide"] : ["portable"];
    const fileDigest = (build: WasmBuild) =>
      createHash("sha256")
        .update(readFileSync(buildPath(PROVER_WASM_PATH, build)))
        .digest("hex");
    if (builds.length === 2) expect(fileDigest("wide")).not.toBe(fileDigest("portable"));
    for (const build of builds) {
      const prover = await createProver(semaphore, { threads: 2, build });
      provers.push(prover);
      const internals = prover as unknown as { helperBuilds: string[]; moduleDigests: { own: string; helpers: string[] } };
      expect(internals.helperBuilds).toEqual([build]);
      expect(internals.moduleDigests).toEqual({ own: fileDigest(build), helpers: [fileDigest(build)] });
      const { proof, publicSignals } = await prover.prove(semaphoreStatement(4, 5).input as any);
      expect(verifier.verify(proof, publicSignals).ok).toBe(true);
      prover.close();
    }
  });

  test("a process with nothing else to do waits for its helpers: it does not exit while createProver or prove awaits one (three child processes)", async () => {
    // Idle helpers are unref'd so that they never keep a process alive; one the caller awaits must be ref'd.
    const script = `
      import { createProver } from ${JSON.stringify(join(ROOT, "src/prover/index.ts"))};
      import { semaphoreArtifacts, semaphoreStatement } from ${JSON.stringify(join(import.meta.dir, "semaphore.ts"))};
      // As the CLI runs: a promise chain, no top-level await (which would hold the process itself).
      createProver(semaphoreArtifacts(4), { threads: 3 })
        .then((prover) => {
          console.log("helpers", prover.helpers);
          return prover.prove(semaphoreStatement(4, 3).input);
        })
        .then(({ publicSignals }) => console.log("proved", publicSignals.length));`;
    const runs = await Promise.all(
      [1, 2, 3].map(async () => {
        const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
        const [out, code] = [await new Response(child.stdout).text(), await child.exited];
        return { out, code };
      }),
    );
    for (const { out, code } of runs) expect({ out, code }).toEqual({ out: "helpers 2\nproved 4\n", code: 0 });
  });

  test("threads 1, no tables, or no Worker: no helper, and proofs as before", async () => {
    const semaphore = semaphoreArtifacts(2);
    expect((await createProver(semaphore)).helpers).toBe(0);
    const noTables = await createProver(semaphore, { threads: 4, precompute: false });
    expect(noTables.helpers).toBe(0);
    const { proof, publicSignals } = await noTables.prove(semaphoreStatement(2, 3).input);
    const verifier = await Groth16Verifier.fromVerificationKey(semaphore.vkey as any);
    expect(verifier.verify(proof, publicSignals).ok).toBe(true);
    const saved = globalThis.Worker;
    try {
      // @ts-expect-error — a runtime without Workers (Node)
      delete globalThis.Worker;
      expect((await createProver(semaphore, { threads: 4 })).helpers).toBe(0);
    } finally {
      globalThis.Worker = saved;
    }
  });
});
