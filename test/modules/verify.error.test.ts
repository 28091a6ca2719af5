// Every error row of docs/api.md with its exact status, `error`
// text and body fields; the processing order it fixes when several hold;
// request validation; malformed and tampered proofs; expiry and retention.
import { beforeAll, describe, expect, test } from "bun:test";
import type { AgentIdentity } from "../../src/agent";
import { RETENTION_MS } from "../../src/modules/challenges/lifecycle";
import { BASE, createHarness, errorJson, type Harness } from "../support/harness";
import { identity, SAMPLE, sampleProof, type SampleProof } from "../support/proofs";
import { expectNoInternals, proveFor, readStatus, registerAgent, requestChallenge, seedChallenge, submitProof } from "./flow";
import { REASONS } from "../support/reasons";

const P = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;

let h: Harness;
let key: string;
let otherKey: string;
let sample: SampleProof;
let alice: AgentIdentity;

beforeAll(async () => {
  h = await createHarness();
  key = await h.newKey("owner");
  otherKey = await h.newKey("stranger");
  sample = await sampleProof();
  alice = await identity("alice");
  await registerAgent(h, key, "sample", sample.identity);
  await registerAgent(h, key, "alice", alice);
});

const post = (path: string, body: BodyInit, headers: Record<string, string>) => h.app.handle(new Request(BASE + path, { method: "POST", headers, body }));
const newChallenge = () => requestChallenge(h, key, "sample", SAMPLE.action, SAMPLE.context);

describe("errors: challenge endpoint", () => {
  test("400 lists both missing fields when agent_id and action are absent", async () => {
    const response = await h.call("POST", "/v1/verify/challenge", { key, body: {} });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: "Missing required fields: agent_id, action" });
  });

  test("400 lists only the field that is missing", async () => {
    expect((await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "a" } })).body).toEqual({ error: "Missing required fields: action" });
    expect((await h.call("POST", "/v1/verify/challenge", { key, body: { action: "a" } })).body).toEqual({ error: "Missing required fields: agent_id" });
    expect((await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: null, action: "a" } })).body).toEqual({
      error: "Missing required fields: agent_id",
    });
  });

  test("a rejected challenge request creates nothing and counts nothing", async () => {
    const before = (await h.store.usage(key.split("_")[1]!))!.challenges;
    await h.call("POST", "/v1/verify/challenge", { key, body: {} });
    expect((await h.store.usage(key.split("_")[1]!))!.challenges).toBe(before);
  });
});

describe("errors: proof endpoint", () => {
  test("400 Proof verification failed carries verified:false and a reason", async () => {
    const challenge = await newChallenge();
    const response = await submitProof(h, key, challenge.challenge_id, sample.proof); // proof for another nonce
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ verified: false, error: "Proof verification failed", reason: "proof_rejected", receipt: expect.any(String) });
  });

  test("400 Challenge expired carries verified:false", async () => {
    const challenge = await newChallenge();
    h.clock.advance(300_001);
    const response = await submitProof(h, key, challenge.challenge_id, sample.proof);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: "Challenge expired", verified: false });
  });

  test("400 Challenge already used reports previous_status verified", async () => {
    const id = await seedChallenge(h, key, "sample", SAMPLE);
    expect((await submitProof(h, key, id, sample.proof)).status).toBe(200);
    const again = await submitProof(h, key, id, sample.proof);
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ error: "Challenge already used", verified: false, previous_status: "verified" });
  });

  test("400 Challenge already used reports previous_status failed, even for a valid proof (no retry)", async () => {
    const id = await seedChallenge(h, key, "sample", SAMPLE);
    expect((await submitProof(h, key, id, "not a proof")).status).toBe(400);
    const retry = await submitProof(h, key, id, sample.proof);
    expect(retry.status).toBe(400);
    expect(retry.body).toEqual({ error: "Challenge already used", verified: false, previous_status: "failed" });
    expect((await readStatus(h, key, id)).body.status).toBe("failed");
  });

  test("404 Challenge not found with a message saying the id is invalid or expired", async () => {
    const response = await submitProof(h, key, "ch_does_not_exist", sample.proof);
    expect(response.status).toBe(404);
    expect(response.body.error).toBe("Challenge not found");
    expect(response.body.message).toMatch(/invalid or expired/);
  });

  test("400 lists the missing fields of a proof submission", async () => {
    const response = await h.call("POST", "/v1/verify/proof", { key, body: {} });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: "Missing required fields: challenge_id, proof" });
  });

  test.each([
    ["challenge_id", { challenge_id: 7, proof: "x" }],
    ["challenge_id", { challenge_id: "", proof: "x" }],
    ["challenge_id", { challenge_id: "c".repeat(257), proof: "x" }],
    ["proof", { challenge_id: "ch_x", proof: { pi_a: [] } }],
    ["proof", { challenge_id: "ch_x", proof: "" }],
    ["proof", { challenge_id: "ch_x", proof: "p".repeat(8 * 1024 + 1) }],
    ["agent_signature", { challenge_id: "ch_x", proof: "x", agent_signature: 5 }],
  ])("400 names the invalid field %s", async (field, body) => {
    const response = await h.call("POST", "/v1/verify/proof", { key, body });
    expect(response.status).toBe(400);
    expect(response.body.error).toStartWith(`Invalid field ${field}:`);
  });
});

