// Fairness (issue 32): another key's challenge latency while one key floods
// member additions (two concurrent POSTs of 10,000, twice) and while four
// anonymous clients loop on the members route of that group. The hashing
// runs on the tree thread (as main.ts sets it up), so the event loop keeps
// answering: before, the same flood took another key's p99 to 4,850 ms
// (hashing on the event loop). The bound asserted is generous for a loaded
// 2-core machine; bench/groups.ts gives the figures (docs/performance.md).
import { afterAll, expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { ThreadTreeCache } from "../../src/groups/thread";
import { createHarness } from "../support/harness";

/** Far below the 2 s and more of the hashing on the event loop; room for a loaded CI machine. */
const P99_BOUND_MS = 400;

const commitments = (from: number, n: number) => Array.from({ length: n }, (_, i) => String(9_000_000n + BigInt(from + i) * 7_919n));
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(0.99 * xs.length) - 1)]!;

let trees: ThreadTreeCache;
afterAll(() => trees?.close());

/** B's challenges, one after another, until `done` says stop (at least `min`): each one's latency in ms. */
async function challengesUntil(app: { handle: (request: Request) => Promise<Response> }, key: string, done: () => boolean, min = 20): Promise<number[]> {
  const times: number[] = [];
  while (times.length < min || !done()) {
    const started = performance.now();
    const response = await app.handle(
      new Request("http://zkagent.test/v1/verify/challenge", {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ group_id: "quiet", action: "purchase" }),
      }),
    );
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    times.push(performance.now() - started);
    // A client that thinks between requests (and a sample of hundreds, not tens of thousands).
    await Bun.sleep(5);
  }
  return times;
}

test("another key's challenges stay fast while one key adds 2 × 10,000 at once and while anonymous readers loop on the members route", async () => {
  trees = await ThreadTreeCache.start(0);
  const h = await createHarness(undefined, { groups: trees, limits: { membersReadsPerMinute: 0, maxPendingPerKey: 0 } });
  const flooder = await h.newKey("flooder");
  const quiet = await h.newKey("quiet");
  await h.call("POST", "/v1/groups", { key: flooder, body: { group_id: "flood" } });
  await h.call("POST", "/v1/groups", { key: quiet, body: { group_id: "quiet" } });
  await h.call("POST", "/v1/groups/quiet/members", { key: quiet, body: { identity_commitments: ["11", "12", "13"] } });

  // The timed requests go to the app as a server runs it (without the tests' contract check on every answer, which would be timed too).
  const app = createApp(h.deps);
  await challengesUntil(app, quiet, () => true, 10);
  const idle = await challengesUntil(app, quiet, () => true, 50);

  // The flood: two rounds of two concurrent batches of 10,000.
  let flooding = true;
  const statuses: number[] = [];
  const flood = (async () => {
    try {
      for (let round = 0; round < 2; round++) {
        const answers = await Promise.all(
          [0, 1].map((i) =>
            h.call("POST", "/v1/groups/flood/members", { key: flooder, body: { identity_commitments: commitments((round * 2 + i) * 10_000, 10_000) } }),
          ),
        );
        statuses.push(...answers.map((a) => a.status));
      }
    } finally {
      flooding = false;
    }
  })();
  const duringFlood = await challengesUntil(app, quiet, () => !flooding);
  await flood;
  expect(statuses).toEqual([201, 201, 201, 201]);
  expect((await h.call("GET", "/v1/groups/flood", { key: flooder })).body.size).toBe(40_000);

  // Four anonymous readers, each paging through the 40,000 leaves again and again.
  let reading = true;
  let pages = 0;
  const readers = Array.from({ length: 4 }, async () => {
    while (reading) {
      // The pages' offsets are known (40,000 leaves): the client does not parse 800 KB on the loop it shares with the server here.
      for (let offset = 0; offset < 40_000 && reading; offset += 10_000) {
        const page = await app.handle(new Request(`http://zkagent.test/v1/groups/flood/members?offset=${offset}`));
        expect(page.status).toBe(200);
        await page.arrayBuffer();
        pages++;
        // Each request arrives from the network on a server: a macrotask, not a microtask chain that would starve the timers.
        await Bun.sleep(0);
      }
    }
  });
  const started = Date.now();
  let duringReads: number[];
  try {
    duringReads = await challengesUntil(app, quiet, () => pages >= 40 || Date.now() - started > 60_000, 40);
  } finally {
    reading = false;
    await Promise.all(readers);
  }

  console.log(
    `another key's challenge p99: idle ${p99(idle).toFixed(1)} ms, during 2 × 10,000 additions ${p99(duringFlood).toFixed(1)} ms (${duringFlood.length} challenges), ` +
      `during 4 anonymous readers ${p99(duringReads).toFixed(1)} ms (${pages} pages of 10,000 read)`,
  );
  expect(p99(duringFlood)).toBeLessThan(P99_BOUND_MS);
  expect(p99(duringReads)).toBeLessThan(P99_BOUND_MS);
}, 300_000);
