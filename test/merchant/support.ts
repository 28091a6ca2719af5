// The real zkagent app in process, a merchant key, a registered agent "bot"
// (with a signing key), and the guard's options for them: what the guard's
// tests and its adapters' tests start from.
import { expect } from "bun:test";
import { createIdentity } from "../../src/agent";
import type { GuardOptions } from "../../src/merchant";
import { createHarness } from "../support/harness";

export async function merchantService(context: GuardOptions["context"]) {
  const harness = await createHarness();
  const apiKey = await harness.newKey();
  const identity = { ...(await createIdentity()), agent_id: "bot" };
  const registered = await harness.call("POST", "/v1/agents", {
    key: apiKey,
    body: { agent_id: "bot", identity_commitment: identity.identity_commitment, signing_key: identity.signing_key },
  });
  expect(registered.status).toBe(201);
  const options: GuardOptions = { url: "http://zkagent.test", apiKey, action: "purchase", context, fetch: (request) => harness.app.handle(request) };
  return { harness, identity, options };
}
