// An agent's order end to end through the ZKAgent scheme against the same
// order without zkagent, in one run (docs/performance.md, "HTTP
// authentication"). A real `zkagent serve` (SQLite) and two shops on
// loopback: the example shop (examples/shop/server.ts, POST /orders behind
// the guard) and the same Hono route with no guard. Orders are placed one at
// a time by the SDK's fetch:
//
//   plain        POST /orders to the unguarded shop: one round trip
//   zkagent      the default agent fetch: plain → 401 (claim) → claim →
//                401 (challenge) → proof, signature → 201; the shop asks the
//                service for a challenge, the challenge's status, and the
//                verification
//   announce     the claim on the first request: one round trip fewer
//   exchange     the announce flow with the proof and signature's time taken
//                out (answerChallenge timed apart): what the HTTP exchange
//                and the service's checks cost
//
//   bun run bench:http-auth [--orders N] [--json]
//
// Everything shares the machine (the prover, both servers and the client):
// quote the figures with that said.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Hono } from "hono";
import { answerChallenge, createIdentity, readChallenge, zkagentFetch } from "../src/agent";
import { freePort, newKey, startNode } from "../test/multinode/nodes";

const { values: flags } = parseArgs({ options: { orders: { type: "string" }, json: { type: "boolean" } } });
const ORDERS = Number(flags.orders ?? 40);
const say = (...parts: unknown[]) => (flags.json ? console.error : console.log)(...parts);

const tmp = mkdtempSync(join(tmpdir(), "zkagent-bench-http-auth-"));
const db = join(tmp, "zkagent.db");
const node = await startNode(db);
const { key } = await newKey(db);
const identity = { ...(await createIdentity()), agent_id: "bench-shopper" };
const registered = await fetch(`${node.url}/v1/agents`, {
  method: "POST",
  headers: { "x-api-key": key, "content-type": "application/json" },
  body: JSON.stringify({ agent_id: identity.agent_id, identity_commitment: identity.identity_commitment, signing_key: identity.signing_key }),
});
if (registered.status !== 201) throw new Error(`registering the agent: ${registered.status}`);

const shopPort = freePort();
const shop = Bun.spawn([process.execPath, new URL("../examples/shop/server.ts", import.meta.url).pathname], {
  env: { ...process.env, PORT: String(shopPort), ZKAGENT_URL: node.url, ZKAGENT_API_KEY: key },
  stdout: "pipe",
  stderr: "inherit",
});
const reader = shop.stdout.getReader();
await reader.read();
reader.releaseLock();
// The same route with no guard, in another process like the guarded one.
const plainShop = new Hono().post("/orders", async (c) => {
  const { amount, currency } = await c.req.json();
  return c.json({ order_id: `ord_${crypto.randomUUID()}`, amount, currency }, 201);
});
const plain = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: plainShop.fetch });

const body = JSON.stringify({ amount: "20.00", currency: "EUR" });
const init = { method: "POST", headers: { "content-type": "application/json" }, body };
const guarded = `http://127.0.0.1:${shopPort}/orders`;

/** `once` answers the status and the milliseconds inside it that are not to be counted. */
async function timed(
  name: string,
  once: () => Promise<number | { status: number; excluded_ms: number }>,
): Promise<{ name: string; median_ms: number; p90_ms: number }> {
  await once(); // warm: the prover's tables, connections
  const times: number[] = [];
  for (let i = 0; i < ORDERS; i++) {
    const start = performance.now();
    const outcome = await once();
    const { status, excluded_ms } = typeof outcome === "number" ? { status: outcome, excluded_ms: 0 } : outcome;
    times.push(performance.now() - start - excluded_ms);
    if (status !== 201) throw new Error(`${name}: status ${status}`);
  }
  times.sort((a, b) => a - b);
  const figure = { name, median_ms: +times[Math.floor(ORDERS / 2)]!.toFixed(2), p90_ms: +times[Math.floor(ORDERS * 0.9)]!.toFixed(2) };
  say(`${name.padEnd(12)} median ${figure.median_ms} ms   p90 ${figure.p90_ms} ms   (${ORDERS} orders)`);
  return figure;
}

try {
  const lazy = zkagentFetch({ identity });
  const eager = zkagentFetch({ identity, announce: true });
  const results = [
    await timed("plain", async () => (await fetch(`http://127.0.0.1:${plain.port}/orders`, init)).status),
    await timed("zkagent", async () => (await lazy(guarded, init)).status),
    await timed("announce", async () => (await eager(guarded, init)).status),
  ];
  // The exchange without the proof: challenge fetched and answered outside the timing.
  let proving = 0;
  results.push(
    await timed("exchange", async () => {
      const claim = await fetch(guarded, { ...init, headers: { ...init.headers, authorization: `ZKAgent agent="${identity.agent_id}"` } });
      const challenge = readChallenge(claim);
      if (challenge === null || challenge === "claim") throw new Error("no challenge");
      const start = performance.now();
      const authorization = await answerChallenge(challenge, { identity });
      const excluded_ms = performance.now() - start;
      proving += excluded_ms;
      return { status: (await fetch(guarded, { ...init, headers: { ...init.headers, authorization } })).status, excluded_ms };
    }),
  );
  const base = results[0]!.median_ms;
  const ratios = Object.fromEntries(results.map((r) => [r.name, +(r.median_ms / base).toFixed(1)]));
  say(`proof + signature alone: ${(proving / (ORDERS + 1)).toFixed(2)} ms mean (taken out of "exchange")`);
  say(`ratio to plain (medians): ${JSON.stringify(ratios)}`);
  if (flags.json) console.log(JSON.stringify({ orders: ORDERS, results, ratios, proof_ms_mean: +(proving / (ORDERS + 1)).toFixed(2) }));
} finally {
  plain.stop(true);
  shop.kill("SIGTERM");
  await shop.exited;
  await node.stop();
  rmSync(tmp, { recursive: true, force: true });
}
