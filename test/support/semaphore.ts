// A stock Semaphore v4 client for the tests: semaphore-client.mjs under node
// (snarkjs's worker threads hang under Bun), one process for a whole batch of
// proofs so a test file starts snarkjs once.
import { join } from "node:path";

const CLIENT = join(import.meta.dir, "semaphore-client.mjs");

/** One proof to make: the member's Identity seed, the group's leaves as the members page gives them, and the challenge's message, scope and depth. */
export interface StockJob {
  privateKey: string;
  members: string[];
  message: string;
  scope: string;
  depth: number;
  /** Also run the stock verifyProof on it. */
  verify?: boolean;
}

export interface StockResult {
  proof?: any;
  stockVerified?: boolean;
  /** generateProof's time under node, ms. */
  ms?: number;
  error?: string;
}

export async function stockProofs(jobs: StockJob[]): Promise<StockResult[]> {
  const child = Bun.spawn(["node", CLIENT], { stdin: new Blob([JSON.stringify(jobs)]), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`semaphore client failed (${code}): ${err}`);
  return JSON.parse(out);
}

/** A challenge's fields a job needs. */
export const jobFor = (
  seed: string,
  challenge: { message: string; scope: string; merkle_tree_depth: number },
  members: string[],
  overrides: Partial<StockJob> = {},
): StockJob => ({
  privateKey: seed,
  members,
  message: challenge.message,
  scope: challenge.scope,
  depth: challenge.merkle_tree_depth,
  ...overrides,
});
