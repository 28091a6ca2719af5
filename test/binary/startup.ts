// Start-up time of a zkagent binary: from spawn to the first 200 on /health,
// single process (--workers 1), a fresh SQLite database each run (so the
// migrations and the first-key bootstrap are included). Median of N runs.
//
//   bun test/binary/startup.ts [BINARY=dist/zkagent] [RUNS=9]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** A port that was free a moment ago (the OS picks it). */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

export async function waitForHealth(url: string, timeoutMs: number, exited?: Promise<number>): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let gone = false;
  void exited?.then(() => (gone = true));
  while (performance.now() < deadline) {
    if (gone) throw new Error("the server exited before answering /health");
    try {
      if ((await fetch(`${url}/health`)).status === 200) return;
    } catch {
      // Not listening yet.
    }
    await Bun.sleep(2);
  }
  throw new Error(`no 200 from ${url}/health within ${timeoutMs} ms`);
}

/** Milliseconds from spawn to /health 200, one value per run. */
export async function measureStartup(binary: string, runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(join(tmpdir(), "zkagent-startup-"));
    const port = freePort();
    const started = performance.now();
    const child = Bun.spawn([binary, "serve", "--workers", "1"], {
      cwd: dir,
      env: { PATH: process.env.PATH, PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: join(dir, "db.sqlite"), LOG_LEVEL: "warn" },
      stdout: "ignore",
      stderr: "ignore",
    });
    try {
      await waitForHealth(`http://127.0.0.1:${port}`, 10_000, child.exited);
      times.push(performance.now() - started);
    } finally {
      child.kill("SIGTERM");
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return times;
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

if (import.meta.main) {
  const binary = resolve(Bun.argv[2] ?? "dist/zkagent");
  const runs = Number(Bun.argv[3] ?? 9);
  const times = await measureStartup(binary, runs);
  const size = Bun.file(binary).size;
  console.log(`binary: ${binary}, ${size} bytes (${(size / 1024 / 1024).toFixed(1)} MiB)`);
  console.log(`start-up to /health 200, ${runs} runs (ms): ${times.map((t) => t.toFixed(0)).join(" ")}`);
  console.log(`median ${median(times).toFixed(0)} ms, min ${Math.min(...times).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms`);
}
