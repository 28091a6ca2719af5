// What the HTTP layer is built from; main.ts assembles it once, tests build their own.
// Only lower layers are imported here: the domain, the store, the verifier, observability.
import type { Clock } from "./clock";
import type { Lifecycle } from "./lifecycle";
import type { Logger } from "./log";
import type { Metrics } from "./observability/metrics";
import type { Store } from "./store/interface";
import type { Verifier } from "./verifier/types";

export interface AppDeps {
  store: Store;
  clock: Clock;
  verifier: Verifier;
  logger: Logger;
  /** Counters and histograms for GET /metrics; createApp makes one when absent. */
  metrics?: Metrics;
  /** Abuse limits beyond the per-key rate limit; absent: DEFAULT_MAX_PENDING_PER_KEY (config.ts). */
  limits?: { maxPendingPerKey: number };
  /** Draining and verifier state for GET /ready; main.ts owns it. Absent in tests: ready. */
  lifecycle?: Lifecycle;
}