describe("errors: status endpoint", () => {
  test("404 Session not found for an unknown id", async () => {
    const response = await readStatus(h, key, "ch_unknown");
    expect(response.status).toBe(404);
    expect(response.body.error).toBe("Session not found");
  });

  test("404 for an absurdly long id, without touching the store", async () => {
    const response = await readStatus(h, key, "x".repeat(5000));
    expect(response.status).toBe(404);
    expect(response.body.error).toBe("Session not found");
  });

  test("403 Unauthorized access to session for another key's session", async () => {
    const challenge = await newChallenge();
    const response = await readStatus(h, otherKey, challenge.challenge_id);
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ error: "Unauthorized access to session" });
  });

  test("403 Unauthorized access to session when another key submits a proof", async () => {
    const challenge = await newChallenge();
    const response = await submitProof(h, otherKey, challenge.challenge_id, sample.proof);
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ error: "Unauthorized access to session" });
  });
});

describe("precedence: the earlier condition wins", () => {
  const badKey = "zka_0000000000000000_" + "A".repeat(43);

  test("missing key beats wrong content type (401)", async () => {
    const response = await post("/v1/verify/challenge", "{}", { "content-type": "text/plain" });
    expect(response.status).toBe(401);
  });

  test("invalid key beats wrong content type (403)", async () => {
    for (const path of ["/v1/verify/challenge", "/v1/verify/proof"]) {
      const response = await post(path, "{", { "x-api-key": badKey, "content-type": "text/plain" });
      expect(response.status).toBe(403);
      expect(await errorJson(response)).toEqual({ error: "Invalid API key" });
    }
  });

  test("invalid key beats an oversized body (403, not 413)", async () => {
    const response = await post("/v1/verify/challenge", "x".repeat(70_000), { "x-api-key": badKey, "content-type": "application/json" });
    expect(response.status).toBe(403);
  });

  test("wrong content type beats malformed JSON (415)", async () => {
    const response = await post("/v1/verify/proof", "{not json", { "x-api-key": key, "content-type": "text/plain" });
    expect(response.status).toBe(415);
    expect((await response.json()).error).toBe("Unsupported Media Type");
  });

  test("malformed JSON beats missing fields (400 Malformed JSON body)", async () => {
    const response = await post("/v1/verify/challenge", '{"agent_id":', { "x-api-key": key, "content-type": "application/json" });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe("Malformed JSON body");
  });

  test("missing fields beat an unknown challenge (400, not 404)", async () => {
    const response = await h.call("POST", "/v1/verify/proof", { key, body: { challenge_id: "ch_unknown" } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: "Missing required fields: proof" });
  });

  test("not found beats ownership: a stranger asking for an unknown id gets 404", async () => {
    expect((await submitProof(h, otherKey, "ch_unknown", sample.proof)).status).toBe(404);
    expect((await readStatus(h, otherKey, "ch_unknown")).status).toBe(404);
  });

  test("ownership beats expiry: a stranger gets 403 for an expired challenge", async () => {
    const challenge = await newChallenge();
    h.clock.advance(300_001);
    const response = await submitProof(h, otherKey, challenge.challenge_id, sample.proof);
    expect(response.status).toBe(403);
    expect(response.body.error).toBe("Unauthorized access to session");
  });

  test("ownership beats already used: a stranger gets 403 for a decided challenge", async () => {
    const id = await seedChallenge(h, key, "sample", SAMPLE);
    await submitProof(h, key, id, "garbage");
    expect((await submitProof(h, otherKey, id, sample.proof)).status).toBe(403);
  });

  test("expired beats already used: a verified challenge past its lifetime answers Challenge expired", async () => {
    const id = await seedChallenge(h, key, "sample", SAMPLE);
    expect((await submitProof(h, key, id, sample.proof)).status).toBe(200);
    h.clock.advance(300_001);
    const response = await submitProof(h, key, id, sample.proof);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: "Challenge expired", verified: false });
  });

  test("expired beats verification: a valid proof after +300 001 ms is not verified", async () => {
    const id = await seedChallenge(h, key, "sample", SAMPLE);
    h.clock.advance(300_001);
    expect((await submitProof(h, key, id, sample.proof)).body.error).toBe("Challenge expired");
    expect((await readStatus(h, key, id)).body.status).toBe("expired");
  });

  test("already used beats verification: garbage on a verified challenge is 'already used', not a failure", async () => {
    const id = await seedChallenge(h, key, "sample", SAMPLE);
    await submitProof(h, key, id, sample.proof);
    const response = await submitProof(h, key, id, "garbage");
    expect(response.body).toEqual({ error: "Challenge already used", verified: false, previous_status: "verified" });
    expect((await readStatus(h, key, id)).body.status).toBe("verified");
  });
});

