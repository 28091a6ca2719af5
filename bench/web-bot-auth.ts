// The guard's cost for a request admitted by a Web Bot Auth signature
// (directory cached) beside one admitted by a ZKAgent proof, in one process
// (docs/performance.md, "Web Bot Auth"): the guard in front of the real
// zkagent app called in process (app.handle, SQLite in memory, no port), so
// the figures are the guard's and the service's work, not a network's.
//
//   signature    guard.verify of a signed request: parse, rules, the cached
//                directory's key, one Ed25519 verification, the nonce store
//   zkagent      guard.verify of the request carrying the proof: the
//                challenge's status and the proof's verification at the
//                service (the claim round and the agent's proving not counted;
//                they are timed apart below)
//   claim        guard.verify of the claim: a challenge created at the service
//   sign         the agent's side of a signature (web-bot-auth's signer)
//   prove        the agent's side of a proof (answerChallenge)
//
//   bun bench/web-bot-auth.ts [--signatures N] [--proofs N] [--json]
import { parseArgs } from "node:util";
import { answerChallenge, createIdentity, readChallenge } from "../src/agent";
import { formatAuth } from "../src/http-auth/scheme";
import { zkagentGuard } from "../src/merchant";
import { DirectoryCache } from "../src/merchant/modes/web-bot-auth/directories";
import { directoryResponse, MemoryNonceStore, requestSigner } from "../src/web-bot-auth";
import { createHarness } from "../test/support/harness";

const { values: flags } = parseArgs({ options: { signatures: { type: "string" }, proofs: { type: "string" }, json: { type: "boolean" } } });
const SIGNATURES = Number(flags.signatures ?? 500);
const PROOFS = Number(flags.proofs ?? 20);
const say = (...parts: unknown[]) => (flags.json ? console.error : console.log)(...parts);

const harness = await createHarness();
const apiKey = await harness.newKey();
const identity = { ...(await createIdentity()), agent_id: "bench-agent" };
const registered = await harness.call("POST", "/v1/agents", {
  key: apiKey,
  body: { agent_id: identity.agent_id, identity_commitment: identity.identity_commitment, signing_key: identity.signing_key },
});
if (registered.status !== 201) throw new Error(`registering: ${registered.status}`);

const OPERATOR = "https://agents.operator.example";
const SHOP = "https://shop.example";
const directories = new DirectoryCache({ fetch: (request) => directoryResponse([identity], { origin: new URL(request.url).origin }) });
const service = (request: Request) => harness.app.handle(request);
const signatureGuard = zkagentGuard({
  url: "http://zkagent.test",
  apiKey,
  action: "browse",
  origin: SHOP,
  accept: ["web-bot-auth"],
  signatures: { signatureAgents: [OPERATOR], directories, nonces: new MemoryNonceStore() },
  fetch: service,
});
const proofGuard = zkagentGuard({ url: "http://zkagent.test", apiKey, action: "browse", origin: SHOP, fetch: service });

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const p90 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)]!;
const row = (name: string, values: number[]) => ({ name, n: values.length, median_ms: +median(values).toFixed(3), p90_ms: +p90(values).toFixed(3) });

const signer = await requestSigner(identity, OPERATOR);
const sign: number[] = [];
const signature: number[] = [];
for (let i = -20; i < SIGNATURES; i++) {
  let start = performance.now();
  const request = await signer.sign(new Request(`${SHOP}/catalog`));
  const signed = performance.now() - start;
  start = performance.now();
  const result = await signatureGuard.verify(request);
  const verified = performance.now() - start;
  if (!result.ok) throw new Error(`signature refused: ${await result.response.text()}`);
  if (i >= 0) {
    sign.push(signed);
    signature.push(verified);
  }
}
if (directories.fetches !== 1) throw new Error(`the directory was fetched ${directories.fetches} times`);

const claim: number[] = [];
const prove: number[] = [];
const zkagent: number[] = [];
for (let i = -2; i < PROOFS; i++) {
  let start = performance.now();
  const claimed = await proofGuard.verify(new Request(`${SHOP}/catalog`, { headers: { authorization: formatAuth({ agent: identity.agent_id }) } }));
  const claimMs = performance.now() - start;
  if (claimed.ok) throw new Error("the claim was admitted");
  const challenge = readChallenge(claimed.response);
  if (challenge === null || challenge === "claim") throw new Error("no challenge");
  start = performance.now();
  const authorization = await answerChallenge(challenge, { identity });
  const proveMs = performance.now() - start;
  start = performance.now();
  const result = await proofGuard.verify(new Request(`${SHOP}/catalog`, { headers: { authorization } }));
  const verifyMs = performance.now() - start;
  if (!result.ok) throw new Error(`proof refused: ${await result.response.text()}`);
  if (i >= 0) {
    claim.push(claimMs);
    prove.push(proveMs);
    zkagent.push(verifyMs);
  }
}

const rows = [row("signature", signature), row("zkagent", zkagent), row("claim", claim), row("sign", sign), row("prove", prove)];
say(`guard.verify, in process (directory cached; service in process, SQLite in memory); medians and p90, ms`);
for (const r of rows)
  say(`${r.name.padEnd(10)} n=${String(r.n).padStart(4)}  median ${r.median_ms.toFixed(3).padStart(9)}  p90 ${r.p90_ms.toFixed(3).padStart(9)}`);
if (flags.json) console.log(JSON.stringify({ rows }));
process.exit(0);
