// The stock Semaphore v4 client (@semaphore-protocol/proof 4.14.2) as the
// independent reference for the agent's group proofs, run under node in ONE
// child process per batch: its snarkjs starts worker threads that never end
// under Bun. Artifacts are passed explicitly from @zk-kit/semaphore-artifacts
// (generateProof would otherwise download them, and tests have no network).
import { dirname, join } from "node:path";
import { Group } from "@semaphore-protocol/group";

export const ROOT = join(import.meta.dir, "../..");
export const ARTIFACTS_DIR = dirname(Bun.resolveSync("@zk-kit/semaphore-artifacts/package.json", ROOT));

const entry = (pkg: string) => JSON.stringify(Bun.resolveSync(pkg, ROOT));

export type StockJob = { verify: unknown } | { generate: { privateKey: string; members: string[]; message: string; scope: string; depth: number } };

const SCRIPT = `
import { generateProof, verifyProof } from ${entry("@semaphore-protocol/proof")};
import { Identity } from ${entry("@semaphore-protocol/identity")};
import { Group } from ${entry("@semaphore-protocol/group")};
let text = "";
for await (const chunk of process.stdin) text += chunk;
const out = [];
for (const job of JSON.parse(text)) {
  if (job.verify) out.push(await verifyProof(job.verify));
  else {
    const g = job.generate;
    const artifacts = { wasm: ${JSON.stringify(ARTIFACTS_DIR)} + "/semaphore-" + g.depth + ".wasm", zkey: ${JSON.stringify(ARTIFACTS_DIR)} + "/semaphore-" + g.depth + ".zkey" };
    // Semaphore's removal: every leaf added, each "0" then removed (the constructor would drop a 0 leaf).
    const group = new Group(g.members.map((m, i) => (m === "0" ? BigInt(i + 1) : BigInt(m))));
    g.members.forEach((m, i) => { if (m === "0") group.removeMember(i); });
    out.push(await generateProof(Identity.import(g.privateKey), group, g.message, g.scope, g.depth, artifacts));
  }
}
process.stdout.write(JSON.stringify(out));
process.exit(0);`;

/** Runs every job with the stock client under node: verifyProof's verdict, or generateProof's proof object. */
export async function stockSemaphore(jobs: StockJob[]): Promise<unknown[]> {
  const child = Bun.spawn(["node", "--input-type=module", "-e", SCRIPT], { cwd: ROOT, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  child.stdin.write(JSON.stringify(jobs));
  await child.stdin.end();
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`the stock Semaphore client under node exited ${code}: ${stderr}`);
  return JSON.parse(stdout);
}

/**
 * The group as Semaphore's own API makes it: every leaf added, then each "0"
 * leaf removed with removeMember (the value added there first is irrelevant:
 * removal sets the leaf to 0). The independent reference for the root.
 */
export function semaphoreGroup(members: string[]): Group {
  const group = new Group(members.map((m, i) => (m === "0" ? BigInt(i + 1) : BigInt(m))));
  members.forEach((m, i) => {
    if (m === "0") group.removeMember(i);
  });
  return group;
}
