// The first group proof in a process with no cached tables for its depth does
// not wait for them (issue 32): it proves without, and a detached process
// builds them into the cache for the next process (src/agent/group/build-tables.ts).
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSemaphoreIdentity, proveGroupMembership } from "../../src/agent";
import { LeanTree } from "../../src/groups/lean-tree";

setDefaultTimeout(90_000);

const dir = mkdtempSync(join(tmpdir(), "zkagent-semaphore-tables-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("no tables cached: the proof is made at once, a detached builder writes them, and leaves no marker", async () => {
  const ids = Array.from({ length: 4 }, () => createSemaphoreIdentity());
  const members = ids.map((id) => id.identity_commitment);
  const challenge = {
    challenge_id: "ch",
    nonce: "00",
    action: "purchase",
    group_id: "tables",
    merkle_tree_root: LeanTree.fromLeaves(members.map(BigInt)).root.toString(),
    merkle_tree_depth: 7,
    message: "1",
    scope: "2",
    circuit_id: "semaphore-7",
  };
  const proof = await proveGroupMembership({ privateKey: ids[0]!.private_key, members, challenge }, { tableCache: dir });
  expect(proof.merkleTreeDepth).toBe(7);
  // The builder marks its work beside the file it will write; the proof did not wait for the file.
  const names = readdirSync(dir);
  expect(names.some((name) => name.endsWith(".tables.building") || name.endsWith(".tables"))).toBe(true);
  const deadline = Date.now() + 60_000;
  while (!readdirSync(dir).some((name) => name.endsWith(".tables")) || readdirSync(dir).some((name) => name.endsWith(".building"))) {
    if (Date.now() > deadline) throw new Error(`no tables after 60 s: ${readdirSync(dir)}`);
    await Bun.sleep(200);
  }
  const tables = readdirSync(dir).filter((name) => name.endsWith(".tables"));
  expect(tables).toHaveLength(1);
  expect(readdirSync(dir)).toEqual(tables); // no marker, no temporary
  // The same process, proving again, now loads them (the file exists): a proof as before.
  expect(existsSync(join(dir, tables[0]!))).toBe(true);
  const again = await proveGroupMembership({ privateKey: ids[1]!.private_key, members, challenge: { ...challenge, message: "3" } }, { tableCache: dir });
  expect(again.merkleTreeRoot).toBe(challenge.merkle_tree_root);
});
