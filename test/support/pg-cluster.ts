// A throwaway PostgreSQL cluster of this test's own, for tests that stop and
// restart the database (the shared test server must never be stopped). Built
// with initdb/pg_ctl from /usr/lib/postgresql/<version>/bin, run as the
// `postgres` OS user through runuser (the server refuses to run as root), in
// a temporary directory, on a free port. Undefined when those are missing.
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface OwnCluster {
  url: string;
  start(): Promise<void>;
  /** Immediate shutdown, like a crash or a lost host: connections are cut. */
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

function postgresBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "pg_ctl"))).sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], "bin") : undefined;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

async function asPostgres(args: string[]): Promise<void> {
  const child = Bun.spawn(["runuser", "-u", "postgres", "--", ...args], { stdout: "pipe", stderr: "pipe" });
  const code = await child.exited;
  if (code !== 0) throw new Error(`${args.join(" ")} exited ${code}: ${await new Response(child.stderr).text()}`);
}

export async function createOwnCluster(): Promise<OwnCluster | undefined> {
  const bin = postgresBin();
  if (!bin || process.getuid?.() !== 0) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "zkagent-pg-"));
  chownSync(dir, ...(await ids()));
  const data = join(dir, "data");
  await asPostgres([join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "zk", "--no-sync"]);
  const port = await freePort();
  const start = () =>
    asPostgres([join(bin, "pg_ctl"), "-D", data, "-l", join(dir, "log"), "-w", "-o", `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, "start"]);
  const stop = () => asPostgres([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]);
  await start();
  return {
    url: `postgres://zk@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async destroy() {
      await stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function ids(): Promise<[number, number]> {
  const out = (args: string[]) => Bun.spawnSync(args).stdout.toString().trim();
  return [Number(out(["id", "-u", "postgres"])), Number(out(["id", "-g", "postgres"]))];
}
