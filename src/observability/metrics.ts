// The service's metrics, exposed at GET /metrics. Label values come from
// closed sets only (route templates, known methods, status codes, the failure
// reasons), so a caller cannot grow the number of series by choosing paths.
// The one open label is `key_id` on the per-key proof counters: the public id
// of an API key (16 hex digits, never the secret), which only an operator
// can mint, so the series grow with the keys issued, not with requests.
import { Counter, Gauge, Histogram } from "./registry";

export type VerificationResult = "verified" | "failed";

/** How a webhook delivery attempt ended, a closed set. */
export type WebhookAttemptOutcome = "delivered" | "retry" | "failed";

/**
 * How a proof submission ended, a closed set: decided `verified` or
 * `failed` by this submission, or answered without a decision of its own.
 */
export type SubmissionOutcome = "verified" | "failed" | "challenge_used" | "challenge_expired" | "challenge_not_found" | "unauthorized_session" | "error";

export interface Metrics {
  /** One HTTP request answered. `route` is the route template ("/v1/agents/:agentId"), never the raw path. */
  request(method: string, route: string, status: number, ms: number): void;
  /**
   * One verification decided. Called by the proofs service after the store
   * accepted the decision, so a lost race is not counted twice; `reason` is
   * null when verified; `ms` is the time spent evaluating proof and signature.
   */
  verification(result: VerificationResult, reason: string | null, ms: number): void;
  /** One run of the verifier: a proof checked alone (size 1) or a batch of `size` queued proofs (verifier/batching.ts). */
  verificationRun(size: number): void;
  /** One proof submission answered, by the key's public id (never its secret) and how it ended. */
  proofSubmission(keyId: string, outcome: SubmissionOutcome): void;
  /** One proof handed to the verifier for a challenge of this key: the pairing work a key caused. */
  proofCheck(keyId: string): void;
  /** One webhook delivery attempt ended: delivered (2xx), to be retried, or failed for good (issue 27). */
  webhookAttempt(outcome: WebhookAttemptOutcome): void;
  /** The exposition text; the gauges are read now. */
  render(gauges?: readonly Gauge[]): Promise<string>;
}

/** The label for requests that matched no route: one series, whatever the path. */
export const UNMATCHED_ROUTE = "unmatched";

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

// Seconds (Prometheus base unit). Requests: from sub-millisecond reads to a
// slow database; verifications: a Groth16 pairing check is milliseconds to tens of them.
export const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
export const VERIFICATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;
// Proofs per verifier run: 1 when idle, up to the batcher's cap (32) under load.
export const BATCH_SIZE_BUCKETS = [1, 2, 4, 8, 16, 32] as const;

export function createMetrics(options: { version?: string } = {}): Metrics {
  const requests = new Counter("zkagent_http_requests_total", "HTTP requests answered, by method, route template and status.", ["method", "route", "status"]);
  const latency = new Histogram(
    "zkagent_http_request_duration_seconds",
    "Time from request received to response handed to the server, by route template.",
    ["method", "route"],
    REQUEST_BUCKETS,
  );
  const verifications = new Counter("zkagent_verifications_total", 'Proof verifications decided, by result and failure reason ("none" when verified).', [
    "result",
    "reason",
  ]);
  const verificationTime = new Histogram(
    "zkagent_verification_duration_seconds",
    "Time to evaluate a proof and its signature, by result.",
    ["result"],
    VERIFICATION_BUCKETS,
  );
  const batchSizes = new Histogram(
    "zkagent_verification_batch_size",
    "Proofs per verifier run: 1 for a proof verified alone, more when queued proofs were verified as one batch.",
    [],
    BATCH_SIZE_BUCKETS,
  );
  const submissions = new Counter("zkagent_proof_submissions_total", "Proof submissions answered, by API key id (the public 16 hex digits) and outcome.", [
    "key_id",
    "outcome",
  ]);
  const checks = new Counter(
    "zkagent_proof_checks_total",
    "Proofs handed to the verifier (Groth16 checks), by the API key id of the challenge: at most one at a time per challenge.",
    ["key_id"],
  );
  const webhookAttempts = new Counter(
    "zkagent_webhook_deliveries_total",
    'Webhook delivery attempts, by outcome: "delivered" (2xx), "retry" (scheduled again), "failed" (given up after the retry period, or the endpoint gone).',
    ["outcome"],
  );
  const started = Date.now() / 1000;
  const process_ = [
    new Gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.", () => started),
    new Gauge("process_resident_memory_bytes", "Resident memory size in bytes.", () => process.memoryUsage().rss),
  ];
  const info = `# HELP zkagent_build_info The running version.\n# TYPE zkagent_build_info gauge\nzkagent_build_info{version="${options.version ?? "unknown"}"} 1`;

  return {
    request(method, route, status, ms) {
      const m = METHODS.has(method) ? method : "OTHER";
      requests.inc({ method: m, route, status: String(status) });
      latency.observe({ method: m, route }, ms / 1000);
    },
    verification(result, reason, ms) {
      verifications.inc({ result, reason: reason ?? "none" });
      verificationTime.observe({ result }, ms / 1000);
    },
    verificationRun(size) {
      batchSizes.observe({}, size);
    },
    proofSubmission(keyId, outcome) {
      submissions.inc({ key_id: keyId, outcome });
    },
    proofCheck(keyId) {
      checks.inc({ key_id: keyId });
    },
    webhookAttempt(outcome) {
      webhookAttempts.inc({ outcome });
    },
    async render(gauges = []) {
      const parts = [
        requests.render(),
        latency.render(),
        verifications.render(),
        verificationTime.render(),
        batchSizes.render(),
        submissions.render(),
        checks.render(),
        webhookAttempts.render(),
        info,
      ];
      for (const gauge of [...gauges, ...process_]) parts.push(await gauge.collect());
      return `${parts.join("\n")}\n`;
    },
  };
}
