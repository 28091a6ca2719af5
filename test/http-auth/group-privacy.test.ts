// What a platform can learn of a group member by editing its own 401 (issue
// 37): a real zkagent server and the example shop on loopback ports, and a
// platform in between that rewrites the challenge it hands the agent — the
// `size` and `merkle_tree_root` it advertises, or the `scope` — and reads
// the proof the agent sends back. The root a member proves against must not
// depend on anything the platform says nor on the member's leaf, and the
// agent must refuse a scope that is not the one of the origin it sends to.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { ChallengeError, createSemaphoreIdentity, fetch as agentFetch } from "../../src/agent";
import { groupScope, originScope } from "../../src/groups/derivation";
import { LeanTree } from "../../src/groups/lean-tree";
import { formatAuth, fromBase64url, parseAuth } from "../../src/http-auth/scheme";
import { call } from "../multinode/nodes";
import { startWorld, type World } from "./support";

setDefaultTimeout(120_000);

const SIZE = 16;
let world: World;
const ids = Array.from({ length: SIZE }, () => createSemaphoreIdentity());
const leaves = ids.map((id) => BigInt(id.identity_commitment));
const first = ids[0]!; // leaf 0
const last = ids[SIZE - 1]!; // leaf n − 1
const prefixRoot = (size: number) => LeanTree.fromLeaves(leaves.slice(0, size)).root.toString();

beforeAll(async () => {
  world = await startWorld("group-privacy", { ZKAGENT_GROUPS: "crowd" });
  expect((await call(world.node, "POST", "/v1/groups", world.key, { group_id: "crowd" })).status).toBe(201);
  expect(
    (await call(world.node, "POST", "/v1/groups/crowd/members", world.key, { identity_commitments: ids.map((id) => id.identity_commitment) })).status,
  ).toBe(201);
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

/** A platform that rewrites the group challenge in its 401 (`edit`) and records the root of every proof it is sent. */
function platform(edit: (params: Record<string, string>) => void) {
  const roots: string[] = [];
  let proofsSent = 0;
  const fetch = async (request: Request): Promise<Response> => {
    const credentials = request.headers.get("authorization");
    const sent = credentials === null ? undefined : parseAuth(credentials)?.[0]?.proof;
    if (sent !== undefined) {
      proofsSent++;
      roots.push(JSON.parse(fromBase64url(sent)!).merkleTreeRoot);
    }
    const response = await world.observe(request);
    const header = response.headers.get("www-authenticate");
    const params = header === null ? undefined : parseAuth(header)?.[0];
    if (response.status !== 401 || params?.group_id === undefined) return response;
    const edited = { ...params };
    edit(edited);
    const headers = new Headers(response.headers);
    headers.set("www-authenticate", formatAuth(edited));
    return new Response(await response.arrayBuffer(), { status: 401, headers });
  };
  return { fetch, roots, sent: () => proofsSent };
}

const order = (identity: { private_key: string }, fetch: (request: Request) => Promise<Response>) =>
  agentFetch(`${world.shopUrl}/orders`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ amount: 3, currency: "EUR" }),
    zkagent: {
      identity: { group_id: "crowd", ...identity },
      trustedServices: [world.node.url],
      allowInsecureLoopback: true,
      fetch,
      precompute: false,
    },
  });

describe("the root a member proves against", () => {
  test("the same challenge, the platform naming the root of the first n − 1 leaves: the member at leaf 0 and the one at leaf n − 1 prove against the same root, the current one", async () => {
    // What the red team's platform did: advertise a prefix root, so that only a member inside the prefix could use it.
    const steer = platform((params) => {
      params.size = String(SIZE - 1);
      params.merkle_tree_root = prefixRoot(SIZE - 1);
    });
    const statuses = [(await order(first, steer.fetch)).status, (await order(last, steer.fetch)).status];
    // The roots first: what the platform learns. (Before the fix the member at leaf 0 named the prefix root, a root the group never had, and was refused: 403.)
    expect(steer.roots).toEqual([prefixRoot(SIZE), prefixRoot(SIZE)]);
    expect(statuses).toEqual([201, 201]);
  });

  test("a platform that edits size and merkle_tree_root in its 401 learns nothing across 8 orders: the roots it sees are the same whichever member orders", async () => {
    // A search for the leaf, as an attacker runs it: each order names the prefix of another size.
    const sizes = [8, 4, 12, 2];
    const observed = async (identity: { private_key: string }) => {
      let at = 0;
      const spy = platform((params) => {
        const size = sizes[at++]!;
        params.size = String(size);
        params.merkle_tree_root = prefixRoot(size);
      });
      const statuses: number[] = [];
      for (let i = 0; i < sizes.length; i++) statuses.push((await order(identity, spy.fetch)).status);
      return { roots: spy.roots, statuses };
    };
    const ofFirst = await observed(first);
    const ofLast = await observed(last);
    // 8 orders: what the platform sees is the same whichever member ordered — the one current root every time.
    expect(ofFirst.roots).toEqual(ofLast.roots);
    expect(ofFirst.roots).toEqual(Array(sizes.length).fill(prefixRoot(SIZE)));
    expect([...ofFirst.statuses, ...ofLast.statuses]).toEqual(Array(2 * sizes.length).fill(201));
  });
});

describe("the scope is the agent's to check", () => {
  test("another platform's scope in the 401 (by origin, or by API key) is refused by the agent before any proof is made", async () => {
    for (const scope of [originScope("https://other-shop.example", "crowd"), groupScope("key_of_another_platform", "crowd")]) {
      const thief = platform((params) => {
        params.scope = scope.toString();
      });
      const refused = await order(first, thief.fetch).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(ChallengeError);
      expect((refused as ChallengeError).code).toBe("scope_mismatch");
      expect((refused as ChallengeError).field).toBe("scope");
      expect(thief.sent()).toBe(0);
    }
  });

  test("the honest scope is the shop origin's: the pseudonym is the same on every order at this shop", async () => {
    const honest = platform(() => {});
    const a = await order(first, honest.fetch);
    const b = await order(first, honest.fetch);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect((await a.json()).agent_id).toBe((await b.json()).agent_id);
  });

  test("no answer was a 5xx", () => {
    expect(world.statuses.filter((status) => status >= 500)).toEqual([]);
  });
});
