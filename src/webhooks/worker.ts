// The delivery worker: reads the outbox, signs and sends; it decides nothing.
// Every node runs one. It claims due deliveries with a lease (the store's
// conditional update gives each to one node at a time), sends each on its
// own, and records the attempt only while its lease holds.
//
// Isolation between keys: deliveries to one endpoint run at most
// `perEndpoint` at a time on a node, each within `timeoutMs`; an endpoint
// that is busy here is skipped by the next claim, so a dead or slow receiver
// holds its own deliveries back and no one else's.
import type { Clock } from "../clock";
import type { Logger } from "../log";
import type { Metrics } from "../observability/metrics";
import { type Receipts, receiptOrNull } from "../receipts/service";
import type { ChallengesStore } from "../store/challenges/records";
import type { ClaimedWebhookDelivery, WebhookAttemptOutcome, WebhooksStore } from "../store/webhooks/records";
import { type BackoffSchedule, DEFAULT_SCHEDULE, nextAttemptAt } from "./backoff";
import { type AttemptResult, send } from "./deliver";
import { eventPayload, isEventType } from "./events";
import { checkTarget, type Resolver, systemResolver } from "./policy";
import { webhookHeaders } from "./signing";
import { onOutboxWritten } from "./wake";

/** The store's aggregates this module uses. */
type Stores = ChallengesStore & WebhooksStore;

export interface WorkerOptions {
  store: Stores;
  clock: Clock;
  logger: Logger;
  receipts: Receipts;
  metrics?: Metrics;
  /** WEBHOOKS_ALLOW_PRIVATE: http and private addresses allowed (development, tests). */
  allowPrivate: boolean;
  /** Per attempt: connection, request and the first bytes of the answer. */
  timeoutMs: number;
  /** How often the outbox is read without a wake-up: deliveries other nodes' decisions wrote, retries coming due. */
  pollMs: number;
  schedule?: BackoffSchedule;
  /** Attempts in flight to one endpoint on this node. */
  perEndpoint?: number;
  /** Deliveries claimed per read. */
  batch?: number;
  resolve?: Resolver;
}

export const DEFAULT_PER_ENDPOINT = 16;
/** How long a delivered or failed delivery stays listable and redeliverable before the purge removes it (and its event). */
export const WEBHOOK_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const DEFAULT_BATCH = 64;
/** Beyond the attempt's own deadline: building the body, the DNS lookup, recording the outcome. */
const LEASE_MARGIN_MS = 5_000;

export class DeliveryWorker {
  private readonly inFlight = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  private readonly schedule: BackoffSchedule;
  private readonly perEndpoint: number;
  private readonly batch: number;
  private readonly resolve: Resolver;
  private timer: ReturnType<typeof setInterval> | undefined;
  private unsubscribe: (() => void) | undefined;
  private pumping = false;
  private again = false;
  private stopped = true;

  constructor(private readonly options: WorkerOptions) {
    this.schedule = options.schedule ?? DEFAULT_SCHEDULE;
    this.perEndpoint = options.perEndpoint ?? DEFAULT_PER_ENDPOINT;
    this.batch = options.batch ?? DEFAULT_BATCH;
    this.resolve = options.resolve ?? systemResolver;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.unsubscribe = onOutboxWritten(() => this.wake());
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.timer.unref?.();
    this.wake();
  }

