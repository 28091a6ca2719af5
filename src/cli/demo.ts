// The whole flow against a running server, as an integrator would write it.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createIdentity, type LoadedCircuit, loadCircuit, prove, sign } from "../agent";
import { SHIPPED_CIRCUIT_ID } from "../circuits/version";
import { systemClock } from "../clock";
import type { Config } from "../config";
import { authenticate, createKey, keyPrefix } from "../modules/keys/service";
import { openStore } from "../store";
import { parse, printJson, say, warn } from "./args";
import { reach } from "./unreachable";

export const demoHelp = `zkagent demo [--url URL] [--key API_KEY] [--json]
  Runs the flow against a running server: creates an agent identity,
  registers it with a mandate (purchases up to 30.00 EUR a day), requests a
  challenge, proves with the circuit it names (circuit_id: fetched from the
  server and checked against the published hashes, unless it is the one
  built in), signs, verifies, reads the status, and then watches the
  mandate stop a second purchase that would pass the day's total.
  --url   default http://localhost:$PORT (3000)
  --key   default $ZKAGENT_API_KEY; without one, the "demo" key of
          DATABASE_URL (the database the server uses), created on the first
          run once the server has answered, and kept for the next runs in
          $XDG_STATE_HOME/zkagent/demo-keys/ (default ~/.local/state).
  Exit 0 when the flow ends as it should, 1 when it does not, 3 when the
  server cannot be reached (the URL is named).`;

/**
 * Where the demo keeps its key for one database: a file per DATABASE_URL
 * (named by its hash: the URL may hold a password), readable by the user only.
 */
export function demoKeyFile(databaseUrl: string): string {
  const state = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  const location = /^[a-z][a-z0-9+.-]*:\/\//i.test(databaseUrl) ? databaseUrl : resolve(databaseUrl);
  const name = createHash("sha256").update(location).digest("hex").slice(0, 16);
  return join(state, "zkagent", "demo-keys", name);
}

/**
 * The database's "demo" key: the one kept from an earlier run when it is still
 * live there and named "demo", else a new one (unlimited, as a demo needs),
 * kept for the next run. Only the key's hash is in the database, so the key
 * itself can be reused only from where the demo kept it.
 */
async function demoKey(config: Config): Promise<{ key: string; prefix: string; file: string; created: boolean }> {
  const file = demoKeyFile(config.databaseUrl);
  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous, groupRootDurationMs: config.groupRootDurationS * 1000 });
  try {
    const kept = existsSync(file) ? readFileSync(file, "utf8").trim() : "";
    const record = kept ? await authenticate(store, kept).catch(() => null) : null;
    if (record?.name === "demo") return { key: kept, prefix: keyPrefix(record.id), file, created: false };
    const created = await createKey(store, systemClock, "demo", 0);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, `${created.key}\n`, { mode: 0o600 });
    return { key: created.key, prefix: keyPrefix(created.record.id), file, created: true };
  } finally {
    await store.close();
  }
}

export async function demoCommand(argv: string[], config: Config): Promise<number> {
  const { values } = parse(argv, { url: { type: "string" }, key: { type: "string" }, json: { type: "boolean" } });
  if (values.help) return (say(demoHelp), 0);
  const url = (values.url ?? `http://localhost:${config.port}`).replace(/\/$/, "");
  const step = (line: string) => (values.json ? warn : say)(line);

  let key = values.key ?? process.env.ZKAGENT_API_KEY;
  if (!key) {
    // The server first: a wrong --url or a stopped server creates no key (exit 3, naming the URL).
    await (await reach(`${url}/health`)).body?.cancel();
    const found = await demoKey(config);
    key = found.key;
    step(
      found.created
        ? `0. created API key "demo" in ${config.databaseUrl}; kept in ${found.file} for the next runs`
        : `0. using API key "demo" (${found.prefix}) kept in ${found.file}`,
    );
  }
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await reach(url + path, {
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
  const mandate = { actions: ["purchase"], limits: [{ action: "purchase", currency: "EUR", max_amount: "25.00", max_total: "30.00", period: "day" }] };
  await call("POST", "/v1/agents", { agent_id: agentId, identity_commitment: identity.identity_commitment, signing_key: identity.signing_key, mandate });
  step(`2. registered agent ${agentId} with a mandate: purchases only, at most 25.00 EUR each and 30.00 EUR a day`);
  const action = "purchase";
  const context = { amount: 20, currency: "EUR", merchant: "shop-a" };
  const challenge = await call("POST", "/v1/verify/challenge", { agent_id: agentId, action, context });
  step(`3. challenge ${challenge.challenge_id}, nonce ${challenge.nonce.slice(0, 16)}…, expires in ${challenge.expires_in} s`);
  // The challenge names its circuit; the built-in one needs no download.
  const circuitFor = (id: string): Promise<LoadedCircuit> =>
    id === SHIPPED_CIRCUIT_ID ? loadCircuit() : loadCircuit(`${url}/v1/circuits/${encodeURIComponent(id)}`, { allowInsecureLoopback: true });
  const circuit = await circuitFor(challenge.circuit_id);
  const started = performance.now();
  const proof = await prove({ secret: identity.secret, nonce: challenge.nonce, action, context, circuit });
  // The first proof of a process also loads the circuit (the zkey's tables, the witness calculator).
  const firstMs = Math.round(performance.now() - started);
  step(`4. proof generated in ${firstMs} ms with circuit ${circuit.id} (the process's first: includes loading the circuit)`);
  const agent_signature = sign({ signingSecret: identity.signing_secret, challengeId: challenge.challenge_id, nonce: challenge.nonce, action, context });
  const verdict = await call("POST", "/v1/verify/proof", { challenge_id: challenge.challenge_id, proof, agent_signature });
  step(`5. verification: ${JSON.stringify(verdict)}`);
  const session = await call("GET", `/v1/verify/status/${challenge.challenge_id}`);
  step(`6. session status: ${session.status}, confidence ${session.confidence}`);

  // A second purchase, as valid a proof as the first, that would take the day past 30.00 EUR.
  const overLimit = { amount: "15.00", currency: "EUR", merchant: "shop-a" };
  const second = await call("POST", "/v1/verify/challenge", { agent_id: agentId, action, context: overLimit });
  const secondCircuit = await circuitFor(second.circuit_id);
  const secondStarted = performance.now();
  const secondProof = await prove({ secret: identity.secret, nonce: second.nonce, action, context: overLimit, circuit: secondCircuit });
  const secondMs = Math.round(performance.now() - secondStarted);
  const refused = await call("POST", "/v1/verify/proof", { challenge_id: second.challenge_id, proof: secondProof });
  step(`7. a second purchase of 15.00 EUR (day total would be 35.00), proof generated in ${secondMs} ms: ${JSON.stringify(refused)}`);
  const agent = await call("GET", `/v1/agents/${encodeURIComponent(agentId)}`);
  const spent = agent.spend?.[0];
  step(`8. today's spend under the mandate: ${spent?.total} EUR in ${spent?.count} purchase(s)`);
  if (values.json)
    printJson({
      agent_id: agentId,
      challenge_id: challenge.challenge_id,
      verification: verdict,
      session,
      over_limit: refused,
      spend: agent.spend,
      proof_ms: [firstMs, secondMs],
    });
  return session.status === "verified" && refused.reason === "mandate_violation" && refused.detail === "max_total" ? 0 : 1;
}
