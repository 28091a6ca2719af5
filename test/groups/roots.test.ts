// Which roots a group proof may name (issue 37): the current root always; a
// replaced one for GROUP_ROOT_DURATION_S after its successor was made (the
// bounded history Semaphore's contracts keep); never one from before a
// removal. Through the store, as the proofs service and the deciding
// transaction ask it, with the change times the service's clock gave.
import { expect, test } from "bun:test";
import { isAcceptableRoot } from "../../src/groups/roots";
import { createHarness } from "../support/harness";
import { storesUnderTest } from "../support/stores";

const commitment = (i: number) => String(7n + BigInt(i) * 1_000_003n);

for (const store of storesUnderTest())
  test(`${store.name}: a replaced root is accepted for the root duration after it was replaced, then refused; the current root always; none from before a removal`, async () => {
    const h = await createHarness(await store.open({ groupRootDurationMs: 60_000 }));
    const key = await h.newKey();
    expect((await h.call("POST", "/v1/groups", { key, body: { group_id: "g" } })).status).toBe(201);
    const first = await h.call("POST", "/v1/groups/g/members", { key, body: { identity_commitments: [0, 1, 2].map(commitment) } });
    const r1 = first.body.merkle_tree_root as string;
    h.clock.advance(10_000);
    const replacedAt = h.clock.now();
    const second = await h.call("POST", "/v1/groups/g/members", { key, body: { identity_commitments: [commitment(3)] } });
    const r2 = second.body.merkle_tree_root as string;
    expect(await h.store.acceptableRoot("g", r1, replacedAt + 59_000)).toBe(true);
    expect(await h.store.acceptableRoot("g", r1, replacedAt + 61_000)).toBe(false);
    expect(await h.store.acceptableRoot("g", r2, replacedAt + 10 * 86_400_000)).toBe(true); // the current root, however old
    h.clock.advance(1_000);
    const removed = await h.call("DELETE", `/v1/groups/g/members/${commitment(1)}`, { key });
    expect(removed.status).toBe(200);
    expect(await h.store.acceptableRoot("g", r2, h.clock.now())).toBe(false); // replaced by a removal: never again
    expect(await h.store.acceptableRoot("g", removed.body.merkle_tree_root, h.clock.now())).toBe(true);

    // The deciding transaction judges the root the same way, at the decision's time.
    const decide = async (root: string, decidedAt: number) => {
      const challenge = await h.call("POST", "/v1/verify/challenge", { key, body: { group_id: "g", action: "purchase" } });
      expect(challenge.status).toBe(200);
      const keyId = (await h.store.getChallenge(challenge.body.challenge_id))!.keyId;
      return h.store.decideChallenge(
        challenge.body.challenge_id,
        { status: "verified", decidedAt, confidence: null, reason: null },
        { keyId, agentId: "", action: "purchase", context: null, group: { groupId: "g", root, pseudonym: "42" } },
      );
    };
    const current = removed.body.merkle_tree_root as string;
    h.clock.advance(1_000);
    expect((await h.call("POST", "/v1/groups/g/members", { key, body: { identity_commitments: [commitment(4)] } })).status).toBe(201);
    const within = await decide(current, h.clock.now() + 30_000);
    const late = await decide(current, h.clock.now() + 90_000);
    expect(within.decided && within.record.status).toBe("verified");
    expect(late.decided && [late.record.status, late.record.reason]).toEqual(["failed", "not_member"]);
  }, 60_000);

test("the rule as a function: current, replaced within the duration, from before a removal, never 0", () => {
  const history = [
    { root: "r1", version: 1, at: 1_000 },
    { root: "r2", version: 2, at: 5_000 },
    { root: "r3", version: 3, at: 9_000 },
  ];
  const bound = (now: number) => ({ now, durationMs: 3_000 });
  expect(isAcceptableRoot("r3", history, 0, bound(1e12))).toBe(true);
  expect(isAcceptableRoot("r2", history, 0, bound(11_000))).toBe(true); // replaced at 9,000
  expect(isAcceptableRoot("r2", history, 0, bound(12_001))).toBe(false);
  expect(isAcceptableRoot("r1", history, 0, bound(6_000))).toBe(true);
  expect(isAcceptableRoot("r2", history, 3, bound(9_500))).toBe(false); // before the removal at version 3
  expect(isAcceptableRoot("0", [{ root: "0", version: 0, at: 0 }], 0, bound(0))).toBe(false);
});
