// Fairness of member additions (issue 37): a quiet key's challenge latency,
// p99 and max, while another key floods additions of 10,000 members, two at
// once, on a SQLite file as a server runs it (tree thread, WAL). The bodies
// are built before the flood, so the prober measures the server and not the
// client sharing its event loop. Before the fix each batch blocked the event
// loop 0.35–0.75 s (its 10,000 leaf rows written one statement each, with
// their audit trigger, and the body read and checked at once): here p99
// 520–610 ms, max 640–900 ms. bench/groups.ts --server prints the figures
// on a real server (docs/performance.md); the bounds below leave room for
// a loaded 2-core machine.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { ThreadTreeCache } from "../../src/groups/thread";
import type { Store } from "../../src/store/interface";
import { openSqlite } from "../../src/store/sqlite";
import { createHarness } from "../support/harness";
import { storesUnderTest } from "../support/stores";

const dir = mkdtempSync(join(tmpdir(), "zkagent-additions-fairness-"));
const threads: ThreadTreeCache[] = [];
afterAll(() => {
  for (const trees of threads) trees.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Distinct commitments below r that look nothing like a counter. */
const commitment = (i: number) => ((BigInt(i + 1) * 0x2545f4914f6cdd1dn * 0x9e3779b97f4a7c15n) % (1n << 250n)).toString();
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const percentile = (xs: number[], p: number) => sorted(xs)[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)]!;

/**
 * Per store, what the quiet key's challenges may take while the flood runs:
 * bounds that catch the stalls of before on an idle machine (0.35–0.75 s a
 * batch; the hashing on the event loop of issue 32, 4.9 s) with room for a
 * loaded 2-core one, where the machine's own noise reaches 100–200 ms. What
 * is left on SQLite is its write transaction (docs/performance.md).
 */
const BOUNDS: Record<string, { p99: number; max: number }> = { postgres: { p99: 300, max: 600 }, sqlite: { p99: 700, max: 1_500 } };

const fileStores = storesUnderTest().map(({ name, open }) => ({
  name,
  // SQLite as a server runs it: a file in WAL mode, not :memory: (whose commit writes no file).
  open: name === "sqlite" ? async (): Promise<Store> => openSqlite(join(dir, "zkagent.db")) : open,
}));

for (const { name, open } of fileStores)
  describe(`on ${name}`, () => {
    test("a quiet key's challenge p99 and max stay bounded while another key adds 10,000 members at a time, two at once", async () => {
      const trees = await ThreadTreeCache.start(0);
      threads.push(trees);
      const h = await createHarness(await open(), { groups: trees, limits: { maxPendingPerKey: 0 } });
      const flooder = await h.newKey("flooder");
      const quiet = await h.newKey("quiet");
      await h.call("POST", "/v1/groups", { key: flooder, body: { group_id: "flood" } });
      await h.call("POST", "/v1/groups", { key: quiet, body: { group_id: "quiet" } });
      await h.call("POST", "/v1/groups/quiet/members", { key: quiet, body: { identity_commitments: ["11", "12", "13"] } });
      const ROUNDS = 3;
      const bodies = Array.from({ length: ROUNDS * 2 }, (_, b) =>
        JSON.stringify({ identity_commitments: Array.from({ length: 10_000 }, (_, i) => commitment(b * 10_000 + i)) }),
      );

      // As a server runs it, without the tests' contract check on every answer (it would be timed too).
      const app = createApp(h.deps);
      const challenge = async () => {
        const started = performance.now();
        const response = await app.handle(
          new Request("http://zkagent.test/v1/verify/challenge", {
            method: "POST",
            headers: { "x-api-key": quiet, "content-type": "application/json" },
            body: '{"group_id":"quiet","action":"purchase"}',
          }),
        );
        await response.arrayBuffer();
        expect(response.status).toBe(200);
        return performance.now() - started;
      };
      const probe = async (done: () => boolean, min: number) => {
        const times: number[] = [];
        while (times.length < min || !done()) {
          times.push(await challenge());
          // A client that thinks between requests (a timer, so the server's other work runs meanwhile): a few hundred
          // samples, so that the stalls of before (one or two per batch) are above the 99th percentile.
          await Bun.sleep(20);
        }
        return times;
      };
      await probe(() => true, 20);
      const idle = await probe(() => true, 100);

      let flooding = true;
      const statuses: number[] = [];
      const flood = (async () => {
        try {
          for (let round = 0; round < ROUNDS; round++) {
            const answers = await Promise.all(
              [0, 1].map((i) =>
                app.handle(
                  new Request("http://zkagent.test/v1/groups/flood/members", {
                    method: "POST",
                    headers: { "x-api-key": flooder, "content-type": "application/json" },
                    body: bodies[round * 2 + i],
                  }),
                ),
              ),
            );
            statuses.push(...answers.map((a) => a.status));
          }
        } finally {
          flooding = false;
        }
      })();
      const during = await probe(() => !flooding, 20);
      await flood;
      expect(statuses).toEqual(Array(ROUNDS * 2).fill(201));
      expect((await h.call("GET", "/v1/groups/flood", { key: flooder })).body.size).toBe(ROUNDS * 20_000);

      const line = (xs: number[]) =>
        `p50 ${percentile(xs, 0.5).toFixed(1)} / p99 ${percentile(xs, 0.99).toFixed(1)} / max ${Math.max(...xs).toFixed(1)} ms (${xs.length})`;
      console.log(`${name}: quiet key's challenges: idle ${line(idle)}; during ${ROUNDS} × 2 × 10,000 additions ${line(during)}`);
      expect(percentile(during, 0.99)).toBeLessThan(BOUNDS[name]!.p99);
      expect(Math.max(...during)).toBeLessThan(BOUNDS[name]!.max);
    }, 300_000);
  });
