// zkagent's Groth16 prover (BN254, snarkjs zkeys, circom circuits): the
// witness from the circuit's own witness calculator, everything else in the
// project's WebAssembly (assembly/prover.ts). A Prover is built once per
// circuit — the zkey parsed, checked and loaded into WebAssembly memory with
// its window tables, the witness calculator compiled — and then proves many
// times; each proof gets fresh blinding (r, s) from the OS CSPRNG.
//
//   const prover = await createProver({ zkey, wasm });   // Uint8Arrays
//   const { proof, publicSignals } = await prover.prove({ secret: "…", nonce: "…" });
//
// `proof` is snarkjs-shaped ({pi_a, pi_b, pi_c, protocol, curve}, decimal
// strings, projective with z = 1), and every proof returned has already been
// verified against the zkey's own verification key: a witness that does not
// satisfy the circuit, a zkey for another circuit or a corrupted one ends in
// a ProverError, never in a proof that does not verify.

import { FIELD_BYTES, fromBytes32, PROOF_BYTES, snarkjsProofFromBytes } from "../verifier/encoding";
import type { SnarkjsProof } from "../verifier/types";
import { ProverError } from "./errors";
import { rmSync } from "node:fs";
import { MAX_PROVER_THREADS } from "./limits";
import { type CachedTables, readTables, tablesPath, writeTables } from "./tables";
import { Helper, helperInit, type Part, planParts } from "./threads";
import { WASM_BUILD, type WasmBuild } from "../wasm-engine";
import { BaseSet, instantiateProver, ProverStatus, type ProverExports, proverModule, proverModuleDigest, readIo, sha256Hex, Tables, writeIo } from "./wasm";
import { type CircuitInput, createWitnessCalculator, type WitnessCalculator } from "./witness";
import { BN254_R, N8, parseZkey, pointSection, type Zkey } from "./zkey";

export { ProverError, type ProverErrorCode } from "./errors";
export type { CircuitInput } from "./witness";

export interface ProverArtifacts {
  /** A snarkjs Groth16 zkey over BN254 (the file's bytes). */
  zkey: Uint8Array;
  /** The circuit's circom witness calculator (the `<name>.wasm` of circom --wasm). */
  wasm: Uint8Array;
  /** The zkey's SHA-256 (hex) when the caller has it already (it checked the file against a pin): names its cached tables without hashing the zkey again. */
  zkeySha256?: string;
}

export interface ProofResult {
  proof: SnarkjsProof;
  /** The public signals, decimal, in the circuit's order. */
  publicSignals: string[];
}

export interface Prover {
  readonly nPublic: number;
  /**
   * Proves for the circuit input (signal name → value or array of values).
   * Calls are serialised. Throws ProverError: invalid_input (the circuit
   * refused the input), unsatisfied (the proof would not verify), internal.
   */
  prove(input: CircuitInput): Promise<ProofResult>;
  /** Helper threads summing part of every proof's MSMs (ProverOptions.threads − 1, or fewer when they could not start). */
  readonly helpers: number;
  /** Stops the helper threads (proofs go on, on the calling thread alone). */
  close(): void;
}

export interface ProverOptions {
  /**
   * Precompute the window tables of the zkey's points at load (default true):
   * ≈ 0.4–0.5 s once for the agent circuit, then about half the point
   * additions per proof. false suits a process that proves once (`zkagent
   * prove`): a fast start, proofs ≈ 2× slower.
   */
  precompute?: boolean;
  /**
   * A directory for the window tables (src/prover/tables.ts): the first
   * createProver for a zkey writes them there (≈ 8 MB per 1,000 signals),
   * later ones — in any process — copy them in after checking their SHA-256
   * instead of computing them (Semaphore depth 20: ≈ 6 s → well under 1 s).
   * Default none: the tables are computed each time. Ignored with
   * `precompute: false`, `module` or `window`.
   */
  tableCache?: string;
  /**
   * Threads per proof, the calling one included (default 1, at most
   * MAX_PROVER_THREADS = 64): the MSMs are
   * split by ranges of bases among that many threads (src/prover/threads.ts),
   * each helper a Worker holding a copy of its share of the tables. Needs
   * the tables (precompute), the production module and Workers (Bun; not
   * Node); when a helper cannot start, the prover goes on with the others.
   */
  threads?: number;
  /** A compiled prover module to instantiate instead of build/prover.wasm (tests use the test build). */
  module?: WebAssembly.Module;
  /**
   * @internal Which WebAssembly build the calling thread and its helpers
   * run (default the process's, src/wasm-engine.ts): the benchmarks compare
   * both builds on threads in one process.
   */
  build?: WasmBuild;
  /** Window width for every base set instead of the module's choice (tests). */
  window?: number;
}

