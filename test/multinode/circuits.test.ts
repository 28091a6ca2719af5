// Two service processes on one PostgreSQL (each verifying on its own thread,
// VERIFIER_THREAD=auto): an activation made with the CLI on the shared
// database is followed by both nodes within the documented 5 s, and the
// second node verifies a proof made with the new circuit — its verifier
// thread loads the new key from the store.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { prove } from "../../src/agent";
import { CIRCUIT_REFRESH_MS } from "../../src/circuits/registry";
import { secondCeremony } from "../support/ceremony";
import { postgresTestUrl } from "../support/postgres";
import { identity } from "../support/proofs";
import { call, newKey, nodesOnPostgres } from "./nodes";

setDefaultTimeout(60_000);

const CLI = ["bun", new URL("../../src/cli/index.ts", import.meta.url).pathname];
const serverUrl = await postgresTestUrl();

describe("two nodes on one PostgreSQL follow a circuit activation", () => {
  const pg = nodesOnPostgres(serverUrl, 2);

  test("both nodes issue the new circuit within 5 s of `circuits activate`, and the second verifies with it", async () => {
    const { key } = await newKey(pg.database.url);
    const agent = await identity("multinode-circuits");
    const context = { amount: 5, currency: "EUR" };
    expect((await call(pg.nodes[0]!, "POST", "/v1/agents", key, { agent_id: "c-agent", identity_commitment: agent.identity_commitment })).status).toBe(201);
    const { dir, circuit } = await secondCeremony();
    const run = async (...args: string[]) => {
      const proc = Bun.spawn([...CLI, ...args], {
        env: { ...process.env, DATABASE_URL: pg.database.url, LOG_LEVEL: "silent" },
        stdout: "pipe",
        stderr: "pipe",
      });
      expect(await proc.exited).toBe(0);
    };
    await run("circuits", "add", dir);
    // Both nodes have read the circuits before the activation (a cached view that must expire).
    for (const node of pg.nodes) {
      expect((await call(node, "POST", "/v1/verify/challenge", key, { agent_id: "c-agent", action: "pay", context })).body.circuit_id).not.toBe(circuit.id);
    }
    await run("circuits", "activate", circuit.id);
    const since = Date.now();
    const followed: number[] = [];
    for (const node of pg.nodes) {
      while (Date.now() - since < 10_000) {
        const created = await call(node, "POST", "/v1/verify/challenge", key, { agent_id: "c-agent", action: "pay", context });
        if (created.body.circuit_id === circuit.id) break;
        await Bun.sleep(100);
      }
      followed.push(Date.now() - since);
    }
    for (const ms of followed) expect(ms).toBeLessThan(CIRCUIT_REFRESH_MS + 1_500);

    const created = (await call(pg.nodes[1]!, "POST", "/v1/verify/challenge", key, { agent_id: "c-agent", action: "pay", context })).body;
    expect(created.circuit_id).toBe(circuit.id);
    const proof = await prove({ secret: agent.secret, nonce: created.nonce, action: "pay", context, circuit });
    const verdict = await call(pg.nodes[1]!, "POST", "/v1/verify/proof", key, { challenge_id: created.challenge_id, proof });
    expect(verdict.status).toBe(200);
    expect(verdict.body.verified).toBe(true);
  });
});
