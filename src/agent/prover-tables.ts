// Where the agent's provers keep their window tables between processes
// (createProver's tableCache, src/prover/tables.ts). Building them is nearly
// all of a prover's start-up (Semaphore depth 20: seconds), so an agent that
// runs one proof per process (`zkagent prove --group-challenge`) pays it once
// per machine and user, then reads the tables back in a fraction of a second.
// The files are checked on every read (the zkey's and module's digests and
// the tables' SHA-256) and a proof is self-checked before it leaves, so a
// stale or planted file costs time, never a wrong proof.
import { availableParallelism } from "node:os";
import { cacheDir } from "../cache-file";

/**
 * $XDG_CACHE_HOME/zkagent/prover-tables, or ~/.cache/zkagent/prover-tables
 * when that is unset or not absolute (the XDG base directory rule).
 */
export const defaultTableCacheDir = (env: Record<string, string | undefined> = process.env): string => cacheDir("prover-tables", env);

/**
 * The agent's choice of tables, as createProver options: a directory (the
 * given one, or the default when `tableCache` is undefined), or none when it
 * is false. Without precomputed tables there is nothing to cache.
 */
export function tableOptions(precompute: boolean | undefined, tableCache: string | false | undefined): { precompute: boolean; tableCache?: string } {
  const tables = precompute ?? true;
  if (!tables || tableCache === false) return { precompute: tables };
  return { precompute: true, tableCache: tableCache ?? defaultTableCacheDir() };
}

/** The most threads a prover takes by default: beyond four, the witness and the quotient (one thread) dominate. */
const MAX_DEFAULT_THREADS = 4;

/**
 * Threads per proof (createProver's threads): the number asked for, else
 * `fallback` — "cores" for Semaphore's provers (depth 20 on two cores:
 * 1.78× proof by proof, 1.27–1.51× in bench:prover's blocks;
 * docs/performance.md), 1 for the agent circuit (its proof is tens of
 * milliseconds; a helper saved 1.1–15.6 ms in four bench runs).
 */
export function proverThreads(requested: number | undefined, fallback: "cores" | 1): number {
  if (requested !== undefined) return requested;
  return fallback === 1 ? 1 : Math.min(availableParallelism(), MAX_DEFAULT_THREADS);
}
