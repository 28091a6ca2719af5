// What the HTTP layer is built from; main.ts assembles it once, tests build their own.
// Only lower layers are imported here: the domain, the store, the verifier, observability.
import type { CircuitRegistry } from "./circuits/registry";
import type { Clock } from "./clock";
import type { TreeCache } from "./groups/cache";
import type { Lifecycle } from "./lifecycle";
import type { Logger } from "./log";
import type { Metrics } from "./observability/metrics";
import type { Receipts } from "./receipts/service";
import type { Store } from "./store/interface";
import type { Verifier } from "./verifier/types";
import type { Resolver } from "./webhooks/policy";

export interface AppDeps {
  store: Store;
  clock: Clock;
  /** The shipped circuit's verifier. */
  verifier: Verifier;
  logger: Logger;
  /** The circuit versions and their verifiers; createApp makes one on the store (around `verifier`) when absent. */
  circuits?: CircuitRegistry;
  /** This process's cached group trees (src/groups/cache.ts; main.ts runs them on a worker thread); createApp makes an in-thread one when absent. */
  groups?: TreeCache;
  /** Receipt signing (the active key's cache, the issuer); createApp makes one on the store when absent. */
  receipts?: Receipts;
  /** Counters and histograms for GET /metrics; createApp makes one when absent. */
  metrics?: Metrics;
  /** Abuse limits beyond the per-key rate limit; absent: DEFAULT_MAX_PENDING_PER_KEY (config.ts), the agent defaults in modules/agents/service.ts. */
  limits?: {
    maxPendingPerKey?: number;
    defaultAgentRateLimit?: number;
    maxAgentsPerKey?: number;
    /** Issue 32 (config.ts GROUP_*): absent, the defaults of SETTINGS. */
    groupMaxPerKey?: number;
    groupMaxMembers?: number;
    groupAdditionsInFlight?: number;
    groupAdditionsInFlightTotal?: number;
    membersReadsPerMinute?: number;
    /** Issue 40 (config.ts BUDGET_CHECKPOINT_WINDOW): how many newest notes checkpoints a spend may name. */
    budgetCheckpointWindow?: number;
  };
  /** PUBLIC_URL: the server of the OpenAPI document; absent, the document names the host that served it. */
  publicUrl?: string;
  /** When set, GET /metrics requires `Authorization: Bearer <metricsToken>` (METRICS_TOKEN). */
  metricsToken?: string;
  /** Webhooks (docs/webhooks.md): WEBHOOKS_ALLOW_PRIVATE, and the resolver URLs are checked with (tests pass their own). */
  webhooks?: { allowPrivate?: boolean; resolve?: Resolver };
  /** Draining and verifier state for GET /ready; main.ts owns it. Absent in tests: ready. */
  lifecycle?: Lifecycle;
}

/** AppDeps as createApp completes them for the modules. */
export type ModuleDeps = AppDeps & Required<Pick<AppDeps, "metrics" | "receipts" | "circuits" | "groups">>;