const STATUS_MESSAGES: Record<number, [ConstructorParameters<typeof ProverError>[0], string]> = {
  [ProverStatus.FORMAT]: ["zkey_format", "the zkey's sizes or indices are out of range"],
  [ProverStatus.POINT]: ["zkey_points", "a point does not decode (coordinate ≥ p, not on the curve, or of small order)"],
  [ProverStatus.COEF]: ["zkey_coefficients", "a coefficient record is out of range (matrix, row, signal or value ≥ r)"],
  [ProverStatus.WITNESS]: ["internal", "the witness has an element ≥ r or w₀ ≠ 1"],
  [ProverStatus.KEY]: ["zkey_key", "α, β, γ, δ or IC fail the verifier's key checks (subgroup, γ = δ)"],
  [ProverStatus.DEGENERATE]: ["internal", "a proof point came out at infinity"],
  [ProverStatus.SELF_CHECK]: [
    "unsatisfied",
    "the proof does not verify against the zkey's key: the witness does not satisfy the circuit, or the zkey is not this circuit's",
  ],
};

function check(status: number, step: string): void {
  if (status === ProverStatus.OK) return;
  const [code, message] = STATUS_MESSAGES[status] ?? ["internal", `status ${status}`];
  throw new ProverError(code, `${message} (${step})`);
}

type BaseSection = [set: number, bytes: Uint8Array, count: number];

/** Every point section in the module's set order (the table cache's order too). */
function baseSections(z: Zkey): BaseSection[] {
  return Object.values(BaseSet).map((set) => {
    const { points, count } = pointSection(z, set);
    return [set, points, count];
  });
}

/** Loads a parsed zkey (parseZkey has checked every section's size) into a fresh module instance, all but its point sections. */
function loadKey(wasm: ProverExports, z: Zkey): void {
  check(wasm.setup(z.nVars, z.nPublic, z.domainLog, z.nCoef), "setup");
  writeIo(wasm, z.headerPoints);
  check(wasm.loadPoints(), "header points");
  writeIo(wasm, z.ic);
  check(wasm.loadIc(), "IC");
  writeIo(wasm, z.coefs);
  check(wasm.loadCoefs(), "coefficients");
}

/** loadKey, then the point sections, their window tables computed by the module (or none). */
function loadZkey(wasm: ProverExports, z: Zkey, window = 0, precompute = true): void {
  loadKey(wasm, z);
  for (const [set, bytes, count] of baseSections(z)) {
    writeIo(wasm, bytes);
    check(wasm.loadBases(set, count, window, precompute ? Tables.BUILD : Tables.NONE), `point section ${set + 5}`);
  }
}

/**
 * loadKey, then the point sections with the tables copied from the cache;
 * false (the instance is then unusable) when a cached size is not what the
 * module allocates for this key.
 */
function loadZkeyCached(wasm: ProverExports, z: Zkey, cached: CachedTables): boolean {
  loadKey(wasm, z);
  let at = 0;
  for (const [set, bytes, count] of baseSections(z)) {
    writeIo(wasm, bytes);
    check(wasm.loadBases(set, count, cached.windows[set]!, Tables.FROM_CALLER), `point section ${set + 5}`);
    const size = cached.sizes[set]!;
    if (wasm.basesTableBytes(set) !== size) return false;
    new Uint8Array(wasm.memory.buffer, wasm.basesTable(set), size).set(cached.payload.subarray(at, at + size));
    at += size;
  }
  return true;
}

/** The tables a loaded instance built, for the cache. */
function tablesOf(wasm: ProverExports, z: Zkey): { windows: number[]; tables: Uint8Array[] } {
  const sets = baseSections(z).map(([set]) => set);
  return {
    windows: sets.map((set) => wasm.basesWindow(set)),
    tables: sets.map((set) => new Uint8Array(wasm.memory.buffer, wasm.basesTable(set), wasm.basesTableBytes(set))),
  };
}

