// Circuits as versioned data over HTTP (issue 17), in process: the public
// list and artifacts, the challenge's circuit_id, and a rotation that breaks
// no challenge in flight while a retired circuit verifies nothing.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import canonicalize from "canonicalize";
import { type AgentIdentity, prove } from "../../src/agent";
import { readCeremonyDir } from "../../src/ceremony/ceremony";
import { CircuitRegistry, circuitRecordOf, SHIPPED_CIRCUIT_ID, shippedCircuitRecord } from "../../src/circuits/registry";
import { serviceVerifier } from "../../src/verifier/service";
import { secondCeremony } from "../support/ceremony";
import { createHarness, type Harness } from "../support/harness";
import { identity } from "../support/proofs";
import { registerAgent, requestChallenge, submitProof } from "./flow";

setDefaultTimeout(30_000);

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");
const ART = "circuits/artifacts";
// The shipped circuit's id and vk hash, computed here from the committed files, not by the code under test.
const SHIPPED_VK_HASH = `sha256:${sha256(canonicalize(JSON.parse(readFileSync(`${ART}/verification_key.json`, "utf8"))) as string)}`;
const context = { amount: 20, currency: "EUR", merchant: "shop-a" };

/** The receipt's claims (its signature is checked in receipts.happy.test.ts; here only what it names). */
const checked = async (receipt: string) => JSON.parse(Buffer.from(receipt.split(".")[1]!, "base64url").toString());

let h: Harness;
let key: string;
let alice: AgentIdentity;
let second: Awaited<ReturnType<typeof secondCeremony>>;

beforeAll(async () => {
  const shipped = await serviceVerifier();
  const { openSqlite } = await import("../../src/store/sqlite");
  const store = openSqlite(":memory:");
  // refreshMs 0: every request sees the store as it is (the ≤ 5 s bound is tested in test/circuits/registry.test.ts).
  const circuits = new CircuitRegistry(store, { shipped, verifierFor: (vk) => serviceVerifier(vk), refreshMs: 0 });
  h = await createHarness(store, { verifier: shipped, circuits });
  await h.store.addCircuit(await shippedCircuitRecord(Date.now()));
  key = await h.newKey("circuits");
  alice = await identity("circuits-alice");
  await registerAgent(h, key, "alice", alice);
  second = await secondCeremony();
});

describe("GET /v1/circuits (public)", () => {
  test("lists the shipped circuit as active, a development setup, with its ceremony: two contributions and the beacon", async () => {
    const response = await h.call("GET", "/v1/circuits", { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("public, max-age=5");
    const transcript = JSON.parse(readFileSync(`${ART}/transcript.json`, "utf8"));
    expect(response.body.active).toBe(`agent_identity-${SHIPPED_VK_HASH.slice(7, 23)}`);
    // Beside it, the Semaphore v4 circuits of depths 1–32 (group challenges), from the pinned package, never active.
    const semaphore = response.body.circuits.filter((c: { setup: string }) => c.setup === "semaphore");
    expect(semaphore.map((c: { id: string }) => Number(/_d(\d+)-/.exec(c.id)![1]))).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
    expect(semaphore.every((c: { state: string }) => c.state === "accepted")).toBe(true);
    // And the budget spend circuit (budget challenges), its own ceremony, never active.
    const budget = response.body.circuits.filter((c: { id: string }) => c.id.startsWith("budget_spend-"));
    expect(budget).toHaveLength(1);
    expect(budget[0]).toMatchObject({
      state: "accepted",
      setup: "development",
      zkey_sha256: sha256(readFileSync("circuits/artifacts/budget_spend/budget_spend.zkey")),
    });
    expect(response.body.circuits).toHaveLength(34);
    const [c] = response.body.circuits;
    expect(c).toMatchObject({
      id: SHIPPED_CIRCUIT_ID,
      state: "active",
      setup: "development",
      vk_hash: SHIPPED_VK_HASH,
      zkey_sha256: sha256(readFileSync(`${ART}/agent_identity.zkey`)),
      wasm_sha256: sha256(readFileSync(`${ART}/agent_identity.wasm`)),
    });
    expect(c.ceremony.contributions).toEqual(transcript.steps.filter((s: any) => s.step === "contribution").map((s: any) => ({ name: s.name, hash: s.hash })));
    expect(c.ceremony.contributions).toHaveLength(2);
    expect(c.ceremony.beacon).toMatchObject({ value: "5f695ab12de7586673dd6a42fccd63f3fad77293b2ec8d66f19e3a2592be70fd", iterations_exp: 10 });
    expect(c.ceremony.ptau.blake2b512).toStartWith("94f108a80e81b5d9");
  });

  test("artifacts hash to what the list publishes; ETag is the hash, If-None-Match answers 304, immutable", async () => {
    const [c] = (await h.call("GET", "/v1/circuits", { key: null })).body.circuits;
    for (const [kind, hash] of [
      ["zkey", c.zkey_sha256],
      ["wasm", c.wasm_sha256],
      ["transcript", c.transcript_sha256],
    ] as const) {
      const response = await h.app.handle(new Request(`http://zkagent.test/v1/circuits/${c.id}/${kind}`));
      expect(response.status).toBe(200);
      expect(sha256(new Uint8Array(await response.arrayBuffer()))).toBe(hash);
      expect(response.headers.get("etag")).toBe(`"${hash}"`);
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      const again = await h.app.handle(new Request(`http://zkagent.test/v1/circuits/${c.id}/${kind}`, { headers: { "if-none-match": `"${hash}"` } }));
      expect(again.status).toBe(304);
      expect(await again.text()).toBe("");
    }
    const zkey = await h.app.handle(new Request(`http://zkagent.test/v1/circuits/${c.id}/zkey`));
    expect(new Uint8Array(await zkey.arrayBuffer())).toEqual(new Uint8Array(readFileSync(`${ART}/agent_identity.zkey`)));
    const vk = await h.app.handle(new Request(`http://zkagent.test/v1/circuits/${c.id}/vk`));
    expect(`sha256:${sha256(canonicalize(await vk.json()) as string)}`).toBe(c.vk_hash);
  });

  test("If-None-Match: * and the entity tag (weak or strong) answer 304; W/* and a * inside a list are no entity tags and answer 200 (RFC 9110 §13.1.2)", async () => {
    const [c] = (await h.call("GET", "/v1/circuits", { key: null })).body.circuits;
    const status = async (ifNoneMatch: string) =>
      (await h.app.handle(new Request(`http://zkagent.test/v1/circuits/${c.id}/wasm`, { headers: { "if-none-match": ifNoneMatch } }))).status;
    expect(await status("*")).toBe(304);
    expect(await status(` W/"${c.wasm_sha256}"`)).toBe(304);
    expect(await status(`"other", "${c.wasm_sha256}"`)).toBe(304);
    expect(await status("W/*")).toBe(200);
    expect(await status(`"other", *`)).toBe(200);
    expect(await status(`"other"`)).toBe(200);
  });

  test("an unknown circuit is a 404 Circuit not found, for the version and each artifact", async () => {
    for (const path of ["/v1/circuits/agent_identity-0000000000000000", "/v1/circuits/nope/zkey", "/v1/circuits/%E0%A4/vk"]) {
      const response = await h.call("GET", path, { key: null });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: "Circuit not found" });
    }
  });
});

