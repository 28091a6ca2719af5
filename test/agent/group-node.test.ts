// Against a real zkagent node (issue 34 item 5): members added to a group
// after a challenge was made must not break the proof in flight. The SDK used
// to rebuild the tree from today's members and demand exactly the challenge's
// root (root_mismatch); now it proves against the challenge's root when the
// first `size` leaves rebuild it, else against the current root it synced,
// which the service still accepts. The service verifies the proof here.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSemaphoreIdentity, proveGroupChallenge } from "../../src/agent";
import { call, newKey, type Node, startNode } from "../multinode/nodes";

setDefaultTimeout(90_000);

let tmp: string;
let node: Node;
let key: string;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "zkagent-group-node-"));
  const db = join(tmp, "zkagent.db");
  node = await startNode(db);
  ({ key } = await newKey(db));
}, 60_000);

afterAll(async () => {
  await node?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

test("a member proves and is verified after members were added to the group after the challenge", async () => {
  const member = createSemaphoreIdentity();
  const others = Array.from({ length: 6 }, () => createSemaphoreIdentity().identity_commitment);
  expect((await call(node, "POST", "/v1/groups", key, { group_id: "growing" })).status).toBe(201);
  expect(
    (await call(node, "POST", "/v1/groups/growing/members", key, { identity_commitments: [others[0], member.identity_commitment, others[1]] })).status,
  ).toBe(201);
  const challenge = await call(node, "POST", "/v1/verify/challenge", key, { group_id: "growing", action: "purchase", context: { amount: 5 } });
  expect(challenge.status).toBe(200);
  // One more: the tree stays at depth 2, the challenge's circuit (a service that names the challenge's `size` lets the agent cross depths too: test/agent/group-sync.test.ts).
  const added = await call(node, "POST", "/v1/groups/growing/members", key, { identity_commitments: others.slice(2, 3) });
  expect(added.status).toBe(201);
  expect(added.body.merkle_tree_root).not.toBe(challenge.body.merkle_tree_root);

  const proof = await proveGroupChallenge(
    // The action and context the platform asked for: the service's answer does not repeat them, and the SDK checks the message against them.
    { privateKey: member.private_key, challenge: { ...challenge.body, action: "purchase", context: { amount: 5 } }, service: node.url },
    { allowInsecureLoopback: true, treeCache: join(tmp, "trees"), precompute: false },
  );
  // Today's service names no size: the agent proves against the current root it synced and checked.
  expect([challenge.body.merkle_tree_root, added.body.merkle_tree_root]).toContain(proof.merkleTreeRoot);
  const verdict = await call(node, "POST", "/v1/verify/proof", key, { challenge_id: challenge.body.challenge_id, proof });
  expect(verdict.status).toBe(200);
  expect(verdict.body).toMatchObject({ verified: true, group_id: "growing" });
});