/** The module's output (wire proof ‖ public inputs) as snarkjs JSON. */
function decodeProof(out: Uint8Array, nPublic: number): ProofResult {
  const publicSignals: string[] = [];
  for (let j = 0; j < nPublic; j++) publicSignals.push(fromBytes32(out, PROOF_BYTES + j * FIELD_BYTES).toString());
  return { proof: snarkjsProofFromBytes(out), publicSignals };
}

// --- internals, exported for test/prover and bench/prover.ts (not part of the API) ---

/** A uniformly random non-zero element of Fr: 64 CSPRNG bytes reduced mod r (bias < 2^−250). */
export function randomScalar(): bigint {
  const bytes = new Uint8Array(64);
  for (;;) {
    crypto.getRandomValues(bytes);
    let x = 0n;
    for (const b of bytes) x = (x << 8n) | BigInt(b);
    x %= BN254_R;
    if (x !== 0n) return x;
  }
}

function writeLE(x: bigint, out: Uint8Array, offset: number): void {
  for (let i = 0; i < N8; i++) {
    out[offset + i] = Number(x & 0xffn);
    x >>= 8n;
  }
}

/** Writes prove()'s input (witness ‖ r ‖ s ‖ −r·s) into the module's I/O buffer. */
export function writeProveInput(wasm: ProverExports, witness: Uint8Array, r: bigint, s: bigint): void {
  // Straight into the module's I/O buffer: one copy of the witness, not two.
  const size = witness.length + 3 * N8;
  const bytes = new Uint8Array(wasm.memory.buffer, wasm.io(size), size);
  bytes.set(witness);
  writeLE(r, bytes, witness.length);
  writeLE(s, bytes, witness.length + N8);
  writeLE((BN254_R - ((r * s) % BN254_R)) % BN254_R, bytes, witness.length + 2 * N8);
}

class WasmProver implements Prover {
  private queue: Promise<unknown> = Promise.resolve();
  constructor(
    readonly wasm: ProverExports,
    readonly witness: WitnessCalculator,
    readonly nPublic: number,
    /** The calling thread's ranges, and the helpers' (empty without helpers: prove() does it all). */
    private readonly own: Part[] = [],
    private readonly helperThreads: Helper[] = [],
    /** SHA-256 of the module bytes the calling thread compiled (undefined for a module the caller passed). */
    private readonly digest: string | undefined = undefined,
  ) {}

  get helpers(): number {
    return this.helperThreads.filter((h) => h.alive).length;
  }

  /** @internal The build each live helper thread says it loaded (tests). */
  get helperBuilds(): WasmBuild[] {
    return this.helperThreads.filter((h) => h.alive).map((h) => h.build!);
  }

  /** @internal SHA-256 of the module bytes the calling thread and each live helper compiled, as each says (tests). */
  get moduleDigests(): { own: string | undefined; helpers: string[] } {
    return { own: this.digest, helpers: this.helperThreads.filter((h) => h.alive).map((h) => h.digest!) };
  }

  close(): void {
    for (const h of this.helperThreads) h.close();
  }

  prove(input: CircuitInput): Promise<ProofResult> {
    // One module instance and one witness calculator: one proof at a time.
    const run = this.queue.then(() => this.proveNow(input));
    this.queue = run.catch(() => {});
    return run;
  }

  private async proveNow(input: CircuitInput): Promise<ProofResult> {
    const witness = await this.witness.calculate(input);
    writeProveInput(this.wasm, witness, randomScalar(), randomScalar());
    if (this.helperThreads.length === 0) check(this.wasm.prove(), "prove");
    else await this.proveShared();
    const length = PROOF_BYTES + this.nPublic * FIELD_BYTES;
    const out = readIo(this.wasm, length);
    return decodeProof(out, this.nPublic);
  }

  /** prove() with the helpers summing their ranges meanwhile; a helper that fails has its ranges summed here. */
  private async proveShared(): Promise<void> {
    const wasm = this.wasm;
    check(wasm.proveWitness(), "prove");
    const size = wasm.msmScalars(BaseSet.A);
    const scalars = readIo(wasm, size);
    const jobs = this.helperThreads.map((h) => (h.alive ? h.run(scalars).catch(() => undefined) : Promise.resolve(undefined)));
    check(wasm.proveQuotient(), "prove");
    const summed = new Set<number>();
    const sum = (p: Part) => {
      check(wasm.proveMsmRange(p.set, p.lo, p.hi, summed.has(p.set) ? 1 : 0), "prove");
      summed.add(p.set);
    };
    this.own.forEach(sum);
    const results = await Promise.all(jobs);
    results.forEach((sums, i) => {
      const parts = this.helperThreads[i]!.parts;
      if (!sums) return parts.forEach(sum);
      parts.forEach((p, j) => {
        writeIo(wasm, sums[j]!);
        check(wasm.msmResultIn(p.set, summed.has(p.set) ? 1 : 0), "prove");
        summed.add(p.set);
      });
    });
    // A set without bases sums to infinity.
    for (const set of Object.values(BaseSet)) if (!summed.has(set)) check(wasm.proveMsmRange(set, 0, 0, 0), "prove");
    check(wasm.proveEnd(), "prove");
  }
}

