// The storage contract: one interface per aggregate (src/store/<aggregate>/records.ts),
// composed. Two implementations honour it (sqlite.ts, postgres.ts, each
// composing its dialect's aggregates) and one test suite (test/store/contract.ts)
// runs against both. Everything correctness needs across processes and hosts
// lives behind it: one-time use, counters and rate-limit windows are atomic in
// the database.
//
// A domain module imports the records of the aggregates it uses from their
// folders; this file gathers them for the deps and the tests.
import type { AgentsStore } from "./agents/records";
import type { AuditStore } from "./audit/records";
import type { BudgetsStore } from "./budgets/records";
import type { ChallengesStore } from "./challenges/records";
import type { CircuitsStore } from "./circuits/records";
import type { DecisionsStore } from "./decisions/records";
import type { GroupsStore } from "./groups/records";
import type { IdempotencyStore } from "./idempotency/records";
import type { KeysStore } from "./keys/records";
import type { SigningKeysStore } from "./signing-keys/records";
import type { WebhooksStore } from "./webhooks/records";

export type * from "./agents/records";
export type * from "./audit/records";
export type * from "./challenges/records";
export type * from "./circuits/records";
export type * from "./decisions/records";
export type * from "./groups/records";
export type * from "./idempotency/records";
export type * from "./budgets/records";
export type * from "./keys/records";
export type * from "./signing-keys/records";
export type * from "./webhooks/records";
export { newGroupRecord } from "./groups/records";
export { StoreUnavailableError } from "./unavailable";

export interface Store
  extends KeysStore,
    AgentsStore,
    ChallengesStore,
    DecisionsStore,
    AuditStore,
    SigningKeysStore,
    CircuitsStore,
    IdempotencyStore,
    GroupsStore,
    WebhooksStore,
    BudgetsStore {
  readonly kind: "sqlite" | "postgres";
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
