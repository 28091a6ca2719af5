// Member additions off the event loop (issue 37): a large body is read and
// checked on the members body thread, and answers exactly as on the event
// loop; the tree thread's messages carry one string and typed arrays; and
// additions in flight are bounded per process, not only per key.
import { afterAll, expect, test } from "bun:test";
import { FIELD_ORDER_R } from "../../src/identity/field";
import { fromWireChange, fromWirePlan, toWireChange, toWirePlan } from "../../src/groups/thread-wire";
import { GroupTrees } from "../../src/groups/cache";
import { membersOf, OFF_LOOP_BYTES } from "../../src/http/members-body";
import { ApiError } from "../../src/errors";
import { ThreadTreeCache } from "../../src/groups/thread";
import { createHarness } from "../support/harness";

const commitments = (from: number, n: number) => Array.from({ length: n }, (_, i) => String(5_000_000n + BigInt(from + i) * 7_919n));

const threads: ThreadTreeCache[] = [];
afterAll(() => {
  for (const trees of threads) trees.close();
});

/** What the event loop answers for these bytes (membersOf runs here): the thread must answer the same. */
function onLoop(bytes: Uint8Array): { status: number; body: Record<string, unknown> } | string[] {
  try {
    return membersOf(bytes);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { status: error.status, body: error.body };
  }
}

test("a large bad batch is refused by the members body thread with the answer the event loop gives, and nothing is applied", async () => {
  const h = await createHarness();
  const owner = await h.newKey("owner");
  await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "big" } });
  const good = commitments(0, 10_000);
  const withBad = (i: number, bad: unknown) => JSON.stringify({ identity_commitments: good.map((c, j) => (j === i ? bad : c)) });
  const dup = JSON.stringify({ identity_commitments: good }).replace(/\}$/, ',"identity_commitments":["1"]}');
  const bodies: [string, number, string][] = [
    [withBad(9_999, FIELD_ORDER_R.toString()), 400, "Invalid field identity_commitments: [9999] must be below the BN254 scalar field order r"],
    [withBad(5_000, "0"), 400, "Invalid field identity_commitments: [5000] must not be 0 (a removed leaf)"],
    [withBad(7, 12), 400, "Invalid field identity_commitments: [7] must be a decimal string"],
    [withBad(9_998, good[3]), 400, "Invalid field identity_commitments: [9998] is repeated in the batch"],
    [dup, 400, "Invalid field identity_commitments: member name appears more than once"],
    [`\ufeff${JSON.stringify({ identity_commitments: good })}`, 400, "Malformed JSON"],
  ];
  for (const [text, status, error] of bodies) {
    const bytes = new TextEncoder().encode(text);
    expect(bytes.byteLength).toBeGreaterThan(OFF_LOOP_BYTES);
    const response = await h.call("POST", "/v1/groups/big/members", { key: owner, body: text });
    expect(response.status).toBe(status);
    expect(`${response.body.error} ${response.body.message ?? ""}`).toStartWith(error);
    // The same bytes on the event loop: the same answer, word for word.
    const here = onLoop(bytes);
    if (!Array.isArray(here)) expect({ status: response.status, body: response.body }).toEqual({ status: here.status, body: here.body });
  }
  expect((await h.call("GET", "/v1/groups/big", { key: owner })).body.size).toBe(0);
  const added = await h.call("POST", "/v1/groups/big/members", { key: owner, body: { identity_commitments: good } });
  expect(added.status).toBe(201);
  expect(added.body.size).toBe(10_000);
}, 60_000);

test("a change crosses to the tree thread and back as strings and typed arrays, and arrives whole", () => {
  const change = { kind: "add" as const, commitments: commitments(0, 300) };
  expect(toWireChange(change)).toEqual({ kind: "add", commitments: change.commitments.join(",") });
  expect(fromWireChange(toWireChange(change))).toEqual(change);
  const trees = new GroupTrees();
  trees.planNow("g", 0, [], { kind: "add", commitments: commitments(0, 5) });
  const plan = trees.planNow("g", 1, [], change);
  const { plan: wire, transfer } = toWirePlan(plan);
  expect(transfer.every((buffer) => buffer instanceof ArrayBuffer)).toBe(true);
  expect(fromWirePlan(structuredClone(wire, { transfer }))).toEqual(plan);
  // Refusals cross as they are.
  const refused = trees.planNow("g", 2, [], { kind: "add", commitments: [commitments(0, 1)[0]!] });
  expect(fromWirePlan(toWirePlan(refused).plan)).toEqual(refused);
});

test("additions in flight are bounded per process across keys (GROUP_ADDITIONS_IN_FLIGHT_TOTAL): 429 with Retry-After before the body is read, and the others applied", async () => {
  const trees = await ThreadTreeCache.start(0);
  threads.push(trees);
  const h = await createHarness(undefined, { groups: trees, limits: { groupAdditionsInFlight: 5, groupAdditionsInFlightTotal: 2 } });
  const keys = await Promise.all(["a", "b", "c"].map((name) => h.newKey(name)));
  for (const [i, key] of keys.entries()) await h.call("POST", "/v1/groups", { key, body: { group_id: `g${i}` } });
  const answers = await Promise.all(
    keys.map((key, i) => h.call("POST", `/v1/groups/g${i}/members`, { key, body: { identity_commitments: commitments(i * 2_000, 2_000) } })),
  );
  expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 429]);
  const busy = answers.find((a) => a.status === 429)!;
  expect(busy.body.message).toContain("GROUP_ADDITIONS_IN_FLIGHT_TOTAL = 2");
  expect(busy.headers.get("retry-after")).toBe("2");
  // Once they are done, the refused key's batch goes through.
  const i = answers.indexOf(busy);
  expect((await h.call("POST", `/v1/groups/g${i}/members`, { key: keys[i]!, body: { identity_commitments: commitments(i * 2_000, 2_000) } })).status).toBe(201);
}, 60_000);
