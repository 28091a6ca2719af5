// Real server processes for the reliability suites: `bun src/cli/index.ts
// serve --workers 1` on a free port over a temporary SQLite file, started in
// its own process group so that a SIGKILL reaches everything it spawned.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

export function tempDatabase(prefix: string): string {
  return join(mkdtempSync(join(tmpdir(), `zkagent-${prefix}-`)), "zkagent.db");
}

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Resolves with the exit code (or signal name) once the process is gone. */
  exited: Promise<number | string>;
  output(): string;
}

export async function startServe(databaseUrl: string, extraEnv: Record<string, string> = {}): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ["src/cli/index.ts", "serve", "--workers", "1"], {
    cwd: ROOT,
    detached: true, // own process group: kill(-pid) reaches any worker it starts
    stdio: ["pipe", "pipe", "pipe"],
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: "warn",
      WORKERS: "1",
      DEFAULT_RATE_LIMIT: "0",
      ...extraEnv,
    },
  });
  let log = "";
  child.stdout!.on("data", (d) => (log += d));
  child.stderr!.on("data", (d) => (log += d));
  const exited = new Promise<number | string>((done) => child.once("exit", (code, signal) => done(code ?? signal ?? "unknown")));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    const gone = await Promise.race([exited.then(() => true), Bun.sleep(0).then(() => false)]);
    if (gone) throw new Error(`server exited during start:\n${log}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {}
    if (Date.now() > deadline) {
      killGroup(child, "SIGKILL");
      throw new Error(`server did not answer /health within 20 s:\n${log}`);
    }
    await Bun.sleep(25); // polling a health endpoint with a deadline
  }
  return { url, child, exited, output: () => log };
}

/** Signals the server's process group (the process we started, by its id). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {}
  }
}

export async function api(url: string, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(url + path, {
    method,
    headers: body === undefined ? { "x-api-key": key } : { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}