describe("a rotation", () => {
  test("new challenges carry the new circuit; each challenge verifies against its own circuit's key; receipts name it", async () => {
    const record = circuitRecordOf(await readCeremonyDir(second.dir), Date.now());
    expect(record.id).toBe(second.circuit.id);
    expect(await h.store.addCircuit(record)).toEqual({ added: true, state: "accepted" });
    const before = await requestChallenge(h, key, "alice", "purchase", context);
    expect((before as any).circuit_id).toBe(SHIPPED_CIRCUIT_ID);
    expect(await h.store.activateCircuit(record.id, Date.now())).toBe("activated");
    const after = await requestChallenge(h, key, "alice", "purchase", context);
    expect((after as any).circuit_id).toBe(record.id);

    // The old (built-in) zkey for a new challenge: the new key rejects it.
    const statement = { secret: alice.secret, nonce: after.nonce, action: "purchase", context };
    const rejected = await submitProof(h, key, after.challenge_id, await prove(statement));
    expect(rejected.status).toBe(400);
    expect(rejected.body.reason).toBe("proof_rejected");
    expect((await checked(rejected.body.receipt)).circuit).toEqual({ id: record.id, vk_hash: record.vkHash });

    const fresh = await requestChallenge(h, key, "alice", "purchase", context);
    const accepted = await submitProof(h, key, fresh.challenge_id, await prove({ ...statement, nonce: fresh.nonce, circuit: second.circuit }));
    expect(accepted.status).toBe(200);
    expect((await checked(accepted.body.receipt)).circuit).toEqual({ id: record.id, vk_hash: record.vkHash });

    // The challenge issued before the activation still verifies with the old zkey.
    const inFlight = await submitProof(h, key, before.challenge_id, await prove({ ...statement, nonce: before.nonce }));
    expect(inFlight.status).toBe(200);
    expect((await checked(inFlight.body.receipt)).circuit).toEqual({ id: SHIPPED_CIRCUIT_ID, vk_hash: SHIPPED_VK_HASH });
  });

  test("a retired circuit verifies nothing: a valid proof for its challenge fails with circuit_retired", async () => {
    // The second circuit is active now (previous test); a challenge is issued with it, then the shipped one becomes active again.
    const pending = await requestChallenge(h, key, "alice", "purchase", context);
    expect((pending as any).circuit_id).toBe(second.circuit.id);
    expect(await h.store.activateCircuit(SHIPPED_CIRCUIT_ID, Date.now())).toBe("activated");
    expect(await h.store.retireCircuit(second.circuit.id, Date.now())).toBe("retired");
    const proof = await prove({ secret: alice.secret, nonce: pending.nonce, action: "purchase", context, circuit: second.circuit });
    const response = await submitProof(h, key, pending.challenge_id, proof);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ verified: false, error: "Proof verification failed", reason: "circuit_retired" });
    const listed = (await h.call("GET", "/v1/circuits", { key: null })).body;
    expect(listed.active).toBe(SHIPPED_CIRCUIT_ID);
    expect(listed.circuits.find((c: any) => c.id === second.circuit.id)).toMatchObject({ state: "retired", setup: "operator" });
  });
});
