// What the HTTP layer is built from; main.ts assembles it once, tests build their own.
import type { Clock } from "./clock";
import type { Logger } from "./log";
import type { Lifecycle } from "./modules/ops/lifecycle";
import type { Metrics } from "./modules/ops/metrics";
import type { Verifier } from "./modules/proofs/service";
import type { Store } from "./store/interface";

export interface AppDeps {
  store: Store;
  clock: Clock;
  verifier: Verifier;
  logger: Logger;
  /** Counters and histograms for GET /metrics; createApp makes one when absent. */
  metrics?: Metrics;
  /** Abuse limits beyond the per-key rate limit; absent: the defaults in modules/challenges/service.ts. */
  limits?: { maxPendingPerKey: number };
  /** Draining and verifier state for GET /ready; main.ts owns it. Absent in tests: ready. */
  lifecycle?: Lifecycle;
}
