// A PostgreSQL cluster of one test's own that the test may stop and start
// again (the run's shared server must never be stopped): the throwaway
// cluster of ./postgres-cluster.ts, plus pause and resume with pg_ctl on the
// same data directory and port.
import { join } from "node:path";
import { startCluster } from "./postgres-cluster";

export interface OwnCluster {
  url: string;
  /** pg_ctl start on the same data and port. */
  start(): Promise<void>;
  /**
   * Fast shutdown: every connection is terminated at once (57P01), as in a
   * restart or failover. Not immediate mode: the shared cluster runs with
   * synchronous_commit off, and an immediate stop would lose the last commits.
   */
  stop(): Promise<void>;
  /** Stops it for good and removes its directory. */
  destroy(): Promise<void>;
}

async function pgCtl(bindir: string, args: string[]): Promise<void> {
  const argv = [join(bindir, "pg_ctl"), ...args];
  // As root the server runs as `postgres`, as postgres-cluster.ts starts it.
  const child = Bun.spawn(process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", ...argv] : argv, { stdout: "pipe", stderr: "pipe" });
  const code = await child.exited;
  if (code !== 0) throw new Error(`pg_ctl ${args.join(" ")} exited ${code}: ${await new Response(child.stderr).text()}`);
}

export async function createOwnCluster(): Promise<OwnCluster> {
  const cluster = await startCluster();
  const data = join(cluster.dir, "data");
  return {
    url: cluster.url,
    start: () => pgCtl(cluster.bindir, ["-D", data, "-l", join(cluster.dir, "postgres.log"), "-w", "-t", "60", "start"]),
    stop: () => pgCtl(cluster.bindir, ["-D", data, "-m", "fast", "-w", "stop"]),
    destroy: async () => cluster.stop(),
  };
}
