// Issue 17 end to end, as an operator and an agent do it: a real server on
// 127.0.0.1 (SQLite), the zkagent CLI in separate processes. The operator
// runs a phase-2 ceremony (init, two contributions, a beacon, verify), adds
// and activates the circuit; new challenges carry it, proofs from the old
// built-in zkey fail for them, `prove --circuit <URL>` proves for them, and
// a challenge issued before the activation still verifies with the old zkey.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createIdentity } from "../../src/agent";
import { cacheDirOf } from "../../src/agent/circuit";
import { call, newKey, type Node, startNode } from "../multinode/nodes";

setDefaultTimeout(60_000);

const CLI = ["bun", new URL("../../src/cli/index.ts", import.meta.url).pathname];
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const tmp = mkdtempSync(join(tmpdir(), "zkagent-e2e-circuits-"));
const db = join(tmp, "zkagent.db");
const ceremony = join(tmp, "ceremony");
const cacheDir = join(tmp, "cache");
const context = { amount: 20, currency: "EUR", merchant: "shop-a" };
let node: Node;
let key: string;

async function cli(args: string[], env: Record<string, string> = {}, stdin?: string) {
  const proc = Bun.spawn([...CLI, ...args], {
    env: { ...process.env, DATABASE_URL: db, LOG_LEVEL: "silent", ...env },
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** `zkagent prove` for a challenge, the secret on stdin; with `circuit`, from that source. */
async function proveCli(secret: string, challenge: { nonce: string }, circuit?: string) {
  const args = ["prove", "--secret-file", "-", "--nonce", challenge.nonce, "--action", "purchase", "--context", JSON.stringify(context), "--json"];
  // The node listens on 127.0.0.1: plain http is accepted for loopback only when asked.
  if (circuit) args.push("--circuit", circuit, "--cache-dir", cacheDir, "--allow-insecure-loopback");
  return cli(args, {}, secret);
}

beforeAll(async () => {
  node = await startNode(db);
  key = (await newKey(db)).key;
}, 60_000);

afterAll(async () => {
  await node?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe("an operator's own phase 2, then a rotation on a running service", () => {
  let agent: Awaited<ReturnType<typeof createIdentity>>;
  let before: { challenge_id: string; nonce: string; circuit_id: string };
  let newId: string;
  let newVkHash: string;
  let shippedId: string;

  test("ceremony init, two contributions, a beacon: verify holds and lists them", async () => {
    expect((await cli(["ceremony", "init", "--out", ceremony])).code).toBe(0);
    const first = await cli(["ceremony", "contribute", ceremony, "--name", "operator alice", "--json"]);
    const second = await cli(["ceremony", "contribute", ceremony, "--name", "operator bob", "--json"]);
    expect(first.code).toBe(0);
    expect(second.code).toBe(0);
    const beaconValue = createHash("sha256").update("e2e beacon").digest("hex");
    expect((await cli(["ceremony", "beacon", ceremony, "--beacon", beaconValue, "--iterations", "10"])).code).toBe(0);
    const verified = await cli(["ceremony", "verify", ceremony]);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain(`contribution #1 operator alice: ${JSON.parse(first.stdout).hash}`);
    expect(verified.stdout).toContain(`contribution #2 operator bob: ${JSON.parse(second.stdout).hash}`);
    expect(verified.stdout).toContain(`beacon ${beaconValue}, 2^10 iterations`);
  });

  test("a challenge issued before the activation names the shipped circuit", async () => {
    agent = await createIdentity();
    expect((await call(node, "POST", "/v1/agents", key, { agent_id: "shopper", identity_commitment: agent.identity_commitment })).status).toBe(201);
    const created = await call(node, "POST", "/v1/verify/challenge", key, { agent_id: "shopper", action: "purchase", context });
    expect(created.status).toBe(200);
    before = created.body;
    const list = await fetch(`${node.url}/v1/circuits`).then((r) => r.json());
    shippedId = list.active;
    expect(before.circuit_id).toBe(shippedId);
  });

  test("circuits add and activate; new challenges carry the new circuit_id within 5 s", async () => {
    const added = await cli(["circuits", "add", ceremony, "--json"]);
    expect(added.code).toBe(0);
    ({ id: newId, vk_hash: newVkHash } = JSON.parse(added.stdout));
    expect(JSON.parse(added.stdout).state).toBe("accepted");
    const activated = await cli(["circuits", "activate", newId]);
    expect(activated.code).toBe(0);
    const since = Date.now();
    let circuitId = "";
    while (circuitId !== newId && Date.now() - since < 8_000) {
      circuitId = (await call(node, "POST", "/v1/verify/challenge", key, { agent_id: "shopper", action: "purchase", context })).body.circuit_id;
      if (circuitId !== newId) await Bun.sleep(100);
    }
    expect(circuitId).toBe(newId);
    // The documented bound (5 s cache), plus the CLI process's exit and one request.
    expect(Date.now() - since).toBeLessThan(6_500);
  });

  test("a proof made with the old built-in zkey for a new challenge fails with proof_rejected", async () => {
    const created = (await call(node, "POST", "/v1/verify/challenge", key, { agent_id: "shopper", action: "purchase", context })).body;
    expect(created.circuit_id).toBe(newId);
    const proved = await proveCli(agent.secret, created);
    expect(proved.code).toBe(0);
    expect(JSON.parse(proved.stdout).circuit_id).toBe(shippedId);
    const verdict = await call(node, "POST", "/v1/verify/proof", key, { challenge_id: created.challenge_id, proof: JSON.parse(proved.stdout).proof });
    expect(verdict.status).toBe(400);
    expect(verdict.body.reason).toBe("proof_rejected");
  });

  test("the same statement proved with --circuit <URL>/v1/circuits/<new id> verifies, and its receipt names the new vk_hash", async () => {
    const created = (await call(node, "POST", "/v1/verify/challenge", key, { agent_id: "shopper", action: "purchase", context })).body;
    const proved = await proveCli(agent.secret, created, `${node.url}/v1/circuits/${newId}`);
    expect(proved.stderr).toBe("");
    expect(JSON.parse(proved.stdout).circuit_id).toBe(newId);
    const verdict = await call(node, "POST", "/v1/verify/proof", key, { challenge_id: created.challenge_id, proof: JSON.parse(proved.stdout).proof });
    expect(verdict.status).toBe(200);
    const claims = JSON.parse(Buffer.from(verdict.body.receipt.split(".")[1], "base64url").toString());
    expect(claims.circuit).toEqual({ id: newId, vk_hash: newVkHash });
  });

  test("the challenge issued before the activation still verifies with a proof from the old zkey", async () => {
    const proved = await proveCli(agent.secret, before);
    const verdict = await call(node, "POST", "/v1/verify/proof", key, { challenge_id: before.challenge_id, proof: JSON.parse(proved.stdout).proof });
    expect(verdict.status).toBe(200);
    expect(verdict.body.verified).toBe(true);
  });

  test("GET /v1/circuits/{id}/zkey hashes to the published SHA-256 and is the ceremony's zkey", async () => {
    const list = await fetch(`${node.url}/v1/circuits`).then((r) => r.json());
    const published = list.circuits.find((c: { id: string }) => c.id === newId);
    expect(published).toMatchObject({ state: "active", setup: "operator", vk_hash: newVkHash });
    expect(published.ceremony.contributions.map((c: { name: string }) => c.name)).toEqual(["operator alice", "operator bob"]);
    const zkey = new Uint8Array(await (await fetch(`${node.url}/v1/circuits/${newId}/zkey`)).arrayBuffer());
    expect(sha256(zkey)).toBe(published.zkey_sha256);
    expect(zkey).toEqual(new Uint8Array(readFileSync(join(ceremony, "agent_identity.zkey"))));
  });

  test("an artifact altered in the client's cache is refused", async () => {
    const cached = join(cacheDirOf(cacheDir, new URL(node.url).origin, newId), "zkey");
    const bytes = new Uint8Array(readFileSync(cached));
    bytes[bytes.length - 1]! ^= 0x01;
    writeFileSync(cached, bytes);
    const created = (await call(node, "POST", "/v1/verify/challenge", key, { agent_id: "shopper", action: "purchase", context })).body;
    const proved = await proveCli(agent.secret, created, `${node.url}/v1/circuits/${newId}`);
    expect(proved.code).toBe(1);
    expect(proved.stdout).toBe("");
    expect(proved.stderr).toContain("does not hash to the published SHA-256");
  });

  test("zkagent demo follows the challenge's circuit_id", async () => {
    const demo = await cli(["demo", "--url", node.url], { ZKAGENT_API_KEY: key, HOME: tmp });
    expect(demo.stderr).toBe("");
    expect(demo.code).toBe(0);
    expect(demo.stdout).toContain(`with circuit ${newId}`);
  });

  test("circuits list shows both versions; retiring the active one is refused", async () => {
    const listed = JSON.parse((await cli(["circuits", "list", "--json"])).stdout).circuits;
    expect(listed.map((c: { id: string; state: string }) => [c.id, c.state])).toEqual([
      [shippedId, "accepted"],
      [newId, "active"],
    ]);
    // The CLI lists the API's view: the immutable fields agree with GET /v1/circuits, field for field.
    // (The Semaphore v4 circuits of group challenges and the budget spend circuit are listed by the API too, not stored: `ceremony semaphore` shows the former.)
    const api = (await fetch(`${node.url}/v1/circuits`).then((r) => r.json())).circuits.filter(
      (c: { id: string; setup: string }) => c.setup !== "semaphore" && !c.id.startsWith("budget_spend-"),
    );
    const immutable = ({ id, setup, vk_hash, zkey_sha256, wasm_sha256, transcript_sha256, created_at, ceremony }: Record<string, unknown>) => ({
      id,
      setup,
      vk_hash,
      zkey_sha256,
      wasm_sha256,
      transcript_sha256,
      created_at,
      ceremony,
    });
    expect(listed.map(immutable)).toEqual(api.map(immutable));
    expect(listed[1].transcript_sha256).toMatch(/^[0-9a-f]{64}$/);
    const refused = await cli(["circuits", "retire", newId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("activate another first");
  });

  test("circuits add refuses a ceremony that does not verify", async () => {
    const zkey = new Uint8Array(readFileSync(join(ceremony, "agent_identity.zkey")));
    zkey[zkey.length - 1]! ^= 0x01;
    writeFileSync(join(ceremony, "agent_identity.zkey"), zkey);
    const refused = await cli(["circuits", "add", ceremony]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("does not verify");
  });
});
