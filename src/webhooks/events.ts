// The events a webhook endpoint can subscribe to, and the body each delivery
// carries. The shape follows the Standard Webhooks recommendation
// ({type, timestamp, data}); `data` holds the decision's fields as the status
// endpoint reports them (its subject named by sessionSubject), the context the
// proof bound, and the signed receipt the proof answer carried.
import { type SpendSubject, sessionSubject } from "../identity/subject";
import type { ChallengeRecord } from "../store/challenges/records";

/**
 * The decisions, one event each. There is no `session.expired`: a challenge
 * expires by the clock, with no write that could carry an event, and finding
 * expiries would take a scan of pending sessions every second.
 */
export const EVENT_TYPES = ["session.verified", "session.failed"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (name: string): name is EventType => (EVENT_TYPES as readonly string[]).includes(name);

/** The event a decision emits. */
export const eventTypeOf = (status: "verified" | "failed"): EventType => (status === "verified" ? "session.verified" : "session.failed");

/**
 * How an endpoint's subscriptions are stored: the types between commas, so
 * the deciding transaction finds the subscribed endpoints with one LIKE on
 * `subscribedPattern(type)` (no JSON functions, the same in both stores).
 */
export const eventsColumn = (events: readonly EventType[]): string => `,${[...new Set(events)].sort().join(",")},`;
export const eventsOf = (column: string): EventType[] => column.split(",").filter(isEventType);
export const subscribedPattern = (type: EventType): string => `%,${type},%`;

/** The Standard Webhooks message id: the same on every attempt, so receivers deduplicate by it. */
export const newEventId = (): string => `msg_${crypto.randomUUID().replaceAll("-", "")}`;

export interface SessionEventData {
  session_id: string;
  status: "verified" | "failed";
  /** The subject (sessionSubject): the agent id; for a group session the pseudonym ("" when no proof gave one). */
  agent_id: string;
  /** Group sessions only: the group, and the member's pseudonym (null when no proof gave one). Never a commitment. */
  group_id?: string;
  pseudonym?: string | null;
  /** Budget sessions only: the verified spend (null when none verified). Never a member. */
  spend?: SpendSubject | null;
  action: string;
  /** The context the proof bound, as the challenge fixed it; null when the challenge had none. */
  context: Record<string, unknown> | null;
  /** The bound context's `amount` and `currency`, copied when it has them (a string, or a number as the context wrote it). */
  amount?: string | number;
  currency?: string;
  confidence: number | null;
  reason: string | null;
  /** The mandate constraint a refusal broke (`max_total`, …); absent otherwise. */
  detail?: string;
  decided_at: string;
  /** The signed receipt (compact JWS), the one the proof answer and the status endpoint return. */
  receipt: string | null;
}

export interface EventPayload {
  type: EventType;
  /** When the decision was made (ISO 8601). */
  timestamp: string;
  data: SessionEventData;
}

/** The body of every delivery of the event about `record`, a decided challenge. */
export function eventPayload(type: EventType, record: ChallengeRecord, receipt: string | null): EventPayload {
  if (record.status === "pending" || record.decidedAt === null) throw new Error(`session ${record.id} is not decided`);
  const detail = record.evidence?.mandate?.violation ?? undefined;
  const decidedAt = new Date(record.decidedAt).toISOString();
  const context = record.context === null ? null : (JSON.parse(record.context) as Record<string, unknown>);
  const { amount, currency } = context ?? {};
  return {
    type,
    timestamp: decidedAt,
    data: {
      session_id: record.id,
      status: record.status,
      ...sessionSubject(record),
      action: record.action,
      context,
      ...(typeof amount === "string" || typeof amount === "number" ? { amount } : {}),
      ...(typeof currency === "string" ? { currency } : {}),
      confidence: record.confidence,
      reason: record.reason,
      ...(detail ? { detail } : {}),
      decided_at: decidedAt,
      receipt,
    },
  };
}
