// A throwaway Redis server for the tests that need a real one (the shared
// nonce store, src/web-bot-auth/nonces-redis.ts): `bun test` on a fresh
// machine needs nothing installed by hand. redis-server is found on PATH
// (or /usr/bin, /usr/sbin); when it is missing and this process may install
// packages (root, with apt-get), Debian's `redis-server` package is
// installed (apt-get update, then apt-get install -y redis-server), once per
// run; otherwise the suite fails naming what to install. Never skipped: the
// shared store is only proved against a real server.
//
// Each server listens on 127.0.0.1 on a free port, persists nothing (no RDB,
// no AOF), lives in its own temporary directory, and is stopped when the
// process exits.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./postgres-cluster";

export const REDIS_PACKAGE = "redis-server";

function findBinary(): string | null {
  const onPath = Bun.which("redis-server");
  if (onPath) return onPath;
  for (const candidate of ["/usr/bin/redis-server", "/usr/sbin/redis-server", "/usr/local/bin/redis-server"]) if (existsSync(candidate)) return candidate;
  return null;
}

let installed: string | null = null;

/** The redis-server binary, installed from Debian's package when missing and this process can; else an error naming what to install. */
export function redisServerBinary(): string {
  const found = installed ?? findBinary();
  if (found) return (installed = found);
  const canInstall = process.getuid?.() === 0 && Bun.which("apt-get") !== null;
  if (!canInstall)
    throw new Error(
      `redis-server is not installed, and this test run cannot install it (it needs root and apt-get). Install Debian's "${REDIS_PACKAGE}" package (apt-get install redis-server) or put a redis-server on PATH.`,
    );
  // The package's post-install would start a service: no service manager runs here, and policy-rc.d-less installs say so and go on.
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["update"], ["install", "-y", "--no-install-recommends", REDIS_PACKAGE]]) {
    const run = spawnSync("apt-get", args, { env, encoding: "utf8", timeout: 600_000 });
    if (run.status !== 0 && args[0] === "install")
      throw new Error(`apt-get install ${REDIS_PACKAGE} failed (exit ${run.status}): ${(run.stderr || run.stdout).slice(-2000)}`);
  }
  const after = findBinary();
  if (!after) throw new Error(`apt-get installed ${REDIS_PACKAGE}, but no redis-server binary was found`);
  return (installed = after);
}

export interface RedisServer {
  url: string;
  port: number;
  /** Kills the server (SIGKILL: the store gone at once, as a crash). */
  kill(): void;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  /** Stops it and removes its directory. Idempotent. */
  stop(): void;
}

const running = new Set<RedisServer>();
process.once("exit", () => {
  for (const server of running) server.stop();
});

async function waitForPort(port: number, child: ReturnType<typeof Bun.spawn>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    try {
      const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
      socket.end();
      return;
    } catch {
      await Bun.sleep(50);
    }
  }
  throw new Error(`redis-server did not listen on 127.0.0.1:${port} within 15 s`);
}

/** Starts a throwaway redis-server on 127.0.0.1 and a free port. */
export async function startRedis(): Promise<RedisServer> {
  const binary = redisServerBinary();
  const dir = mkdtempSync(join(tmpdir(), "zkagent-test-redis-"));
  const port = await freePort();
  let child: ReturnType<typeof Bun.spawn> | null = null;
  const launch = async () => {
    child = Bun.spawn([binary, "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no"], {
      stdout: "ignore",
      stderr: "pipe",
    });
    await waitForPort(port, child);
  };
  await launch();
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill() {
      child?.kill("SIGKILL");
      child = null;
    },
    async restart() {
      server.kill();
      await Bun.sleep(50);
      await launch();
    },
    stop() {
      server.kill();
      rmSync(dir, { recursive: true, force: true });
      running.delete(server);
    },
  };
  running.add(server);
  return server;
}
