// Start-up: config (read once) → store → verifier → createApp(deps).listen().
import { createApp } from "./app";
import { systemClock } from "./clock";
import type { Config } from "./config";
import type { AppDeps } from "./deps";
import { createLogger } from "./log";
import { RETENTION_MS } from "./modules/challenges/lifecycle";
import { bootstrapKey } from "./modules/keys/service";
import { openStore } from "./store";
import { serviceVerifier } from "./verifier/service";

const PURGE_INTERVAL_MS = 60_000;

export interface RunningServer {
  url: string;
  stop(): Promise<void>;
}

export async function startServer(config: Config): Promise<RunningServer> {
  const logger = createLogger(config.logLevel);
  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  const deps: AppDeps = { store, clock: systemClock, verifier: await serviceVerifier(), logger };

  const bootstrap = await bootstrapKey(store, systemClock, config.defaultRateLimit);
  if (bootstrap) {
    // Printed once, on the first start of an empty database: the key is not stored anywhere else.
    process.stdout.write(`\nNo API key existed, so one was created (id ${bootstrap.record.id}):\n\n  ${bootstrap.key}\n\nStore it now; it is not shown again. More: zkagent keys create --name NAME\n\n`);
  }

  // Every node may purge: the DELETE is idempotent and touches only expired rows.
  const purge = async () => {
    try {
      const removed = await store.purgeChallenges(systemClock.now() - RETENTION_MS);
      if (removed > 0) logger.info("purged expired sessions", { removed });
    } catch (error) {
      logger.warn("purge failed", { error: String(error) });
    }
  };
  const purgeTimer = setInterval(purge, PURGE_INTERVAL_MS);
  purgeTimer.unref();
  await purge();

  const app = createApp(deps).listen({ port: config.port, hostname: config.hostname });
  const url = `http://${config.hostname === "0.0.0.0" ? "localhost" : config.hostname}:${app.server!.port}`;
  logger.info("listening", { url, database: deps.store.kind, swagger: `${url}/swagger` });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(purgeTimer);
      await app.server!.stop(false); // stop accepting; let in-flight requests finish
      await store.close();
      logger.info("stopped");
    })());
  return { url, stop };
}
