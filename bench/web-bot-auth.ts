// The guard's cost for a request admitted by a Web Bot Auth signature
// (directory cached) beside one admitted by a ZKAgent proof, in one process
// (docs/performance.md, "Web Bot Auth"): the guard in front of the real
// zkagent app called in process (app.handle, SQLite in memory, no port), so
// the figures are the guard's and the service's work, not a network's.
//
//   signature/memory, signature/redis, signature/postgres
//                guard.verify of a signed request: parse, rules, the cached
//                directory's key, one Ed25519 verification, the nonce claimed
//                in that store (MemoryNonceStore; RedisNonceStore on a local
//                redis-server through Bun's client; PostgresNonceStore on the
//                tests' PostgreSQL through Bun's SQL), p50 and p99
//   zkagent      guard.verify of the request carrying the proof: the
//                challenge's status and the proof's verification at the
//                service (the claim round and the agent's proving not counted;
//                they are timed apart below)
//   claim        guard.verify of the claim: a challenge created at the service
//   sign         the agent's side of a signature (web-bot-auth's signer)
//   prove        the agent's side of a proof (answerChallenge)
//
//   bun bench/web-bot-auth.ts [--signatures N] [--proofs N] [--stores memory,redis,postgres] [--json]
import { parseArgs } from "node:util";
import { RedisClient, SQL } from "bun";
import { answerChallenge, createIdentity, readChallenge } from "../src/agent";
import { formatAuth } from "../src/http-auth/scheme";
import { zkagentGuard } from "../src/merchant";
import { DirectoryCache } from "../src/merchant/modes/web-bot-auth/directories";
import { directoryResponse, MemoryNonceStore, type NonceStore, PostgresNonceStore, RedisNonceStore, requestSigner } from "../src/web-bot-auth";
import { createHarness } from "../test/support/harness";
import { createTestDatabase, postgresTestUrl } from "../test/support/postgres";
import { startRedis } from "../test/support/redis-server";

const { values: flags } = parseArgs({
  options: { signatures: { type: "string" }, proofs: { type: "string" }, stores: { type: "string" }, json: { type: "boolean" } },
});
const STORES = (flags.stores ?? "memory,redis,postgres").split(",").map((store) => store.trim());
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
const service = (request: Request) => harness.app.handle(request);
/** A guard admitting the operator's signatures, its nonces in `nonces`, its directory cache of its own (fetched once). */
function signatureGuardWith(nonces: NonceStore) {
  const directories = new DirectoryCache({ fetch: (request) => directoryResponse([identity], { origin: new URL(request.url).origin }) });
  const guard = zkagentGuard({
    url: "http://zkagent.test",
    apiKey,
    action: "browse",
    origin: SHOP,
    accept: ["web-bot-auth"],
    signatures: { signatureAgents: [OPERATOR], directories, nonces },
    fetch: service,
  });
  return { guard, directories };
}
const proofGuard = zkagentGuard({ url: "http://zkagent.test", apiKey, action: "browse", origin: SHOP, fetch: service });

const quantile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]!;
const row = (name: string, values: number[]) => ({
  name,
  n: values.length,
  p50_ms: +quantile(values, 0.5).toFixed(3),
  p99_ms: +quantile(values, 0.99).toFixed(3),
});

const signer = await requestSigner(identity, OPERATOR);
const sign: number[] = [];
const signatureRows: ReturnType<typeof row>[] = [];
const cleanups: (() => unknown)[] = [];
for (const store of STORES) {
  let nonces: NonceStore;
  if (store === "memory") nonces = new MemoryNonceStore();
  else if (store === "redis") {
    const redis = await startRedis();
    const client = new RedisClient(redis.url);
    cleanups.push(
      () => client.close(),
      () => redis.stop(),
    );
    nonces = new RedisNonceStore(client);
  } else if (store === "postgres") {
    const database = await createTestDatabase(await postgresTestUrl());
    const sql = new SQL(database.url, { max: 4 });
    cleanups.push(async () => {
      await sql.close();
      await database.drop();
    });
    nonces = new PostgresNonceStore(sql);
  } else throw new Error(`--stores: unknown store ${store}`);
  const { guard, directories } = signatureGuardWith(nonces);
  const signature: number[] = [];
  for (let i = -20; i < SIGNATURES; i++) {
    let start = performance.now();
    const request = await signer.sign(new Request(`${SHOP}/catalog`));
    const signed = performance.now() - start;
    start = performance.now();
    const result = await guard.verify(request);
    const verified = performance.now() - start;
    if (!result.ok) throw new Error(`signature refused: ${await result.response.text()}`);
    if (i >= 0) {
      if (store === STORES[0]) sign.push(signed);
      signature.push(verified);
    }
  }
  if (directories.fetches !== 1) throw new Error(`the directory was fetched ${directories.fetches} times`);
  signatureRows.push(row(`signature/${store}`, signature));
}

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

const rows = [...signatureRows, row("zkagent", zkagent), row("claim", claim), row("sign", sign), row("prove", prove)];
say(`guard.verify, in process (directory cached; service in process, SQLite in memory); p50 and p99, ms`);
for (const r of rows) say(`${r.name.padEnd(20)} n=${String(r.n).padStart(4)}  p50 ${r.p50_ms.toFixed(3).padStart(9)}  p99 ${r.p99_ms.toFixed(3).padStart(9)}`);
for (const cleanup of cleanups) await cleanup();
if (flags.json) console.log(JSON.stringify({ rows }));
process.exit(0);
