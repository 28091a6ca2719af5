// Receipts across three real service processes on one PostgreSQL: every node
// signs with the one active key of the shared store, and after
// `zkagent receipts rotate` (a separate process, against the database) every
// node signs with the new key within the documented refresh interval.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createPublicKey, verify } from "node:crypto";
import { KEY_REFRESH_MS } from "../../src/receipts/signer";
import { postgresTestUrl } from "../support/postgres";
import { identity, proofFor, SAMPLE } from "../support/proofs";
import { call, newKey, type Node, nodesOnPostgres } from "./nodes";

// Every test here starts processes; on a loaded two-core machine (CI, or
// several developers at once) that passed bun's 5 s default with nothing wrong.
setDefaultTimeout(30_000);

const serverUrl = await postgresTestUrl();
const CLI = new URL("../../src/cli/index.ts", import.meta.url).pathname;
/** Beyond the refresh interval: one request round on a loaded 2-core machine. */
const SLACK_MS = 2_000;

describe("receipts on three nodes sharing PostgreSQL", () => {
  const pg = nodesOnPostgres(serverUrl, 3);
  let key: string;
  let proof: string;

  beforeAll(async () => {
    ({ key } = await newKey(pg.database.url));
    const agent = await identity("multinode-receipts");
    expect((await call(pg.nodes[0]!, "POST", "/v1/agents", key, { agent_id: "agent-r", identity_commitment: agent.identity_commitment })).status).toBe(201);
    // A real proof for another nonce: each submission runs the full
    // verification and is decided failed, with a receipt, without proving anew.
    proof = await proofFor({ secret: agent.secret, ...SAMPLE });
  });

  /** One decision on `node`; its receipt. */
  async function receiptFrom(node: Node): Promise<string> {
    const created = await call(node, "POST", "/v1/verify/challenge", key, { agent_id: "agent-r", action: "purchase" });
    expect(created.status).toBe(200);
    const decided = await call(node, "POST", "/v1/verify/proof", key, { challenge_id: created.body.challenge_id, proof });
    expect(decided.body.error).toBe("Proof verification failed");
    return decided.body.receipt;
  }
  const kidOf = (receipt: string) => JSON.parse(Buffer.from(receipt.split(".")[0]!, "base64url").toString()).kid as string;

  async function verifiesOn(node: Node, receipt: string): Promise<boolean> {
    const jwks = await fetch(`${node.url}/.well-known/jwks.json`).then((r) => r.json() as Promise<{ keys: Record<string, string>[] }>);
    const jwk = jwks.keys.find((k) => k.kid === kidOf(receipt));
    if (!jwk) return false;
    const [h, p, s] = receipt.split(".") as [string, string, string];
    return verify(
      null,
      Buffer.from(`${h}.${p}`),
      createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x } as any, format: "jwk" }),
      Buffer.from(s, "base64url"),
    );
  }

  test("every node signs with the same kid, and each node's JWKS verifies every node's receipts", async () => {
    const receipts = await Promise.all(pg.nodes.map(receiptFrom));
    expect(new Set(receipts.map(kidOf)).size).toBe(1);
    expect((await pg.store.listSigningKeys()).filter((k) => k.state === "active").map((k) => k.kid)).toEqual([kidOf(receipts[0]!)]);
    for (const node of pg.nodes) for (const receipt of receipts) expect(await verifiesOn(node, receipt)).toBe(true);
  });

  test(`after rotate on the command line every node signs with the new key within ${KEY_REFRESH_MS} ms`, async () => {
    const before = await receiptFrom(pg.nodes[0]!);
    const rotate = Bun.spawn([process.execPath, CLI, "receipts", "rotate", "--json"], {
      env: { ...process.env, DATABASE_URL: pg.database.url, LOG_LEVEL: "silent" },
      stdout: "pipe",
      stderr: "inherit",
    });
    const [out, code] = await Promise.all([new Response(rotate.stdout).text(), rotate.exited]);
    expect(code).toBe(0);
    const rotatedAt = Date.now();
    const { active, previous } = JSON.parse(out);
    expect(previous).toBe(kidOf(before));

    const pickedUpAfter = await Promise.all(
      pg.nodes.map(async (node) => {
        while (Date.now() - rotatedAt < KEY_REFRESH_MS + SLACK_MS) {
          if (kidOf(await receiptFrom(node)) === active) return Date.now() - rotatedAt;
          await Bun.sleep(100);
        }
        return Infinity;
      }),
    );
    console.log(`rotation picked up after ${pickedUpAfter.map((ms) => `${ms} ms`).join(", ")} (bound ${KEY_REFRESH_MS} ms + ${SLACK_MS} ms slack)`);
    for (const ms of pickedUpAfter) expect(ms).toBeLessThanOrEqual(KEY_REFRESH_MS + SLACK_MS);
    // From then on only the new key signs, and the old receipt still verifies everywhere.
    for (const node of pg.nodes) {
      expect(kidOf(await receiptFrom(node))).toBe(active);
      expect(await verifiesOn(node, before)).toBe(true);
    }
  });
});
