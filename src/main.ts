// Start-up: config (read once) → store → verifier → createApp(deps).listen().
import { GroupTrees, type TreeCache } from "./groups/cache";
import { ThreadTreeCache } from "./groups/thread";
import { createApp } from "./app";
import { CircuitRegistry, rebuildCircuitListings, SHIPPED_CIRCUIT_ID, seedShippedCircuit, setupOf } from "./circuits/registry";
import { type Clock, clockFor } from "./clock";
import type { Config } from "./config";
import type { AppDeps } from "./deps";
import { createLogger, type Logger } from "./log";
import { IDEMPOTENCY_RETENTION_MS } from "./http/idempotency";
import { NotesCheckpointer } from "./budgets/checkpoints";
import { Lifecycle } from "./lifecycle";
import { RETENTION_MS } from "./modules/challenges/lifecycle";
import { bootstrapKey } from "./modules/keys/service";
import { fillSigningKeyIds } from "./modules/agents/service";
import { createMetrics } from "./observability/metrics";
import type { Receipts } from "./receipts/service";
import { ReceiptSigner } from "./receipts/signer";
import { openStore } from "./store";
import type { Store } from "./store/interface";
import { batchingServiceVerifier } from "./verifier/service";
import { DeliveryWorker, WEBHOOK_RETENTION_MS } from "./webhooks/worker";
import pkg from "../package.json";

const PURGE_INTERVAL_MS = 60_000;
const DAY_MS = 24 * 60 * 60 * 1000;
// In-flight requests get this long to finish after SIGTERM; then connections are cut.
const DRAIN_TIMEOUT_MS = 25_000;

export interface RunningServer {
  url: string;
  /** Drains: /ready answers 503, the listener closes, in-flight requests finish, then the database closes. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Share the port with sibling worker processes (Linux SO_REUSEPORT); see cli/serve.ts. */
  reusePort?: boolean;
  /** Create the first key on an empty database. Only one process of a cluster does it: the primary. */
  bootstrap?: boolean;
  /**
   * How long to keep serving (with /ready at 503) after stop() before closing
   * the listener, so a load balancer polling /ready takes the node out first.
   */
  drainDelayMs?: number;
}

/**
 * Creates the first key on an empty database and prints it on stdout: it is
 * shown this once and stored nowhere else. The primary of a cluster calls it
 * too (cli/serve.ts), before any worker starts.
 */
export async function bootstrapAndAnnounce(store: Store, clock: Clock, rateLimit: number): Promise<void> {
  const created = await bootstrapKey(store, clock, rateLimit);
  if (!created) return;
  process.stdout.write(
    `\nNo API key existed, so one was created (id ${created.record.id}):\n\n  ${created.key}\n\nStore it now; it is not shown again. More: zkagent keys create --name NAME\n\n`,
  );
}

/** Addresses only this machine can reach: a receipt issued as http://localhost:PORT there is not misleading. */
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i;

/**
 * Without PUBLIC_URL the receipts' `iss` is the listen address, which on an
 * address others reach (0.0.0.0, a LAN or public IP) names no URL a verifier
 * should trust. Not refused (docs/api.md, Decisions): the warning says it at
 * start. Returns the warning's fields, or null when there is nothing to say.
 */
export function localIssuerWarning(config: Pick<Config, "hostname" | "publicUrl">, issuer: string): Record<string, string> | null {
  if (config.publicUrl || LOOPBACK.test(config.hostname)) return null;
  return {
    iss: issuer,
    host: config.hostname,
    fix: "set PUBLIC_URL to the URL clients reach this service at; verifiers pin its /.well-known/jwks.json (docs/receipts.md)",
  };
}

/**
 * WEBHOOKS_ALLOW_PRIVATE=true lets webhook URLs reach http and this machine's
 * or the LAN's addresses: what a local receiver needs, and a server-side
 * request forgery in production. Said at start, so the setting is never on
 * unnoticed. Returns the warning's fields, or null when it is off.
 */
