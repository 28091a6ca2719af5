// One proof on several threads: the MSMs (≈ 85 % of a Semaphore proof) split
// into ranges of bases, some summed by helper threads (Bun Workers running
// thread-main.ts, each with its own instance of the prover module), the rest
// and everything else by the calling thread, which adds the partial sums
// (assembly/prover.ts, "one proof across threads").
//
// The caller keeps every table, so a helper that dies costs speed, never a
// proof: its ranges are summed by the caller from then on. A wrong sum cannot
// become a proof either: the caller self-checks every proof.

import { pointSection, type Zkey } from "./zkey";
import { BaseSet, type ProverExports } from "./wasm";
import { threadModule } from "../thread-module";
import { WASM_BUILD, type WasmBuild } from "../wasm-engine";

/** A range of one set's bases, lo..hi−1. */
export interface Part {
  set: number;
  lo: number;
  hi: number;
}

/**
 * What a G2 base costs relative to a G1 base with the same window. The
 * bench's single-thread breakdown puts B2 at 2.3–2.9× B1 (three runs today),
 * but the plan is what must balance: at depth 20, two threads, 7 proofs each
 * (a copy of the prover timing its caller), 2.2 gave 365–447 ms with the
 * caller waiting 0–83 ms for its helper, 2.6 gave 421–478 ms with the helper
 * done first (the caller waiting 0 ms in 6 proofs of 7).
 */
const G2_FACTOR = 2.2;
/** The quotient (INTT/NTT of A, B, C) relative to H's MSM (measured: ≈ 0.25–0.33). */
const QUOTIENT_FACTOR = 0.3;
/**
 * A range below this share of a thread's quota is not worth its own bucket
 * reduction (a range's fixed cost: ≈ 4·2^(c−1) table additions, ≈ 4 % of a
 * share at Semaphore depth 20): it goes with its neighbour. (At 0.1, a
 * remainder of B1 worth 7 % went to the helper, which then ran 30–130 ms
 * after the caller had finished.)
 */
const MIN_SHARE = 0.03;

export interface SetShape {
  set: number;
  /** Bases (basesCount). */
  count: number;
  /** Windows per scalar (⌈255 / window⌉): table additions per base. */
  windows: number;
}

/** The estimated cost of one base of a set (planParts's unit): its windows, weighted for G2. */
export const baseCost = (s: SetShape): number => s.windows * (s.set === BaseSet.B2 ? G2_FACTOR : 1);
/** The caller's fixed work, H's MSM and the quotient, in the same unit. */
export const fixedCost = (h: SetShape): number => h.count * baseCost(h) * (1 + QUOTIENT_FACTOR);

/**
 * Splits a proof's work among `threads` threads; entry 0 is the calling
 * thread's. H (its scalars exist only after the quotient, computed by the
 * caller) and the quotient stay with the caller; the sets whose scalars are
 * the witness (A, B1, B2, C) are cut into contiguous ranges so that every
 * thread gets about the same estimated cost. Pure: tested on its own.
 */
export function planParts(shapes: SetShape[], threads: number): Part[][] {
  const cost = baseCost;
  const plan: Part[][] = Array.from({ length: Math.max(1, threads) }, () => []);
  const h = shapes.find((s) => s.set === BaseSet.H);
  const fixed = h ? fixedCost(h) : 0;
  if (h && h.count > 0) plan[0]!.push({ set: h.set, lo: 0, hi: h.count });
  // The witness sets, most costly per base first (the caller's share comes last).
  const rest = shapes.filter((s) => s.set !== BaseSet.H && s.count > 0).sort((a, b) => cost(b) - cost(a) || a.set - b.set);
  const total = fixed + rest.reduce((sum, s) => sum + s.count * cost(s), 0);
  if (plan.length === 1) {
    for (const s of rest) plan[0]!.push({ set: s.set, lo: 0, hi: s.count });
    return plan;
  }
  const helpers = plan.length - 1;
  // Helpers first, then the caller with what is left (it already has H and the quotient).
  const quota = fixed >= total / plan.length ? (total - fixed) / helpers : total / plan.length;
  let thread = 1;
  let room = quota;
  for (const s of rest) {
    const c = cost(s);
    let lo = 0;
    while (lo < s.count) {
      if (thread === 0) {
        plan[0]!.push({ set: s.set, lo, hi: s.count });
        break;
      }
      let take = Math.min(s.count - lo, Math.round(room / c));
      const left = s.count - lo - take;
      // No sliver of a set anywhere: a small remainder stays with this thread, a small share moves on.
      if (left > 0 && left * c < MIN_SHARE * quota) take += left;
      if (take * c < MIN_SHARE * quota && take < s.count - lo) take = 0;
      if (take > 0) plan[thread]!.push({ set: s.set, lo, hi: lo + take });
      lo += take;
      room -= take * c;
      if (room <= MIN_SHARE * quota || take === 0) {
        thread = thread === helpers ? 0 : thread + 1;
        room = quota;
      }
    }
  }
  return plan;
}

/** What a helper thread loads: the key's sizes and header points, and for each set it sums, the section and its table rows. */
export interface HelperInit {
  nVars: number;
  nPublic: number;
  domainLog: number;
  header: Uint8Array;
  sets: { set: number; count: number; points: Uint8Array; window: number; bases: number; offset: number; rows: Uint8Array }[];
  parts: Part[];
}

