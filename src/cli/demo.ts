// The whole flow against a running server, as an integrator would write it.
import { createIdentity, prove, sign } from "../agent";
import { systemClock } from "../clock";
import type { Config } from "../config";
import { createKey } from "../modules/keys/service";
import { openStore } from "../store";
import { parse, printJson, say } from "./args";

export const demoHelp = `zkagent demo [--url URL] [--key API_KEY] [--json]
  Runs the flow against a running server: creates an agent identity,
  registers it, requests a challenge, proves, signs, verifies, reads the status.
  --url   default http://localhost:$PORT (3000)
  --key   default $ZKAGENT_API_KEY; without one, a key named "demo" is created
          in DATABASE_URL, the database the server uses.`;

export async function demoCommand(argv: string[], config: Config): Promise<number> {
  const { values } = parse(argv, { url: { type: "string" }, key: { type: "string" }, json: { type: "boolean" } });
  if (values.help) return say(demoHelp), 0;
  const url = (values.url ?? `http://localhost:${config.port}`).replace(/\/$/, "");
  const step = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);

  let key = values.key ?? process.env.ZKAGENT_API_KEY;
  if (!key) {
    const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
    key = (await createKey(store, systemClock, "demo", 0)).key;
    await store.close();
    step(`0. created API key "demo" in ${config.databaseUrl}`);
  }
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(url + path, {
      method,
      headers: { "x-api-key": key!, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await response.json()) as any;
    // A failed verification is a result the demo prints, not an error.
    if (!response.ok && path !== "/v1/verify/proof") throw new Error(`${method} ${path} → ${response.status} ${JSON.stringify(json)}`);
    return json;
  };

  const identity = await createIdentity();
  step(`1. agent identity created; commitment ${identity.identity_commitment.slice(0, 16)}…`);
  const agentId = `demo-agent-${Date.now().toString(36)}`;
  await call("POST", "/v1/agents", { agent_id: agentId, identity_commitment: identity.identity_commitment, signing_key: identity.signing_key });
  step(`2. registered agent ${agentId}`);
  const action = "purchase";
  const context = { amount: 20, currency: "EUR", merchant: "shop-a" };
  const challenge = await call("POST", "/v1/verify/challenge", { agent_id: agentId, action, context });
  step(`3. challenge ${challenge.challenge_id}, nonce ${challenge.nonce.slice(0, 16)}…, expires in ${challenge.expires_in} s`);
  const started = performance.now();
  const proof = await prove({ secret: identity.secret, nonce: challenge.nonce, action, context });
  step(`4. proof generated in ${Math.round(performance.now() - started)} ms`);
  const agent_signature = sign({ signingSecret: identity.signing_secret, challengeId: challenge.challenge_id, nonce: challenge.nonce, action, context });
  const verdict = await call("POST", "/v1/verify/proof", { challenge_id: challenge.challenge_id, proof, agent_signature });
  step(`5. verification: ${JSON.stringify(verdict)}`);
  const session = await call("GET", `/v1/verify/status/${challenge.challenge_id}`);
  step(`6. session status: ${session.status}, confidence ${session.confidence}`);
  if (values.json) printJson({ agent_id: agentId, challenge_id: challenge.challenge_id, verification: verdict, session });
  return session.status === "verified" ? 0 : 1;
}