describe("request validation on POST /v1/verify/challenge", () => {
  const challenge = (body: unknown) => h.call("POST", "/v1/verify/challenge", { key, body });

  test.each([
    ["agent_id", { agent_id: "a".repeat(257), action: "x" }],
    ["agent_id", { agent_id: "", action: "x" }],
    ["agent_id", { agent_id: 42, action: "x" }],
    ["agent_id", { agent_id: ["a"], action: "x" }],
    ["action", { agent_id: "a", action: "x".repeat(257) }],
    ["action", { agent_id: "a", action: "" }],
    ["action", { agent_id: "a", action: { kind: "purchase" } }],
    ["action", { agent_id: "a", action: true }],
  ])("400 names %s when it is too long, empty or not a string", async (field, body) => {
    const response = await challenge(body);
    expect(response.status).toBe(400);
    expect(response.body.error).toStartWith(`Invalid field ${field}:`);
  });

  test("256 characters is the longest accepted agent_id and action", async () => {
    expect((await challenge({ agent_id: "a".repeat(256), action: "x".repeat(256) })).status).toBe(200);
  });

  test.each([
    ["an array", [1, 2]],
    ["null", null],
    ["a string", "amount=20"],
    ["a number", 20],
  ])("400 names context when it is %s", async (_, context) => {
    const response = await challenge({ agent_id: "a", action: "x", context });
    expect(response.status).toBe(400);
    expect(response.body.error).toStartWith("Invalid field context:");
  });

  test("context of exactly 16 KiB is accepted, one byte more is 400", async () => {
    const exact = { s: "x".repeat(16 * 1024 - '{"s":""}'.length) };
    expect(Buffer.byteLength(JSON.stringify(exact))).toBe(16 * 1024);
    expect((await challenge({ agent_id: "a", action: "x", context: exact })).status).toBe(200);
    const over = await challenge({ agent_id: "a", action: "x", context: { s: exact.s + "x" } });
    expect(over.status).toBe(400);
    expect(over.body.error).toStartWith("Invalid field context:");
  });

  test("context 16 levels deep is accepted, 17 is 400", async () => {
    const nest = (levels: number): object => (levels === 1 ? {} : { a: nest(levels - 1) });
    expect((await challenge({ agent_id: "a", action: "x", context: nest(16) })).status).toBe(200);
    const deep = await challenge({ agent_id: "a", action: "x", context: nest(17) });
    expect(deep.status).toBe(400);
    expect(deep.body.error).toStartWith("Invalid field context:");
    const deepArrays = await challenge({ agent_id: "a", action: "x", context: { a: JSON.parse("[".repeat(16) + "]".repeat(16)) } });
    expect(deepArrays.status).toBe(400);
  });

  test("a body of exactly 64 KiB is read; one byte more is 413 Payload too large", async () => {
    const prefix = '{"agent_id":"a","action":"x","pad":"';
    const exact = prefix + "y".repeat(64 * 1024 - prefix.length - 2) + '"}';
    expect(exact.length).toBe(64 * 1024);
    expect((await post("/v1/verify/challenge", exact, { "x-api-key": key, "content-type": "application/json" })).status).toBe(200);
    const over = await post("/v1/verify/challenge", exact.replace('"pad":"', '"pad":"y'), { "x-api-key": key, "content-type": "application/json" });
    expect(over.status).toBe(413);
    expect((await over.json()).error).toBe("Payload too large");
  });

  test("413 also when the declared Content-Length is over the limit", async () => {
    const response = await post("/v1/verify/proof", "{}", { "x-api-key": key, "content-type": "application/json", "content-length": "1000000" });
    expect(response.status).toBe(413);
  });

  test.each([
    ["text/plain", "text/plain"],
    ["form encoding", "application/x-www-form-urlencoded"],
    ["no content type", null],
  ])("415 Unsupported Media Type for %s on both POST endpoints", async (_, contentType) => {
    for (const path of ["/v1/verify/challenge", "/v1/verify/proof", "/v1/agents"]) {
      const headers: Record<string, string> = { "x-api-key": key };
      if (contentType) headers["content-type"] = contentType;
      const response = await post(path, new Blob(['{"agent_id":"a","action":"x"}']), headers);
      expect(response.status).toBe(415);
      expect((await response.json()).error).toBe("Unsupported Media Type");
    }
  });

  test("application/json with a charset parameter is accepted", async () => {
    const response = await post("/v1/verify/challenge", '{"agent_id":"a","action":"x"}', {
      "x-api-key": key,
      "content-type": "application/json; charset=utf-8",
    });
    expect(response.status).toBe(200);
  });

  test("invalid UTF-8 is 400 Malformed JSON body", async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('{"agent_id":"'), 0xc3, 0x28, ...new TextEncoder().encode('","action":"x"}')]);
    const response = await post("/v1/verify/challenge", bytes, { "x-api-key": key, "content-type": "application/json" });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error).toBe("Malformed JSON body");
    expect(body.message).toMatch(/UTF-8/);
  });

  test.each([["[1,2]"], ["null"], ['"text"'], ["42"], [""]])("400 Malformed JSON body when the body is %p", async (text) => {
    const response = await post("/v1/verify/challenge", text, { "x-api-key": key, "content-type": "application/json" });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe("Malformed JSON body");
  });
});