/** The message a helper answers with after init: ready, or why not. */
/** Ready, with the WebAssembly build the thread loaded (src/wasm-engine.ts) and the SHA-256 of the module bytes it compiled, or the reason it could not load. */
export type HelperReady = { ready: true; build: WasmBuild; digest: string } | { ready: false; error: string };
export interface HelperJob {
  id: number;
  scalars: Uint8Array;
}
export interface HelperResult {
  id: number;
  sums?: Uint8Array[];
  error?: string;
}

/** A helper's init message, its table rows copied out of the caller's loaded instance. */
export function helperInit(wasm: ProverExports, z: Zkey, parts: Part[]): HelperInit {
  const sets = [...new Set(parts.map((p) => p.set))].map((set) => {
    const bases = wasm.basesCount(set);
    const rowBytes = wasm.basesTableBytes(set) / bases;
    const lo = Math.min(...parts.filter((p) => p.set === set).map((p) => p.lo));
    const hi = Math.max(...parts.filter((p) => p.set === set).map((p) => p.hi));
    const offset = lo * rowBytes;
    const rows = new Uint8Array(wasm.memory.buffer, wasm.basesTable(set) + offset, (hi - lo) * rowBytes).slice();
    const { points, count } = pointSection(z, set);
    return { set, count, points, window: wasm.basesWindow(set), bases, offset, rows };
  });
  return { nVars: z.nVars, nPublic: z.nPublic, domainLog: z.domainLog, header: z.headerPoints, sets, parts };
}

/** The helper's module, wherever this code runs (src/thread-module.ts). */
const HELPER_MODULE = threadModule(import.meta.url, "prover", "threads.ts", "thread-main");

/** A helper that has not loaded its share by then will not: the prover goes on without it. */
const START_TIMEOUT_MS = 20_000;

/** One helper thread summing fixed ranges of the MSMs for every proof. */
export class Helper {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (sums: Uint8Array[]) => void; reject: (e: Error) => void }>();
  private dead: Error | undefined;
  private loaded: ((error?: Error) => void) | undefined;
  parts: Part[] = [];
  /** The build the thread loaded and the SHA-256 of its module's bytes, once it is ready. */
  build: WasmBuild | undefined;
  digest: string | undefined;

  private constructor(private readonly worker: Worker) {}

  /**
   * Starts a thread, which compiles its module at once (while the caller
   * loads the key); init() then gives it its share. Throws when Workers
   * cannot be created here.
   */
  static spawn(build: WasmBuild = WASM_BUILD): Helper {
    // A thread reads ZKAGENT_WASM when it loads the module: another build than the process's is set in its environment.
    const worker = new Worker(HELPER_MODULE, build === WASM_BUILD ? undefined : { env: { ...process.env, ZKAGENT_WASM: build } });
    const helper = new Helper(worker);
    worker.onmessage = (event: MessageEvent<HelperReady | HelperResult>) => {
      const data = event.data;
      if ("ready" in data) {
        if (data.ready) [helper.build, helper.digest] = [data.build, data.digest];
        helper.loaded?.(data.ready ? undefined : new Error(`prover thread failed to load: ${data.error}`));
      } else helper.answer(data);
    };
    worker.onerror = (event) => helper.fail(new Error(`prover thread failed: ${event.message}`));
    helper.hold(false);
    return helper;
  }

  /**
   * An idle helper does not keep the process alive; one the caller waits for
   * must (else a process with nothing else to do exits, silently, while the
   * caller awaits its answer).
   */
  private hold(waiting: boolean): void {
    const w = this.worker as Worker & { ref(): void; unref(): void };
    if (waiting) w.ref();
    else w.unref();
  }

  /** Loads the helper's share; rejects (and stops the thread) when it cannot. */
  init(message: HelperInit): Promise<void> {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new Error(`prover thread did not load within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
      this.hold(true);
      this.loaded = (error) => {
        clearTimeout(timer);
        this.loaded = undefined;
        this.hold(false);
        if (!error) {
          this.parts = message.parts;
          return resolve();
        }
        this.fail(error);
        reject(error);
      };
      this.worker.postMessage(message);
    });
  }

  get alive(): boolean {
    return this.dead === undefined;
  }

  /** The sums of this helper's parts, in order, for the scalars (msmScalars's bytes). */
  run(scalars: Uint8Array): Promise<Uint8Array[]> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.hold(true);
      this.worker.postMessage({ id, scalars } satisfies HelperJob);
    });
  }

  private answer(result: HelperResult): void {
    const call = this.pending.get(result.id);
    this.pending.delete(result.id);
    if (this.pending.size === 0) this.hold(false);
    if (!call) return;
    if (result.sums) call.resolve(result.sums);
    else call.reject(new Error(`prover thread: ${result.error ?? "no result"}`));
  }

  /** The helper is gone: its calls fail (the caller sums those parts itself) and so do later ones. */
  fail(error: Error): void {
    this.dead ??= error;
    this.worker.terminate();
    this.loaded?.(error);
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
  }

  close(): void {
    this.fail(new Error("prover closed"));
  }
}
