// `bun run pack`, once per test process: the packages test and the docs'
// snippets test both install the tarballs, and packing twice in one run would
// cost CI ≈ 20 s for the same bytes. Each caller installs into projects of
// its own (test/packages/packages.test.ts, test/docs/snippets.test.ts).
import { readdirSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
export const PACKED_DIR = join(ROOT, "dist/packages");

export interface Tarballs {
  merchant: string;
  agent: string;
  /** The zkagent package (the service and the whole CLI). */
  all: string;
  /** What `bun run pack` printed (its sizes). */
  log: string;
}

let packing: Promise<Tarballs> | undefined;

const tarball = (prefix: string) => {
  const file = readdirSync(PACKED_DIR).find((f) => f.startsWith(prefix) && f.endsWith(".tgz"));
  if (!file) throw new Error(`no ${prefix}*.tgz in ${PACKED_DIR}`);
  return join(PACKED_DIR, file);
};

/** The three tarballs of this tree, packed by the first caller in this process. */
export function packed(): Promise<Tarballs> {
  packing ??= (async () => {
    const proc = Bun.spawn([process.execPath, "run", "pack"], { cwd: ROOT, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    const [log, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`bun run pack exited ${code}:\n${log}\n${stderr}`);
    return { merchant: tarball("zkagent-merchant-"), agent: tarball("zkagent-agent-"), all: tarball("zkagent-0"), log };
  })();
  return packing;
}
