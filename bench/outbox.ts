// What the webhook outbox costs a decision, in one run: decideChallenge on a
// SQLite file, sequentially, for a key without webhook endpoints (the
// deciding transaction only checks for one) and for a key with one (the
// transaction also writes the event and its delivery), against the same
// store with the outbox statements switched off (the decision as it was
// before webhooks). `bun run bench:outbox [N]` (default 3000 decisions, 4 rounds).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../src/store/sqlite";
import { eventsColumn } from "../src/webhooks/events";
import { makeChallenge, makeKey, T0 } from "../test/store/contract";

const N = Number(process.argv[2] ?? 3000);

async function perDecision(withEndpoint: boolean, outbox: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "zkagent-bench-outbox-"));
  const store = openSqlite(join(dir, "zkagent.db"));
  // The peer: the same store, its outbox write replaced by "nothing to write".
  if (!outbox) Object.assign(store, { writeOutbox: () => false });
  try {
    const key = makeKey();
    await store.createKey(key);
    if (withEndpoint)
      await store.createWebhookEndpoint({
        id: "whep_bench",
        keyId: key.id,
        url: "https://hooks.example/in",
        events: eventsColumn(["session.verified", "session.failed"]),
        secret: "whsec_bench",
        previousSecret: null,
        previousUntil: null,
        createdAt: T0,
        deletedAt: null,
      });
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      const challenge = makeChallenge(key.id);
      ids.push(challenge.id);
      await store.createChallenge(challenge, { windowStart: T0, limit: 0 });
    }
    const started = performance.now();
    for (const id of ids) await store.decideChallenge(id, { status: "failed", decidedAt: T0 + 1, confidence: null, reason: "proof_rejected" });
    return ((performance.now() - started) * 1000) / N;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (let round = 1; round <= 4; round++) {
  // Alternating which of the two runs first, so the file system's warm-up favours neither.
  const [before, none] =
    round % 2
      ? [await perDecision(false, false), await perDecision(false, true)]
      : (await Promise.resolve([await perDecision(false, true), await perDecision(false, false)])).reverse();
  const one = await perDecision(true, true);
  console.log(
    `round ${round}: outbox off ${before.toFixed(0)} µs · no endpoint ${none.toFixed(0)} µs (×${(none / before).toFixed(2)}) · one endpoint ${one.toFixed(0)} µs (×${(one / before).toFixed(2)}) per decision, ${N} decisions`,
  );
}
