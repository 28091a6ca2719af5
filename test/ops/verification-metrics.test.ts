// The proof service reports each decided verification once to /metrics.
import { expect, test } from "bun:test";
import { createIdentity, prove } from "../../src/agent";
import { createHarness } from "../support/harness";

test("verified and failed decisions are counted by result and reason, races once", async () => {
  const h = await createHarness();
  const key = await h.newKey();
  const identity = await createIdentity();
  await h.call("POST", "/v1/agents", { key, body: { agent_id: "m", identity_commitment: identity.identity_commitment } });
  const good = (await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "m", action: "purchase" } })).body;
  const proof = await prove({ secret: identity.secret, nonce: good.nonce, action: "purchase" });
  const submissions = await Promise.all(
    Array.from({ length: 5 }, () => h.call("POST", "/v1/verify/proof", { key, body: { challenge_id: good.challenge_id, proof } })),
  );
  expect(submissions.filter((r) => r.status === 200)).toHaveLength(1);
  const bad = (await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "m", action: "purchase" } })).body;
  await h.call("POST", "/v1/verify/proof", { key, body: { challenge_id: bad.challenge_id, proof: "nope" } });

  const metrics = (await h.call("GET", "/metrics")).body as string;
  expect(metrics).toContain('zkagent_verifications_total{result="verified",reason="none"} 1\n');
  expect(metrics).toContain('zkagent_verifications_total{result="failed",reason="invalid_proof_format"} 1\n');
  expect(metrics).toMatch(/zkagent_verification_duration_seconds_count\{result="verified"\} 1\n/);
});