describe("malformed and tampered proofs: 400 with a reason, never 5xx", () => {
  const proofObject = () => JSON.parse(sample.proof);
  const bump = (digits: string) => digits.slice(0, -1) + String((Number(digits.at(-1)) + 1) % 10);

  async function rejects(proof: string) {
    const id = await seedChallenge(h, key, "sample", SAMPLE);
    const response = await submitProof(h, key, id, proof);
    expect(response.status).toBe(400);
    expect(response.body.verified).toBe(false);
    expect(response.body.error).toBe("Proof verification failed");
    expect(REASONS.has(response.body.reason)).toBe(true);
    expectNoInternals(response.body);
    expect((await readStatus(h, key, id)).body.status).toBe("failed");
    return response.body.reason as string;
  }

  test("control: the untampered pooled proof verifies on a seeded challenge", async () => {
    const id = await seedChallenge(h, key, "sample", SAMPLE);
    expect((await submitProof(h, key, id, sample.proof)).status).toBe(200);
  });

  test.each([
    ["not JSON", "definitely not a proof"],
    ["JSON of the wrong shape", '{"pi_a":[1,2],"pi_b":"x"}'],
    ["a JSON array", "[1,2,3]"],
    ["JSON null", "null"],
    // 256 bytes of 0xff: every coordinate is ≥ p. (All zeros would be points at infinity: invalid_curve_point.)
    ["compact garbage", "_".repeat(342)],
    ["a lone brace", "{"],
  ])("%s → invalid_proof_format", async (_, proof) => {
    expect(await rejects(proof)).toBe("invalid_proof_format");
  });

  test("non-numeric coordinates → invalid_proof_format", async () => {
    const proof = proofObject();
    proof.pi_a[0] = "0x" + BigInt(proof.pi_a[0]).toString(16);
    expect(await rejects(JSON.stringify(proof))).toBe("invalid_proof_format");
    const numbers = proofObject();
    numbers.pi_c = numbers.pi_c.map(Number);
    expect(await rejects(JSON.stringify(numbers))).toBe("invalid_proof_format");
  });

  test("a coordinate + p (same point mod p) is rejected as invalid_proof_format", async () => {
    for (const path of [
      ["pi_a", 0],
      ["pi_c", 1],
    ] as const) {
      const proof = proofObject();
      proof[path[0]][path[1]] = String(BigInt(proof[path[0]][path[1]]) + P);
      expect(await rejects(JSON.stringify(proof))).toBe("invalid_proof_format");
    }
    const g2 = proofObject();
    g2.pi_b[0][1] = String(BigInt(g2.pi_b[0][1]) + P);
    expect(await rejects(JSON.stringify(g2))).toBe("invalid_proof_format");
  });

  test("a coordinate with a leading zero is not canonical → invalid_proof_format", async () => {
    const proof = proofObject();
    proof.pi_a[1] = "0" + proof.pi_a[1];
    expect(await rejects(JSON.stringify(proof))).toBe("invalid_proof_format");
  });

  test("a flipped digit of a well-formed proof is rejected", async () => {
    const a = proofObject();
    a.pi_a[0] = bump(a.pi_a[0]);
    await rejects(JSON.stringify(a));
    const b = proofObject();
    b.pi_b[1][0] = bump(b.pi_b[1][0]);
    await rejects(JSON.stringify(b));
  });

  test("a flipped digit moves the point off the curve → invalid_curve_point (docs/protocol.md)", async () => {
    const proof = proofObject();
    proof.pi_c[1] = bump(proof.pi_c[1]);
    expect(await rejects(JSON.stringify(proof))).toBe("invalid_curve_point");
  });

  test("a valid point in the wrong place (pi_a and pi_c swapped) → proof_rejected", async () => {
    const proof = proofObject();
    [proof.pi_a, proof.pi_c] = [proof.pi_c, proof.pi_a];
    expect(await rejects(JSON.stringify(proof))).toBe("proof_rejected");
  });
});

