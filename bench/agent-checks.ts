// What the agent's checks before a proof cost (src/agent/checks.ts,
// docs/performance.md "The agent's checks"): checkChallenge on the example
// shop's challenge, for an agent claim (the request binding, the action, the
// maximum amount) and a group claim (the same, plus the message recomputed:
// canonical JSON and SHA-256). Pure CPU, no I/O.
//
//   bun bench/agent-checks.ts [--iterations N]
import { parseArgs } from "node:util";
import { checkChallenge } from "../src/agent/checks";
import { groupMessageOf } from "../src/groups/derivation";

const { values } = parseArgs({ options: { iterations: { type: "string" } } });
const iterations = Number(values.iterations ?? 100_000);
const nonce = "ab".repeat(31);
const context = {
  amount: "20.00",
  currency: "EUR",
  merchant: "example-shop",
  "@request": { method: "POST", origin: "https://shop.example", target: "/orders" },
};
const challenge = { nonce, action: "purchase", context, message: groupMessageOf({ nonce, action: "purchase", context }).toString() };
const request = { method: "POST", url: "https://shop.example/orders", body: { amount: "20.00", currency: "EUR" } };
const expect = { action: "purchase", maxAmount: { amount: "50", currency: "EUR" } };

for (const group of [false, true]) {
  const checked = { ...challenge, group };
  for (let i = 0; i < iterations / 5; i++) checkChallenge(checked, request, expect); // warm-up
  const started = performance.now();
  for (let i = 0; i < iterations; i++) checkChallenge(checked, request, expect);
  const micros = ((performance.now() - started) / iterations) * 1000;
  console.log(`${group ? "group claim" : "agent claim"}: ${micros.toFixed(1)} µs per check (${iterations} checks)`);
}