export function privateWebhooksWarning(config: Pick<Config, "webhooksAllowPrivate">): Record<string, string> | null {
  if (config.webhooksAllowPrivate !== "true") return null;
  return {
    setting: "WEBHOOKS_ALLOW_PRIVATE=true",
    effect: "webhook URLs may use http and loopback, link-local or private addresses",
    fix: "unset it outside local development and tests (docs/webhooks.md)",
  };
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const logger = createLogger(config.logLevel);
  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous, groupRootDurationMs: config.groupRootDurationS * 1000 });
  const lifecycle = new Lifecycle();
  const clock = clockFor(config);
  // The one place the service's verifier is chosen: proofs that arrive while
  // one is being verified are verified together (verifier/batching.ts); on
  // PostgreSQL by default on a thread of its own, so the database round trips
  // of other requests do not wait behind a verification (docs/performance.md).
  const metrics = createMetrics({ version: pkg.version });
  const threaded = config.verifierThread === "on" || (config.verifierThread === "auto" && store.kind === "postgres");
  const verifierOptions = { threads: threaded ? 1 : 0, onRun: (size: number) => metrics.verificationRun(size) };
  const verifier = await batchingServiceVerifier(verifierOptions);
  // Circuits are data (docs/trust.md): the shipped one is seeded on first
  // start (active when none is), and each circuit a challenge names gets a
  // verifier of its own key, built like the shipped one, on first use.
  const circuits = new CircuitRegistry(store, {
    shipped: verifier,
    verifierFor: (verificationKey) => batchingServiceVerifier({ ...verifierOptions, verificationKey }),
  });
  try {
    await seedShippedCircuit(store, clock.now());
    // Rows stored before listings were: re-checked and rebuilt once (a no-op on every later start).
    const rebuilt = await rebuildCircuitListings(store);
    for (const { id, reason } of rebuilt.refused) logger.warn("circuit not served: its stored transcript failed the checks", { circuit_id: id, reason });
    // Agents registered before their signing key's thumbprint was stored: filled once (a no-op on every later start).
    const filled = await fillSigningKeyIds(store);
    if (filled > 0) logger.info("stored the signing key thumbprints of agents registered before", { agents: filled });
  } catch (error) {
    await store.close();
    throw error;
  }
  lifecycle.verifierLoaded = true;
  // The first start creates the receipt signing key (nodes starting together
  // race safely); a sealed key without RECEIPT_KEY_SECRET stops the start
  // here rather than at the first decision.
  const signer = new ReceiptSigner(store, { secret: config.receiptKeySecret || undefined });
  try {
    await signer.activeKid();
  } catch (error) {
    await store.close();
    throw error;
  }
  const listenUrl = (port: number) => `http://${config.hostname === "0.0.0.0" ? "localhost" : config.hostname}:${port}`;
  // Without PUBLIC_URL the issuer is the listen address; with PORT=0 it is known after listen().
  const receipts: Receipts = { signer, issuer: config.publicUrl || listenUrl(config.port) };
  const deps: AppDeps = {
    store,
    receipts,
    clock,
    verifier,
    circuits,
    logger,
    metrics,
    lifecycle,
    groups: await groupTrees(config, logger),
    limits: {
      maxPendingPerKey: config.maxPendingPerKey,
      defaultAgentRateLimit: config.defaultAgentRateLimit,
      maxAgentsPerKey: config.maxAgentsPerKey,
      groupMaxPerKey: config.groupMaxPerKey,
      groupMaxMembers: config.groupMaxMembers,
      groupAdditionsInFlight: config.groupAdditionsInFlight,
      groupAdditionsInFlightTotal: config.groupAdditionsInFlightTotal,
      membersReadsPerMinute: config.membersReadsPerMinute,
      budgetCheckpointWindow: config.budgetCheckpointWindow,
    },
    metricsToken: config.metricsToken || undefined,
    publicUrl: config.publicUrl || undefined,
    webhooks: { allowPrivate: config.webhooksAllowPrivate === "true" },
  };

  if (options.bootstrap !== false) await bootstrapAndAnnounce(store, clock, config.defaultRateLimit);

  // Every node may purge: the DELETE is idempotent and touches only expired rows.
  let purging: Promise<void> = Promise.resolve();
  const purge = () => (purging = purgeOnce());
  const purgeOnce = async () => {
    try {
      const removed = await store.purgeChallenges(clock.now() - RETENTION_MS);
      if (removed > 0) logger.info("purged expired sessions", { removed });
      await store.purgeIdempotency(clock.now() - IDEMPOTENCY_RETENTION_MS);
      // Finished webhook deliveries stay listable (and redeliverable) for WEBHOOK_RETENTION_MS.
      await store.purgeWebhooks(clock.now() - WEBHOOK_RETENTION_MS);
      // Notes checkpoints no spend can name any more: a day old and out of the window (one a group per BUDGET_CHECKPOINT_S otherwise).
      await store.purgeCheckpoints(clock.now() - DAY_MS, config.budgetCheckpointWindow);
      // The only DELETE the append-only audit log allows (see the store's purgeAudit).
      if (config.auditRetentionDays > 0) {
        const removed = await store.purgeAudit(clock.now() - config.auditRetentionDays * DAY_MS);
        if (removed > 0) logger.info("purged audit entries past retention", { removed, retention_days: config.auditRetentionDays });
      }
    } catch (error) {
      logger.warn("purge failed", { error: String(error) });
    }
  };
  const purgeTimer = setInterval(purge, PURGE_INTERVAL_MS);
  purgeTimer.unref();
  await purge();

  // Every node records notes checkpoints of the budgeted groups that grew (docs/protocol.md, "Roots"); nodes agree on each sequence by its unique key.
  const checkpointer = new NotesCheckpointer(store, () => clock.now());
  let checkpointing: Promise<void> = Promise.resolve();
  const checkpoint = () =>
    (checkpointing = checkpointer.tick().then(
      () => {},
      (error) => logger.warn("notes checkpoint failed", { error: String(error) }),
    ));
  const checkpointTimer = setInterval(checkpoint, config.budgetCheckpointS * 1000);
  checkpointTimer.unref();

  // Every node delivers webhooks from the outbox (docs/webhooks.md); the worker only reads it, signs and sends.
  const webhooks = new DeliveryWorker({
    store,
    clock,
    logger,
    receipts,
    metrics,
    allowPrivate: config.webhooksAllowPrivate === "true",
    timeoutMs: config.webhooksTimeoutMs,
    pollMs: config.webhooksPollMs,
  });

  const app = createApp(deps).listen({ port: config.port, hostname: config.hostname, reusePort: options.reusePort ?? false });
  webhooks.start();
  const url = listenUrl(app.server!.port!);
  if (!config.publicUrl) receipts.issuer = url;
  logger.info("listening", { url, database: deps.store.kind, swagger: `${url}/swagger` });
  const warning = localIssuerWarning(config, receipts.issuer);
  if (warning) logger.warn("PUBLIC_URL is not set: receipts carry a local issuer", warning);
  if (config.testClockFile)
    logger.warn("the clock is a test clock", { setting: `TEST_CLOCK_FILE=${config.testClockFile}`, now: new Date(clock.now()).toISOString() });
  const privateWebhooks = privateWebhooksWarning(config);
  if (privateWebhooks) logger.warn("webhooks may reach private addresses", privateWebhooks);
  // Which setup the proofs of new challenges rest on (docs/trust.md).
  const active = await circuits.active();
  logger.info("circuit", {
    active: active.id,
    vk_hash: active.vkHash,
    setup: setupOf(active.id),
    ...(active.id === SHIPPED_CIRCUIT_ID ? { note: "development setup: phase 2 made by the zkagent project; run your own (docs/operations.md)" } : {}),
  });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      lifecycle.draining = true;
      logger.info("draining", { delay_ms: options.drainDelayMs ?? 0 });
      clearInterval(purgeTimer);
      clearInterval(checkpointTimer);
      // No new claims from here: deliveries of decisions made while draining go to the other nodes'
      // polls (or this node's restart). Attempts in flight finish meanwhile, each within its deadline,
      // and are recorded, so no lease is left to expire (docs/webhooks.md, Shutdown).
      const webhooksStopped = webhooks.stop();
      if (options.drainDelayMs) await Bun.sleep(options.drainDelayMs);
      // stop(false) closes the listener at once and resolves when the in-flight requests have been answered.
      const drained = app.server!.stop(false).then(() => true);
      const timedOut = Bun.sleep(DRAIN_TIMEOUT_MS).then(() => false);
      if (!(await Promise.race([drained, timedOut]))) {
        logger.warn("drain timed out; closing open connections", { timeout_ms: DRAIN_TIMEOUT_MS });
        await app.server!.stop(true);
      }
      // Elysia runs onAfterResponse hooks (request log, metrics) a tick after the response is out.
      await new Promise((resolve) => setImmediate(resolve));
      await purging; // a purge in progress still holds the database
      await checkpointing;
      await webhooksStopped; // attempts in flight end within their deadline and are recorded
      await store.close();
      await circuits.close();
      verifier.close();
      logger.info("stopped");
    })());
  return { url, stop };
}

/**
 * Group trees hashed on a thread of their own (issue 32), within
 * GROUP_TREE_CACHE_MB. A thread that cannot start (a packaging without its
 * module, a runtime without Workers) costs fairness, never the service: the
 * trees are then hashed on the event loop, and the log says so.
 */
async function groupTrees(config: Config, logger: Logger): Promise<TreeCache> {
  const budget = config.groupTreeCacheMb * 2 ** 20;
  if (config.groupTreeThread !== "on") return new GroupTrees(budget);
  try {
    return await ThreadTreeCache.start(budget);
  } catch (error) {
    logger.warn("group trees hashed on the event loop: their thread did not start", { error: error instanceof Error ? error.message : String(error) });
    return new GroupTrees(budget);
  }
}