describe("expiry and retention via the injectable clock", () => {
  test("at +300 001 ms a valid proof answers Challenge expired and the session stays expired", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase");
    const proof = await proveFor(alice, challenge, "purchase");
    h.clock.advance(300_001);
    const response = await submitProof(h, key, challenge.challenge_id, proof);
    expect(response.body).toEqual({ error: "Challenge expired", verified: false });
    expect((await h.store.getChallenge(challenge.challenge_id))!.status).toBe("pending");
    expect((await readStatus(h, key, challenge.challenge_id)).body.status).toBe("expired");
  });

  test("a pending challenge reads pending at +300 s and expired at +300 001 ms without any proof", async () => {
    const challenge = await newChallenge();
    h.clock.advance(300_000);
    expect((await readStatus(h, key, challenge.challenge_id)).body.status).toBe("pending");
    h.clock.advance(1);
    const status = await readStatus(h, key, challenge.challenge_id);
    expect(status.status).toBe(200);
    expect(status.body.status).toBe("expired");
    expect(status.body.verified_at).toBeNull();
    expect(status.body.confidence).toBeNull();
  });

  test("the status endpoint serves a session until 24 h after expiry, then 404 (lazy check)", async () => {
    const challenge = await newChallenge();
    h.clock.advance(300_000 + RETENTION_MS);
    expect((await readStatus(h, key, challenge.challenge_id)).status).toBe(200);
    h.clock.advance(1);
    const gone = await readStatus(h, key, challenge.challenge_id);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toBe("Session not found");
    expect((await submitProof(h, key, challenge.challenge_id, sample.proof)).status).toBe(404);
    expect(await h.store.getChallenge(challenge.challenge_id)).not.toBeNull(); // still there until the purge
  });

  test("a verified session is also kept 24 h after expiry, then reads 404", async () => {
    const id = await seedChallenge(h, key, "sample", SAMPLE);
    expect((await submitProof(h, key, id, sample.proof)).status).toBe(200);
    h.clock.advance(300_000 + RETENTION_MS);
    expect((await readStatus(h, key, id)).body.status).toBe("verified");
    h.clock.advance(1);
    expect((await readStatus(h, key, id)).status).toBe(404);
  });

  test("purgeChallenges(now - RETENTION_MS) deletes exactly the rows past retention", async () => {
    const fresh = await createHarness();
    const freshKey = await fresh.newKey();
    const old = await requestChallenge(fresh, freshKey, "a", "x");
    fresh.clock.advance(60_000);
    const young = await requestChallenge(fresh, freshKey, "a", "x");
    fresh.clock.advance(300_000 - 60_000 + RETENTION_MS); // old is exactly at the edge of retention
    expect(await fresh.store.purgeChallenges(fresh.clock.now() - RETENTION_MS)).toBe(0);
    expect((await readStatus(fresh, freshKey, old.challenge_id)).status).toBe(200);

    fresh.clock.advance(1);
    expect(await fresh.store.purgeChallenges(fresh.clock.now() - RETENTION_MS)).toBe(1);
    expect(await fresh.store.getChallenge(old.challenge_id)).toBeNull();
    expect(await fresh.store.getChallenge(young.challenge_id)).not.toBeNull();
    expect((await readStatus(fresh, freshKey, old.challenge_id)).status).toBe(404);
    expect((await readStatus(fresh, freshKey, young.challenge_id)).body.status).toBe("expired");
  });
});
