// Private verification over HTTP, end to end: a real zkagent server, the
// example shop, and an agent that claims a group (issue 24 + 26). The agent's
// fetch reads the members from the trusted zkagent service, proves with the
// SDK's own Semaphore prover, and the shop serves the order to a pseudonym:
// neither the shop nor its handler learns which member placed it.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSemaphoreIdentity, fetch as agentFetch } from "../../src/agent";
import { call, newKey } from "../multinode/nodes";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI, cli, startWorld, type World } from "./support";

setDefaultTimeout(60_000);

let world: World;
const member = createSemaphoreIdentity();
const outsider = createSemaphoreIdentity();
const json = { "content-type": "application/json" };
const order = (amount: number) => JSON.stringify({ amount, currency: "EUR" });
const payload = (jws: string) => JSON.parse(Buffer.from(jws.split(".")[1]!, "base64url").toString("utf8"));

beforeAll(async () => {
  // The shop admits the members of "household" only (ZKAGENT_GROUPS).
  world = await startWorld("http-auth-group", { ZKAGENT_GROUPS: "household" });
  expect((await call(world.node, "POST", "/v1/groups", world.key, { group_id: "household" })).status).toBe(201);
  const others = Array.from({ length: 4 }, () => createSemaphoreIdentity().identity_commitment);
  const added = await call(world.node, "POST", "/v1/groups/household/members", world.key, {
    identity_commitments: [others[0], member.identity_commitment, ...others.slice(1)],
  });
  expect(added.status).toBe(201);
}, 90_000);

afterAll(async () => {
  await world?.stop();
});

const orderAs = (identity: { private_key: string }, amount: number, trusted = true) =>
  agentFetch(`${world.shopUrl}/orders`, {
    method: "POST",
    headers: json,
    body: order(amount),
    zkagent: {
      identity: { group_id: "household", ...identity },
      trustedServices: trusted ? [world.node.url] : [],
      allowInsecureLoopback: true, // the test's zkagent service is http on 127.0.0.1
      fetch: (request) => world.observe(request),
    },
  });

describe("a group claim over HTTP", () => {
  test("a member's order is served to its pseudonym, the same one on every order at this shop; the receipt names no member", async () => {
    const first = await orderAs(member, 12);
    expect(first.status).toBe(201);
    const placed = await first.json();
    const claims = payload(placed.receipt);
    expect(claims.sub).toBe(placed.agent_id);
    expect(placed.agent_id).toMatch(/^[0-9]+$/); // the nullifier, not a member's commitment
    expect(placed.agent_id).not.toBe(member.identity_commitment);
    expect(JSON.stringify(claims)).not.toContain(member.identity_commitment);
    expect(claims).toMatchObject({ status: "verified", action: "purchase" });

    const second = await orderAs(member, 3);
    expect(second.status).toBe(201);
    const again = await second.json();
    expect(again.agent_id).toBe(placed.agent_id);
    expect(again).toMatchObject({ scheme: "group", group_id: "household" });
  });

  test("a group the shop did not list — made by another key, with the attacker's own identity enrolled — is refused (403) before any challenge is created", async () => {
    const attacker = await newKey(world.db);
    const rogue = createSemaphoreIdentity();
    expect((await call(world.node, "POST", "/v1/groups", attacker.key, { group_id: "rogue" })).status).toBe(201);
    const enrolled = await call(world.node, "POST", "/v1/groups/rogue/members", attacker.key, {
      identity_commitments: [rogue.identity_commitment, ...Array.from({ length: 3 }, () => createSemaphoreIdentity().identity_commitment)],
    });
    expect(enrolled.status).toBe(201);
    const challenges = () => {
      const db = new Database(world.db, { readonly: true });
      try {
        return (db.query("SELECT count(*) AS n FROM challenges").get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    const before = challenges();
    const response = await agentFetch(`${world.shopUrl}/orders`, {
      method: "POST",
      headers: json,
      body: order(99_999),
      zkagent: { identity: { group_id: "rogue", ...rogue }, trustedServices: [world.node.url], allowInsecureLoopback: true, fetch: world.observe },
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      error: "Group not accepted",
      reason: "group_not_accepted",
      message: 'members of group "rogue" are not accepted here',
    });
    expect(challenges()).toBe(before);
  });

  test("zkagent fetch places a group order from the command line with --trust", async () => {
    const file = join(world.tmp, "member.json");
    writeFileSync(file, JSON.stringify({ ...member, group_id: "household" }), { mode: 0o600 });
    const result = await cli([
      "fetch",
      `${world.shopUrl}/orders`,
      "-X",
      "POST",
      "-d",
      order(7),
      "--identity",
      file,
      "--trust",
      world.node.url,
      "--allow-insecure-loopback",
    ]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ amount: 7, currency: "EUR" });
    expect(result.stdout + result.stderr).not.toContain(member.private_key);
  });

  test("zkagent mcp places a group order through zkagent_fetch with --trust and --allow-insecure-loopback; without the flag it reads nothing over http", async () => {
    const file = join(world.tmp, "member-mcp.json");
    writeFileSync(file, JSON.stringify({ ...member, group_id: "household" }), { mode: 0o600 });
    const orderThroughMcp = async (flags: string[]) => {
      const transport = new StdioClientTransport({ command: CLI[0]!, args: [...CLI.slice(1), "mcp", "--identity", file, "--trust", world.node.url, ...flags] });
      const client = new Client({ name: "zkagent-test", version: "1.0.0" });
      await client.connect(transport);
      try {
        const result = await client.callTool({
          name: "zkagent_fetch",
          arguments: { url: `${world.shopUrl}/orders`, method: "POST", headers: json, body: order(9) },
        });
        return { text: (result.content as { text: string }[]).map((c) => c.text).join(""), isError: result.isError === true };
      } finally {
        await client.close();
      }
    };
    const placed = await orderThroughMcp(["--allow-insecure-loopback"]);
    expect(placed.isError).toBe(false);
    expect(JSON.parse(placed.text)).toMatchObject({ status: 201 });
    expect(JSON.parse(JSON.parse(placed.text).body)).toMatchObject({ amount: 9, currency: "EUR" });
    expect(placed.text).not.toContain(member.private_key);
    const refused = await orderThroughMcp([]);
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/https|insecure|loopback/i);
    expect(refused.text).not.toContain(member.private_key);
  });

  test("an identity outside the group is refused by the agent itself, before any proof is sent", async () => {
    await expect(orderAs(outsider, 5)).rejects.toThrow(/not.*member|member.*not/i);
  });

  test("without a trusted service the agent reads no member list and proves nothing", async () => {
    await expect(orderAs(member, 5, false)).rejects.toThrow(/trusted zkagent service/);
  });

  test("no answer was a 5xx", () => {
    expect(world.statuses.filter((status) => status >= 500)).toEqual([]);
  });
});
