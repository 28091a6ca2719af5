// The process's serving state, shared by main.ts (which drains on SIGTERM)
// and GET /ready (which reports it), and the readiness decision itself.
import type { Store } from "./store/interface";

export class Lifecycle {
  /** True from the moment shutdown begins: load balancers must stop sending. */
  draining = false;
  /** Set once the verifier is loaded (its WebAssembly compiled, its key parsed). */
  verifierLoaded = false;
}

export type CheckName = "database" | "verifier" | "draining";
export interface Readiness {
  ready: boolean;
  /** The first failing check, in the order below; absent when ready. */
  failing?: CheckName;
  checks: Record<CheckName, "ok" | "fail">;
}

// A hung database must not hang the probe: the orchestrator's own timeout
// would then report the pod dead instead of not ready.
export const DATABASE_CHECK_TIMEOUT_MS = 2000;

async function databaseAnswers(store: Pick<Store, "ping">): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), DATABASE_CHECK_TIMEOUT_MS)));
  try {
    return await Promise.race([store.ping().then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export async function readiness(store: Pick<Store, "ping">, verifier: unknown, lifecycle: Lifecycle): Promise<Readiness> {
  const checks: Readiness["checks"] = {
    database: (await databaseAnswers(store)) ? "ok" : "fail",
    verifier: verifier !== undefined && lifecycle.verifierLoaded ? "ok" : "fail",
    draining: lifecycle.draining ? "fail" : "ok",
  };
  const failing = (Object.keys(checks) as CheckName[]).find((name) => checks[name] === "fail");
  return failing ? { ready: false, failing, checks } : { ready: true, checks };
}