  /** Stops claiming; attempts in flight finish (each within its deadline) and are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
    while (this.pumping || this.attempts.size > 0) await Promise.race([...this.attempts, Bun.sleep(10)]);
  }

  /** Reads the outbox now (after a commit, a finished attempt, or the poll). */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.pump().finally(() => (this.pumping = false));
  }

  private async pump(): Promise<void> {
    do {
      this.again = false;
      let claimed: ClaimedWebhookDelivery[];
      try {
        const now = this.options.clock.now();
        const busy = [...this.inFlight].filter(([, n]) => n >= this.perEndpoint).map(([id]) => id);
        claimed = await this.options.store.claimWebhookDeliveries({
          token: crypto.randomUUID(),
          now,
          until: now + this.options.timeoutMs + LEASE_MARGIN_MS,
          limit: this.batch,
          perEndpoint: this.perEndpoint,
          skipEndpoints: busy,
        });
      } catch (error) {
        this.options.logger.warn("webhook outbox not read", { error: String(error) });
        return;
      }
      for (const delivery of claimed) this.launch(delivery);
      if (claimed.length === this.batch) this.again = true;
    } while (this.again && !this.stopped);
  }

  private launch(delivery: ClaimedWebhookDelivery): void {
    const endpoint = delivery.endpointId;
    this.inFlight.set(endpoint, (this.inFlight.get(endpoint) ?? 0) + 1);
    const attempt = this.attempt(delivery)
      .catch((error) => this.options.logger.warn("webhook attempt not recorded", { event_id: delivery.eventId, error: String(error) }))
      .finally(() => {
        const held = this.inFlight.get(endpoint) ?? 1;
        if (held > 1) this.inFlight.set(endpoint, held - 1);
        else this.inFlight.delete(endpoint);
        this.attempts.delete(attempt);
        // The endpoint was skipped by claims while it was full: read again for its waiting deliveries.
        if (held >= this.perEndpoint) this.wake();
      });
    this.attempts.add(attempt);
  }

  /** One attempt of one delivery, recorded under its lease. */
  private async attempt(delivery: ClaimedWebhookDelivery): Promise<void> {
    const { store, clock, logger } = this.options;
    const result = await this.sendOnce(delivery);
    const at = clock.now();
    const attempts = delivery.attempts + 1;
    const payload = result.payload === undefined ? {} : { payload: result.payload };
    let outcome: WebhookAttemptOutcome;
    if (result.delivered) outcome = { state: "delivered", attempts, nextAt: at, status: result.status, error: null, at, ...payload };
    else {
      const next = result.final ? null : nextAttemptAt(this.schedule, delivery.createdAt, attempts, at);
      outcome =
        next === null
          ? { state: "failed", attempts, nextAt: at, status: result.status, error: result.error, at, ...payload }
          : { state: "pending", attempts, nextAt: next, status: result.status, error: result.error, at, ...payload };
    }
    const recorded = await store.finishWebhookDelivery(delivery.eventId, delivery.endpointId, delivery.leaseToken, outcome);
    this.options.metrics?.webhookAttempt(outcome.state === "delivered" ? "delivered" : outcome.state === "failed" ? "failed" : "retry");
    if (!recorded) logger.warn("webhook lease lost before the attempt was recorded", { event_id: delivery.eventId, endpoint_id: delivery.endpointId });
    else if (outcome.state !== "delivered")
      logger.info("webhook attempt failed", {
        event_id: delivery.eventId,
        endpoint_id: delivery.endpointId,
        attempts,
        state: outcome.state,
        error: outcome.error,
      });
  }

  private async sendOnce(delivery: ClaimedWebhookDelivery): Promise<AttemptResult & { final?: boolean; payload?: string }> {
    const { clock, allowPrivate, timeoutMs } = this.options;
    const { endpoint } = delivery;
    if (endpoint.deletedAt !== null) return { delivered: false, status: null, error: "endpoint deleted", final: true };
    const body = delivery.payload ?? (await this.buildPayload(delivery));
    if (typeof body !== "string") return { delivered: false, status: null, ...body };
    const fixed = delivery.payload === null ? { payload: body } : {};
    // Checked again at every attempt: what the name resolves to now is what we connect to.
    const target = await checkTarget(endpoint.url, allowPrivate, this.resolve);
    if (!target.ok) return { delivered: false, status: null, error: `URL refused: ${target.problem}`, ...fixed };
    const now = clock.now();
    const secrets = [endpoint.secret];
    if (endpoint.previousSecret && endpoint.previousUntil !== null && endpoint.previousUntil > now) secrets.push(endpoint.previousSecret);
    return { ...(await send(target.target, webhookHeaders(secrets, delivery.eventId, now, body), body, timeoutMs)), ...fixed };
  }

  /**
   * The body of the event at its first attempt, from the decided session and
   * its receipt (signed now from the stored evidence if the decider died
   * before signing: the same receipt, docs/receipts.md). It is stored with
   * the attempt's outcome, so later attempts send the same bytes; two
   * endpoints' first attempts build the same bytes (the stored receipt, one
   * serialization).
   */
  private async buildPayload(delivery: ClaimedWebhookDelivery): Promise<string | { error: string; final?: boolean }> {
    const { store, logger, receipts } = this.options;
    const record = await store.getChallenge(delivery.sessionId);
    if (!record || record.status === "pending" || !isEventType(delivery.type)) return { error: "session no longer stored", final: true };
    const receipt = await receiptOrNull({ store, logger, ...receipts }, record);
    // Retried later rather than sent without the receipt a status read would show.
    if (receipt === null && record.evidence) return { error: "receipt not signed yet" };
    return JSON.stringify(eventPayload(delivery.type, record, receipt));
  }
}
