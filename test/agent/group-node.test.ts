// Against a real zkagent node: members added to a group after a challenge was
// made must not break the proof in flight (issue 34 item 5: the agent proves
// against the current root it synced, which the service still accepts); and
// the service's own challenge answer is proved as the README and the CLI's
// help say (issue 38: the SDK takes the action and context the caller means,
// the CLI passes its --action and --context). The service verifies each proof.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSemaphoreIdentity, proveGroupChallenge } from "../../src/agent";
import { call, newKey, type Node, startNode } from "../multinode/nodes";

setDefaultTimeout(90_000);

const ROOT = new URL("../../", import.meta.url).pathname;

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
  // The current root the agent synced and checked, not the challenge's.
  expect(proof.merkleTreeRoot).toBe(added.body.merkle_tree_root);
  const verdict = await call(node, "POST", "/v1/verify/proof", key, { challenge_id: challenge.body.challenge_id, proof });
  expect(verdict.status).toBe(200);
  expect(verdict.body).toMatchObject({ verified: true, group_id: "growing" });
});

describe("the service's own challenge answer (issue 38's regression)", () => {
  const member = createSemaphoreIdentity();
  const ask = async () => {
    const answer = await call(node, "POST", "/v1/verify/challenge", key, { group_id: "answers", action: "purchase", context: { amount: "5" } });
    expect(answer.status).toBe(200);
    expect(answer.body.action).toBeUndefined(); // the answer does not repeat what the platform asked for
    return answer.body;
  };
  const verified = async (challengeId: string, proof: unknown) => {
    const verdict = await call(node, "POST", "/v1/verify/proof", key, { challenge_id: challengeId, proof });
    expect(verdict.status).toBe(200);
    expect(verdict.body).toMatchObject({ verified: true, group_id: "answers" });
  };

  beforeAll(async () => {
    expect((await call(node, "POST", "/v1/groups", key, { group_id: "answers" })).status).toBe(201);
    const others = Array.from({ length: 3 }, () => createSemaphoreIdentity().identity_commitment);
    expect((await call(node, "POST", "/v1/groups/answers/members", key, { identity_commitments: [...others, member.identity_commitment] })).status).toBe(201);
  });

  test("the SDK, as the README shows it: proveGroupChallenge({ privateKey, challenge, service, action, context }) on the answer as it came", async () => {
    const challenge = await ask();
    const service = node.url;
    const proof = await proveGroupChallenge(
      { privateKey: member.private_key, challenge, service, action: "purchase", context: { amount: "5" } },
      { allowInsecureLoopback: true, treeCache: join(tmp, "trees"), precompute: false },
    );
    await verified(challenge.challenge_id, proof);
    // And what the caller means is checked: another amount is refused before anything is read.
    await expect(
      proveGroupChallenge(
        { privateKey: member.private_key, challenge, service, action: "purchase", context: { amount: "50" } },
        { allowInsecureLoopback: true },
      ),
    ).rejects.toMatchObject({ code: "message_mismatch" });
  });

  test("a challenge that binds an origin: the service's scope is the origin's, the SDK proves it for that origin only, and the proof verifies", async () => {
    const context = { amount: "5", "@request": { method: "POST", origin: "https://shop.example", target: "/orders" } };
    const answer = await call(node, "POST", "/v1/verify/challenge", key, { group_id: "answers", action: "purchase", context });
    expect(answer.status).toBe(200);
    const challenge = answer.body;
    const request = { privateKey: member.private_key, challenge, service: node.url, action: "purchase", context };
    const options = { allowInsecureLoopback: true, treeCache: join(tmp, "trees"), precompute: false };
    await expect(proveGroupChallenge(request, options)).rejects.toMatchObject({ code: "request_mismatch", field: "origin" });
    await expect(proveGroupChallenge({ ...request, origin: "https://other.example" }, options)).rejects.toMatchObject({ code: "request_mismatch" });
    const proof = await proveGroupChallenge({ ...request, origin: "https://shop.example/orders" }, options);
    await verified(challenge.challenge_id, proof);
  });

  test('the CLI: zkagent prove --group-challenge challenge.json --action purchase --context \'{"amount":"5"}\' on the answer as it came', async () => {
    const challenge = await ask();
    const dir = mkdtempSync(join(tmp, "cli-"));
    writeFileSync(join(dir, "challenge.json"), JSON.stringify(challenge));
    writeFileSync(join(dir, "identity.json"), JSON.stringify(member), { mode: 0o600 });
    const args = ["prove", "--group-challenge", "challenge.json", "--identity", "identity.json", "--action", "purchase", "--context", '{"amount":"5"}'];
    const child = Bun.spawn(
      [process.execPath, join(ROOT, "src/cli/index.ts"), ...args, "--service", node.url, "--allow-insecure-loopback", "--no-table-cache"],
      {
        cwd: dir,
        env: { ...process.env, XDG_CACHE_HOME: join(dir, "cache") },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect(err).not.toContain("message_mismatch");
    expect(code).toBe(0);
    await verified(challenge.challenge_id, JSON.parse(out));
  });
});