/**
 * A prover on fewer threads than asked is not a failure, but worth saying:
 * on stderr at once (process.emitWarning defers to a tick that a short
 * command such as `zkagent prove` may never reach under Bun).
 */
const warnHelper = (message: string) => console.warn(`zkagent prover: ${message}`);

/** Threads started before the key loads (they compile their module meanwhile); none when Workers cannot start here. */
function spawnHelpers(count: number, build: WasmBuild): Helper[] {
  const helpers: Helper[] = [];
  try {
    for (let i = 0; i < count; i++) helpers.push(Helper.spawn(build));
  } catch (e) {
    // Workers exist here (the caller checked) but this one cannot start: fewer helpers, or none.
    warnHelper(`prover helper thread not started: ${e instanceof Error ? e.message : String(e)}`);
  }
  return helpers;
}

/** Gives the spawned helpers their shares of the loaded key; a helper that cannot load leaves its share to the caller. */
async function shareWork(wasm: ProverExports, z: Zkey, spawned: Helper[]): Promise<{ own: Part[]; helpers: Helper[] }> {
  const shapes = Object.values(BaseSet).map((set) => ({ set, count: wasm.basesCount(set), windows: Math.ceil(255 / wasm.basesWindow(set)) }));
  const [own, ...shares] = planParts(shapes, spawned.length + 1);
  const mine = [...own!];
  const loaded = await Promise.allSettled(
    spawned.map((helper, i) => {
      const parts = shares[i]!;
      if (parts.length === 0) return Promise.reject(new Error("nothing to do"));
      return helper.init(helperInit(wasm, z, parts));
    }),
  );
  const helpers: Helper[] = [];
  loaded.forEach((outcome, i) => {
    if (outcome.status === "fulfilled") helpers.push(spawned[i]!);
    else {
      spawned[i]!.close();
      if (shares[i]!.length > 0) warnHelper(`prover helper thread not started, its share stays on the calling thread: ${outcome.reason}`);
      mine.push(...shares[i]!);
    }
  });
  return { own: mine, helpers };
}

// --- the API ---

/**
 * Parses and loads the zkey, builds the witness calculator, and checks that
 * they belong together (BN254 field, witness size = the zkey's nVars).
 * Throws ProverError (code zkey_format, zkey_curve, zkey_points,
 * zkey_coefficients, zkey_key, circuit_mismatch or too_large).
 */
export async function createProver(artifacts: ProverArtifacts, options: ProverOptions = {}): Promise<Prover> {
  const z = parseZkey(artifacts.zkey);
  const witness = await createWitnessCalculator(artifacts.wasm);
  if (witness.witnessSize !== z.nVars) {
    throw new ProverError("circuit_mismatch", `the circuit computes ${witness.witnessSize} witness elements, the zkey expects ${z.nVars}`);
  }
  const loaded = await loadProver(artifacts, z, witness, options, false);
  if (loaded.cachedFrom === undefined) return loaded.prover;
  const path = loaded.cachedFrom;
  return new CacheCheckedProver(loaded.prover, async () => {
    // Tables that pass every check of the file yet give proofs that do not verify: someone wrote them with their hash (issue 34).
    rmSync(path, { force: true });
    warnHelper(`the cached window tables ${path} gave a proof that failed its self-check: the file is dropped, the tables rebuilt, the proof tried once more`);
    return (await loadProver(artifacts, z, witness, options, true)).prover;
  });
}

/** Where the table cache in `dir` keeps this zkey's tables (the zkey, or its SHA-256 in hex) for this module (whether the file is there, and sound, is for the caller and the read to say). */
export async function cachedTablesPath(zkey: Uint8Array | string, dir: string): Promise<string> {
  return tablesPath(dir, typeof zkey === "string" ? zkey : sha256Hex(zkey), await proverModuleDigest());
}

