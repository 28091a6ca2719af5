// zkagent serve: one process, or a primary and N worker processes sharing one
// port through SO_REUSEPORT (the kernel spreads connections over the workers).
//
// The primary runs the migrations and bootstraps the first key once, then
// only supervises: it forwards SIGTERM/SIGINT, waits for the workers, and
// restarts a worker that dies unexpectedly. Workers hold no state that
// correctness needs (docs/scaling.md): one-time use, counters and rate
// windows live in the database, so a connection may land on any worker, and
// any number of such clusters on several hosts may share one PostgreSQL.
import type { Subprocess } from "bun";
import { configHelp, type Config } from "../config";
import { createLogger, type Logger } from "../log";
import { bootstrapAndAnnounce, startServer } from "../main";
import { clockFor } from "../clock";
import { openStore } from "../store";
import { parse, say, UsageError } from "./args";

export const serveHelp = `zkagent serve [--workers N]
  Runs the HTTP service.
    --workers N          worker processes sharing the port (default WORKERS, or
                         the number of cores). 1 = a single process, required
                         where the OS has no SO_REUSEPORT (see docs/scaling.md).
  Environment:
${configHelp()}
  On the first start of an empty database it creates and prints an API key.
  Swagger UI: http://localhost:PORT/swagger`;

/** Set by the primary in each worker's environment: the worker's index. */
export const WORKER_ENV = "ZKAGENT_WORKER";

/** A worker that dies sooner than this after its start counts as crash-looping. */
const STABLE_AFTER_MS = 10_000;
const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 5_000;
/** How long the primary waits for workers to drain after forwarding a signal. */
const SHUTDOWN_GRACE_MS = 30_000;

export async function serveCommand(argv: string[], config: Config): Promise<number> {
  const { values } = parse(argv, { workers: { type: "string" } });
  if (values.help) return (say(serveHelp), 0);
  const workers = values.workers === undefined ? config.workers : parseWorkers(values.workers);
  if (process.env[WORKER_ENV] !== undefined) return runWorker(config);
  if (workers === 1) return runSingle(config);
  return runPrimary(config, workers);
}

function parseWorkers(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > 256) throw new UsageError("--workers must be an integer from 1 to 256");
  return value;
}

/**
 * The command line that starts this program again as `zkagent serve`. In a
 * `bun build --compile` binary argv[1] is the embedded entry (/$bunfs/…, or
 * B:/~BUN/… on Windows) and the binary itself is execPath; under
 * `bun src/cli/index.ts` execPath is bun and argv[1] the script.
 */
export function workerCommand(execPath: string, argv1: string | undefined): string[] {
  const compiled = argv1 === undefined || argv1.startsWith("/$bunfs/") || argv1.startsWith("B:/~BUN/") || argv1.startsWith("B:\\~BUN\\");
  return compiled ? [execPath, "serve"] : [execPath, argv1, "serve"];
}

/** Delay before restarting a worker that has died `failures` times in a row. */
export const restartDelay = (failures: number): number => Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** Math.max(0, failures - 1));

/** Resolves on the first SIGTERM or SIGINT, with its name. */
const nextSignal = () =>
  new Promise<NodeJS.Signals>((resolve) => {
    const on = (signal: NodeJS.Signals) => () => {
      process.off("SIGTERM", term);
      process.off("SIGINT", int);
      resolve(signal);
    };
    const term = on("SIGTERM");
    const int = on("SIGINT");
    process.once("SIGTERM", term);
    process.once("SIGINT", int);
  });

async function runSingle(config: Config): Promise<number> {
  const server = await startServer(config);
  await nextSignal();
  await server.stop();
  return 0;
}

async function runWorker(config: Config): Promise<number> {
  const server = await startServer(config, { reusePort: true, bootstrap: false });
  // stdin is a pipe from the primary: when it closes the primary is gone
  // (even by SIGKILL), and an orphaned worker must not keep serving the port.
  const orphaned = (async () => {
    for await (const _ of Bun.stdin.stream()) {
      // The primary never writes; only the end of the stream matters.
    }
  })();
  await Promise.race([nextSignal(), orphaned]);
  await server.stop();
  return 0;
}

async function runPrimary(config: Config, count: number): Promise<number> {
  const logger = createLogger(config.logLevel);

  // Once, before any worker: migrations run here, and the first key is created
  // by exactly one process (workers start with bootstrap: false).
  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous, groupRootDurationMs: config.groupRootDurationS * 1000 });
  try {
    await bootstrapAndAnnounce(store, clockFor(config), config.defaultRateLimit);
  } finally {
    await store.close();
  }

  const port = claimPort(config);
  const command = workerCommand(process.execPath, process.argv[1]);
  const env = { ...process.env, PORT: String(port) };
  const cluster = new Cluster(command, env, count, logger);
  cluster.start();
  logger.info("cluster started", { workers: count, port, pids: cluster.pids() });

  const signal = await nextSignal();
  await cluster.stop(signal);
  logger.info("cluster stopped");
  return 0;
}

/**
 * Checks the port is free (SO_REUSEPORT would otherwise let this cluster
 * silently share it with another program that also set it) and resolves
 * PORT=0 to one port every worker can share.
 */
function claimPort(config: Config): number {
  try {
    const probe = Bun.serve({ port: config.port, hostname: config.hostname, reusePort: false, fetch: () => new Response(null, { status: 503 }) });
    const port = probe.port!;
    probe.stop(true);
    return port;
  } catch (error) {
    throw new Error(`cannot listen on ${config.hostname}:${config.port}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

class Cluster {
  private readonly workers: (Subprocess | undefined)[];
  private readonly failures: number[];
  private stopping = false;

  constructor(
    private readonly command: string[],
    private readonly env: Record<string, string | undefined>,
    count: number,
    private readonly logger: Logger,
  ) {
    this.workers = new Array(count).fill(undefined);
    this.failures = new Array(count).fill(0);
  }

  start(): void {
    for (let index = 0; index < this.workers.length; index++) this.spawn(index);
  }

  pids(): number[] {
    return this.workers.flatMap((worker) => (worker ? [worker.pid] : []));
  }

  private spawn(index: number): void {
    const startedAt = Date.now();
    const worker = Bun.spawn(this.command, {
      env: { ...this.env, [WORKER_ENV]: String(index) },
      stdin: "pipe",
      stdout: "inherit",
      stderr: "inherit",
    });
    this.workers[index] = worker;
    void worker.exited.then((code) => {
      if (this.stopping) return;
      this.failures[index] = Date.now() - startedAt >= STABLE_AFTER_MS ? 1 : this.failures[index]! + 1;
      const delay = restartDelay(this.failures[index]!);
      this.logger.error("worker died; restarting", { worker: index, pid: worker.pid, code, signal: worker.signalCode, restart_in_ms: delay });
      setTimeout(() => {
        if (!this.stopping) this.spawn(index);
      }, delay);
    });
  }

  async stop(signal: NodeJS.Signals): Promise<void> {
    this.stopping = true;
    const running = this.workers.filter((worker): worker is Subprocess => worker !== undefined && worker.exitCode === null && worker.signalCode === null);
    for (const worker of running) worker.kill(signal);
    const grace = setTimeout(() => {
      this.logger.warn("workers did not stop in time; killing", { grace_ms: SHUTDOWN_GRACE_MS });
      for (const worker of running) worker.kill("SIGKILL");
    }, SHUTDOWN_GRACE_MS);
    await Promise.all(running.map((worker) => worker.exited));
    clearTimeout(grace);
  }
}