/**
 * A prover loaded with tables, read from the cache (cachedFrom: the file)
 * unless `rebuild`, else built (and written to the cache when there is one).
 */
async function loadProver(
  artifacts: ProverArtifacts,
  z: Zkey,
  witness: WitnessCalculator,
  options: ProverOptions,
  rebuild: boolean,
): Promise<{ prover: Prover; cachedFrom?: string }> {
  const precompute = options.precompute ?? true;
  // The cache holds the production module's tables: not for a module passed in.
  const cacheDir = precompute && !options.module ? options.tableCache : undefined;
  const threads = Math.min(MAX_PROVER_THREADS, Math.max(1, Math.floor(options.threads ?? 1)));
  // Helpers run the production module: only a prover on that module shares its work with them.
  const build = options.build ?? WASM_BUILD;
  const spawned = threads > 1 && precompute && !options.module && typeof Worker !== "undefined" ? spawnHelpers(threads - 1, build) : [];
  let wasm = await instantiateProver(options.module ?? (await proverModule(build)));
  const digest = options.module ? undefined : await proverModuleDigest(build);
  let cachedFrom: string | undefined;
  try {
    if (cacheDir === undefined) loadZkey(wasm, z, options.window ?? 0, precompute);
    else {
      const [zkeyDigest, moduleDigest] = [artifacts.zkeySha256 ?? sha256Hex(artifacts.zkey), await proverModuleDigest(build)];
      const path = tablesPath(cacheDir, zkeyDigest, moduleDigest);
      const cached = options.window === undefined && !rebuild ? readTables(path, zkeyDigest, moduleDigest, baseSections(z).length) : undefined;
      if (cached && loadZkeyCached(wasm, z, cached)) cachedFrom = path;
      else {
        if (cached) wasm = await instantiateProver(await proverModule(build));
        loadZkey(wasm, z, options.window ?? 0, true);
        if (options.window === undefined) {
          const { windows, tables } = tablesOf(wasm, z);
          writeTables(path, cacheDir, zkeyDigest, moduleDigest, windows, tables);
        }
      }
    }
  } catch (e) {
    for (const helper of spawned) helper.close();
    // The module traps only when its memory cannot grow (AssemblyScript's stub runtime aborts).
    if (e instanceof WebAssembly.RuntimeError) {
      throw new ProverError("too_large", `the circuit's tables do not fit the prover's WebAssembly memory (${z.nVars} signals, domain ${z.domainSize})`, {
        cause: e,
      });
    }
    throw e;
  }
  if (spawned.length > 0) {
    const { own, helpers } = await shareWork(wasm, z, spawned);
    if (helpers.length > 0) return { prover: new WasmProver(wasm, witness, z.nPublic, own, helpers, digest), cachedFrom };
  }
  return { prover: new WasmProver(wasm, witness, z.nPublic, [], [], digest), cachedFrom };
}

/**
 * A prover whose tables came from the cache. Every proof is self-checked
 * (assembly/prover.ts); should one fail it (ProverError "unsatisfied") the
 * tables may be wrong though their file passed every check, and a file that
 * is never replaced would fail every later proof of every process. So, once:
 * the file is dropped, the tables built again (and written), and the proof
 * tried again — a witness that truly does not satisfy the circuit fails
 * again and is reported as before.
 */
class CacheCheckedProver implements Prover {
  private queue: Promise<unknown> = Promise.resolve();
  constructor(
    private inner: Prover,
    private rebuild?: () => Promise<Prover>,
  ) {}

  get nPublic(): number {
    return this.inner.nPublic;
  }

  get helpers(): number {
    return this.inner.helpers;
  }

  close(): void {
    this.inner.close();
  }

  prove(input: CircuitInput): Promise<ProofResult> {
    const run = this.queue.then(() => this.proveChecked(input));
    this.queue = run.catch(() => {});
    return run;
  }

  private async proveChecked(input: CircuitInput): Promise<ProofResult> {
    try {
      return await this.inner.prove(input);
    } catch (e) {
      const rebuild = this.rebuild;
      if (!(e instanceof ProverError && e.code === "unsatisfied") || !rebuild) throw e;
      this.rebuild = undefined;
      this.inner.close();
      this.inner = await rebuild();
      return this.inner.prove(input);
    }
  }
}
