// The agent proves only the request it makes (issue 34): hostile sites,
// proxies and merchants on their own loopback ports around a real zkagent
// server and the example shop, and the agent through the SDK's fetch,
// `zkagent fetch` and `zkagent mcp`.
//
//   relay   a site the agent only visits answers 401 with a challenge it got
//           from the shop for its own POST /orders {"amount":"45"}, and
//           forwards whatever credentials come back;
//   rewrite a proxy that keeps Host (so the origin matches) and turns the
//           agent's amount 20.00 into 2000.00 on the way to the shop;
//   lying   a merchant whose group 401 shows amount 1.00 and carries the
//           message of the shop's challenge for 1000.00.
//
// Each attack placed an order on the code before this test (the agent proved
// whatever a 401 named); here the agent refuses naming the field, the
// challenge stays pending at the service, and the shop serves nothing. The
// honest paths — direct and behind a proxy that keeps Host — still order.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import canonicalize from "canonicalize";
import { type AgentFetchOptions, ChallengeError, createSemaphoreIdentity, fetch as agentFetch, readChallenge, type ZkAgentChallenge } from "../../src/agent";
import { formatAuth, parseAuth, toBase64url } from "../../src/http-auth/scheme";
import { boundRequest } from "../../src/http-auth/statement";
import { call } from "../multinode/nodes";
import { CLI, cli, startWorld, type World } from "./support";

// Proofs on a loaded two-core machine; group proofs above all.
setDefaultTimeout(120_000);

let world: World;
let alice: Awaited<ReturnType<World["agent"]>>;
const member = createSemaphoreIdentity();
let memberFile: string;
const json = { "content-type": "application/json" };
const order = (amount: string | number, currency = "EUR") => JSON.stringify({ amount, currency });

/** A Bun.serve on 127.0.0.1 that records what it did. */
interface Site {
  url: string;
  /** Challenge ids the site obtained from the shop. */
  challenges: string[];
  /** Credentials (a challenge_id with a proof) the site received and passed to the shop. */
  forwarded: number;
  /** Statuses the shop answered the site. */
  shop: number[];
  server: ReturnType<typeof Bun.serve>;
}

function site(handler: (request: Request, state: Site) => Promise<Response>): Site {
  const state = { challenges: [], forwarded: 0, shop: [] } as unknown as Site;
  state.server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request) => handler(request, state) });
  state.url = `http://127.0.0.1:${state.server.port}`;
  return state;
}

const claimOnly = () => new Response("{}", { status: 401, headers: { "www-authenticate": 'ZKAgent realm="elsewhere"', ...json } });
const credentialsOf = (request: Request) => {
  const header = request.headers.get("authorization");
  return header === null ? null : { header, params: parseAuth(header)?.[0] ?? {} };
};

/** The shop's answer to `body` with `authorization`, as a site passes it on. */
async function toShop(state: Site, init: { method?: string; headers: Record<string, string>; body: string; target?: string }) {
  const answer = await fetch(`${world.shopUrl}${init.target ?? "/orders"}`, { method: init.method ?? "POST", headers: init.headers, body: init.body });
  state.shop.push(answer.status);
  return answer;
}

const passOn = async (answer: Response) => {
  const headers = new Headers({ "content-type": answer.headers.get("content-type") ?? "application/json" });
  const www = answer.headers.get("www-authenticate");
  if (www) headers.set("www-authenticate", www);
  return new Response(await answer.arrayBuffer(), { status: answer.status, headers });
};

// The relay: whatever the agent asks, the shop gets the site's own order for 45 EUR, with the agent's claim, then its credentials.
const relay = () =>
  site(async (request, state) => {
    const credentials = credentialsOf(request);
    if (!credentials) return claimOnly();
    const answer = await toShop(state, { headers: { ...json, authorization: credentials.header }, body: order("45") });
    if (credentials.params.challenge_id === undefined) {
      const challenge = readChallenge(answer.clone());
      if (challenge && challenge !== "claim") state.challenges.push(challenge.challenge_id);
    } else state.forwarded++;
    return passOn(answer);
  });

// A proxy in front of the shop that keeps Host (the shop then binds the proxy's origin, which is where the agent sent its request).
const proxy = (rewrite: (body: string) => string) =>
  site(async (request, state) => {
    const url = new URL(request.url);
    const headers = new Headers(request.headers);
    const body = rewrite(await request.text());
    headers.delete("content-length");
    if (headers.get("authorization")?.includes("proof=")) state.forwarded++;
    const answer = await fetch(`${world.shopUrl}${url.pathname}${url.search}`, { method: request.method, headers, body });
    state.shop.push(answer.status);
    const challenge = readChallenge(answer.clone());
    if (challenge && challenge !== "claim") state.challenges.push(challenge.challenge_id);
    return passOn(answer);
  });

// The lying merchant: its group 401 shows the agent's own request and amount, and carries the message of the shop's challenge for 1000.00.
const lying = () =>
  site(async (request, state) => {
    const credentials = credentialsOf(request);
    if (!credentials) return claimOnly();
    const hidden = order("1000.00");
    const answer = await toShop(state, { headers: { ...json, authorization: credentials.header }, body: hidden });
    if (credentials.params.challenge_id !== undefined) {
      state.forwarded++;
      return passOn(answer);
    }
    const params = parseAuth(answer.headers.get("www-authenticate")!)![0]!;
    const real = await answer.json();
    state.challenges.push(params.challenge_id!);
    const shown = { ...JSON.parse(await request.text()), merchant: "example-shop", "@request": boundRequest(request.method, request.url) };
    const www = formatAuth({ ...params, context: toBase64url(canonicalize(shown)!) });
    return new Response(JSON.stringify({ ...real, challenge: { ...real.challenge, context: shown } }), {
      status: 401,
      headers: { "www-authenticate": www, ...json },
    });
  });

/** The challenge's status at the service: "pending" when nobody spent it. */
const statusOf = async (challengeId: string) => (await call(world.node, "GET", `/v1/verify/status/${challengeId}`, world.key)).body.status;

/** Nothing served: the site got no credentials to pass on, the shop answered it no 201, every challenge it obtained is still pending. */
async function expectNothingServed(state: Site) {
  expect(state.challenges.length).toBeGreaterThan(0);
  expect(state.forwarded).toBe(0);
  expect(state.shop).not.toContain(201);
  for (const id of state.challenges) expect(await statusOf(id)).toBe("pending");
}

const agentOptions = (extra: Partial<AgentFetchOptions> = {}): AgentFetchOptions => ({ identity: alice.identity, ...extra });
const memberOptions = (extra: Partial<AgentFetchOptions> = {}): AgentFetchOptions => ({
  identity: { group_id: "household", ...member },
  trustedServices: [world.node.url],
  allowInsecureLoopback: true, // the test's zkagent service is http on 127.0.0.1
  ...extra,
});

/** The ChallengeError a promise rejects with (fails the test when it resolves). */
async function refusal(promise: Promise<unknown>): Promise<ChallengeError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error) => ({ error }),
  );
  if (!("error" in outcome))
    throw new Error(`expected a refusal, got ${outcome.value instanceof Response ? `HTTP ${outcome.value.status}` : String(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(ChallengeError);
  return outcome.error as ChallengeError;
}

/** One MCP server as `zkagent mcp --identity file …flags`; the tool's text and isError. */
async function withMcp<T>(
  file: string,
  flags: string[],
  use: (tool: (name: string, args: Record<string, unknown>) => Promise<{ text: string; isError: boolean }>) => Promise<T>,
) {
  const transport = new StdioClientTransport({ command: CLI[0]!, args: [...CLI.slice(1), "mcp", "--identity", file, ...flags] });
  const client = new Client({ name: "zkagent-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    return await use(async (name, args) => {
      const result = await client.callTool({ name, arguments: args });
      return { text: (result.content as { text: string }[]).map((c) => c.text).join(""), isError: result.isError === true };
    });
  } finally {
    await client.close();
  }
}

const sites: Site[] = [];
const open = (s: Site) => (sites.push(s), s);

beforeAll(async () => {
  world = await startWorld("agent-checks", { ZKAGENT_GROUPS: "household" });
  alice = await world.agent("alice");
  expect((await call(world.node, "POST", "/v1/groups", world.key, { group_id: "household" })).status).toBe(201);
  const others = Array.from({ length: 4 }, () => createSemaphoreIdentity().identity_commitment);
  const added = await call(world.node, "POST", "/v1/groups/household/members", world.key, {
    identity_commitments: [others[0], member.identity_commitment, ...others.slice(1)],
  });
  expect(added.status).toBe(201);
  memberFile = join(world.tmp, "member.json");
  writeFileSync(memberFile, JSON.stringify({ ...member, group_id: "household" }), { mode: 0o600 });
}, 120_000);

afterAll(async () => {
  for (const s of sites) s.server.stop(true);
  await world?.stop();
});

describe("a relay: a site the agent only visits passes on the shop's challenge for its own order", () => {
  test("SDK, agent claim: GET /sample is refused naming the method; POST /orders with the same body naming the origin; nothing served", async () => {
    const host = open(relay());
    const visit = await refusal(agentFetch(`${host.url}/sample`, { zkagent: agentOptions() }));
    expect([visit.code, visit.field]).toEqual(["request_mismatch", "method"]);
    const same = await refusal(agentFetch(`${host.url}/orders`, { method: "POST", headers: json, body: order("45"), zkagent: agentOptions() }));
    expect([same.code, same.field]).toEqual(["request_mismatch", "origin"]);
    expect(same.message).toContain(world.shopUrl);
    expect(host.challenges).toHaveLength(2);
    await expectNothingServed(host);
  });

  test("SDK, group claim: refused before any member list is read or proof made; nothing served", async () => {
    const host = open(relay());
    const error = await refusal(agentFetch(`${host.url}/sample`, { zkagent: memberOptions() }));
    expect([error.code, error.field]).toEqual(["request_mismatch", "method"]);
    await expectNothingServed(host);
  });

  test("zkagent fetch, agent and group claims: exit 1, stderr names the field, nothing served", async () => {
    const host = open(relay());
    const asAgent = await cli(["fetch", `${host.url}/sample`, "--identity", alice.file]);
    expect(asAgent.code).toBe(1);
    expect(asAgent.stdout).toBe("");
    expect(asAgent.stderr).toStartWith("zkagent: refused to prove (request_mismatch, field method): the challenge is for method POST, the request is GET");
    const asMember = await cli(["fetch", `${host.url}/sample`, "--identity", memberFile, "--trust", world.node.url, "--allow-insecure-loopback"]);
    expect(asMember.code).toBe(1);
    expect(asMember.stderr).toContain("refused to prove (request_mismatch, field method)");
    expect(asAgent.stderr + asMember.stderr).not.toContain(alice.identity.secret);
    expect(asMember.stderr).not.toContain(member.private_key);
    await expectNothingServed(host);
  });

  test("MCP zkagent_fetch (agent and member): a tool error naming the field, no secret; nothing served", async () => {
    const host = open(relay());
    for (const [file, flags, secret] of [
      [alice.file, [], alice.identity.secret],
      [memberFile, ["--trust", world.node.url, "--allow-insecure-loopback"], member.private_key],
    ] as const) {
      const answer = await withMcp(file, [...flags], (tool) => tool("zkagent_fetch", { url: `${host.url}/sample` }));
      expect(answer.isError).toBe(true);
      expect(answer.text).toStartWith("zkagent: refused to prove (request_mismatch, field method)");
      expect(answer.text).not.toContain(secret);
    }
    await expectNothingServed(host);
  });

  test("MCP zkagent_prove takes the request the challenge is for: the relayed challenge is refused for the page visited and for another body; a bare challenge is refused by the schema", async () => {
    const host = open(relay());
    // What the site would hand a model: the 401 body it got for the agent's claim.
    const relayed = await fetch(`${host.url}/sample`, { headers: { authorization: 'ZKAgent agent="alice"' } });
    const { challenge } = await relayed.json();
    expect(challenge.challenge_id).toBe(host.challenges[0]);
    await withMcp(alice.file, [], async (tool) => {
      const visited = await tool("zkagent_prove", { url: `${host.url}/sample`, challenge });
      expect(visited.isError).toBe(true);
      expect(visited.text).toContain("(request_mismatch, field method)");
      const smaller = await tool("zkagent_prove", { url: `${world.shopUrl}/orders`, body: order("4.50"), challenge });
      expect(smaller.isError).toBe(true);
      expect(smaller.text).toContain("(request_mismatch, field amount)");
      const bare = await tool("zkagent_prove", { challenge });
      expect(bare.isError).toBe(true);
      expect(bare.text).toContain("url");
      for (const answer of [visited, smaller, bare]) expect(answer.text).not.toContain(alice.identity.secret);
    });
    expect(await statusOf(challenge.challenge_id)).toBe("pending");
  });

  test("MCP zkagent_prove as a group member: the relayed group challenge is refused for the page visited; nothing proved, no secret", async () => {
    const host = open(relay());
    const relayed = await fetch(`${host.url}/sample`, { headers: { authorization: 'ZKAgent group="household"' } });
    const { challenge } = await relayed.json();
    expect(challenge.group_id).toBe("household");
    const answer = await withMcp(memberFile, ["--trust", world.node.url, "--allow-insecure-loopback"], (tool) =>
      tool("zkagent_prove", { url: `${host.url}/sample`, challenge }),
    );
    expect(answer.isError).toBe(true);
    expect(answer.text).toStartWith("zkagent: refused to prove (request_mismatch, field method)");
    expect(answer.text).not.toContain(member.private_key);
    await expectNothingServed(host);
  });
});

describe("a proxy that rewrites the body (20.00 sent, 2000.00 forwarded)", () => {
  const inflate = (body: string) => body.replace('"20.00"', '"2000.00"');

  test("SDK (agent and member), zkagent fetch and MCP refuse naming amount; the shop serves nothing", async () => {
    const host = open(proxy(inflate));
    const url = `${host.url}/orders`;
    for (const options of [agentOptions(), memberOptions()]) {
      const error = await refusal(agentFetch(url, { method: "POST", headers: json, body: order("20.00"), zkagent: options }));
      expect([error.code, error.field]).toEqual(["request_mismatch", "amount"]);
      expect(error.message).toContain('"2000.00"');
    }
    const viaCli = await cli(["fetch", url, "-d", order("20.00"), "--identity", alice.file]);
    expect(viaCli.code).toBe(1);
    expect(viaCli.stderr).toContain('(request_mismatch, field amount): the challenge binds amount = "2000.00", the request\'s body has "20.00"');
    const viaMcp = await withMcp(alice.file, [], (tool) => tool("zkagent_fetch", { url, method: "POST", body: order("20.00") }));
    expect(viaMcp.isError).toBe(true);
    expect(viaMcp.text).toContain("(request_mismatch, field amount)");
    expect(host.challenges).toHaveLength(4);
    await expectNothingServed(host);
  });
});

describe("a lying group 401: shown 1.00, bound 1000.00", () => {
  test("the SDK, zkagent fetch and MCP recompute the message and refuse (message_mismatch); approve never sees it; nothing served", async () => {
    const host = open(lying());
    const url = `${host.url}/orders`;
    let approved = 0;
    const error = await refusal(
      agentFetch(url, { method: "POST", headers: json, body: order("1.00"), zkagent: memberOptions({ approve: () => (approved++, true) }) }),
    );
    expect([error.code, error.field]).toEqual(["message_mismatch", "message"]);
    expect(approved).toBe(0);
    const viaCli = await cli(["fetch", url, "-d", order("1.00"), "--identity", memberFile, "--trust", world.node.url, "--allow-insecure-loopback"]);
    expect(viaCli.code).toBe(1);
    expect(viaCli.stderr).toContain("refused to prove (message_mismatch, field message)");
    const viaMcp = await withMcp(memberFile, ["--trust", world.node.url, "--allow-insecure-loopback"], (tool) =>
      tool("zkagent_fetch", { url, method: "POST", body: order("1.00") }),
    );
    expect(viaMcp.isError).toBe(true);
    expect(viaMcp.text).toContain("(message_mismatch, field message)");
    // zkagent_prove, given the lying 401's challenge with the very request it shows: the same refusal.
    const shown = await fetch(url, { method: "POST", headers: { ...json, authorization: 'ZKAgent group="household"' }, body: order("1.00") });
    const { challenge } = await shown.json();
    expect(challenge.context.amount).toBe("1.00");
    const viaProve = await withMcp(memberFile, ["--trust", world.node.url, "--allow-insecure-loopback"], (tool) =>
      tool("zkagent_prove", { url, body: order("1.00"), challenge }),
    );
    expect(viaProve.isError).toBe(true);
    expect(viaProve.text).toContain("(message_mismatch, field message)");
    expect(host.challenges).toHaveLength(4);
    await expectNothingServed(host);
  });

  test("zkagent prove --group-challenge: the lying 401's challenge is refused; without action it is a usage error", async () => {
    const host = open(lying());
    const answer = await fetch(`${host.url}/orders`, { method: "POST", headers: { ...json, authorization: 'ZKAgent group="household"' }, body: order("1.00") });
    const { challenge } = await answer.json();
    const file = join(world.tmp, "lying-challenge.json");
    writeFileSync(file, JSON.stringify(challenge));
    const prove = (path: string, extra: string[] = []) =>
      cli(["prove", "--group-challenge", path, "--identity", memberFile, "--service", world.node.url, "--allow-insecure-loopback", ...extra]);
    const lied = await prove(file);
    expect(lied.code).toBe(1);
    expect(lied.stdout).toBe("");
    expect(lied.stderr).toContain("refused to prove (message_mismatch, field message)");
    const { action: _action, context: _context, ...bare } = challenge;
    const bareFile = join(world.tmp, "bare-challenge.json");
    writeFileSync(bareFile, JSON.stringify(bare));
    const usage = await prove(bareFile);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('no "action" and no --action');
    // The context the 401 showed, given on the command line: the same refusal.
    const flags = await prove(bareFile, ["--action", "purchase", "--context", JSON.stringify(challenge.context)]);
    expect(flags.code).toBe(1);
    expect(flags.stderr).toContain("message_mismatch");
    await expectNothingServed(host);
  });
});

describe("the agent's own limits", () => {
  test("maxAmount and action: above the maximum, another currency, another action, and no amount are refused before proving", async () => {
    const send = (body: string, extra: Partial<AgentFetchOptions>) =>
      agentFetch(`${world.shopUrl}/orders`, { method: "POST", headers: json, body, zkagent: agentOptions(extra) });
    const max = { amount: "50.00", currency: "EUR" };
    const above = await refusal(send(order("50.01"), { maxAmount: max }));
    expect([above.code, above.field]).toEqual(["limit", "amount"]);
    const number = await refusal(send(order(50.5), { maxAmount: max }));
    expect([number.code, number.field]).toEqual(["limit", "amount"]);
    const currency = await refusal(send(order("5", "USD"), { maxAmount: max }));
    expect([currency.code, currency.field]).toEqual(["limit", "currency"]);
    const action = await refusal(send(order("5"), { action: "refund" }));
    expect([action.code, action.field]).toEqual(["request_mismatch", "action"]);
    // At the maximum exactly, in another spelling: served.
    const within = await send(order(50), { maxAmount: max, action: "purchase" });
    expect(within.status).toBe(201);
    // zkagent fetch --max-amount: the same refusal, exit 1; a malformed limit is a usage error.
    const viaCli = await cli(["fetch", `${world.shopUrl}/orders`, "-d", order("75"), "--identity", alice.file, "--max-amount", "50", "--currency", "EUR"]);
    expect(viaCli.code).toBe(1);
    expect(viaCli.stderr).toContain("refused to prove (limit, field amount): the challenge's amount 75 is above the agent's maximum 50 EUR");
    const alone = await cli(["fetch", `${world.shopUrl}/orders`, "--identity", alice.file, "--max-amount", "50"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("--max-amount and --currency go together");
    // MCP --max-amount and --action: the operator's limits bind every call, a call cannot widen them.
    const [viaMcp, otherAction] = await withMcp(alice.file, ["--max-amount", "50", "--currency", "EUR", "--action", "purchase"], async (tool) => [
      await tool("zkagent_fetch", { url: `${world.shopUrl}/orders`, body: order("75") }),
      await tool("zkagent_fetch", { url: `${world.shopUrl}/orders`, body: order("5"), action: "refund" }),
    ]);
    expect(viaMcp!.isError).toBe(true);
    expect(viaMcp!.text).toContain("(limit, field amount)");
    expect(otherAction!.isError).toBe(true);
    expect(otherAction!.text).toContain('this server proves only the action "purchase" (--action), not "refund"');
  });

  test("a challenge naming a currency but no amount while a maximum is set is refused, saying why", async () => {
    // A merchant whose context speaks of money without saying how much (a currency, no amount), re-served as this site's own;
    // one binding neither is no payment and passes (test/agent/checks.test.ts).
    const host = open(
      site(async (request) => {
        const shown = { merchant: "elsewhere", currency: "EUR", "@request": boundRequest(request.method, request.url) };
        const www = formatAuth({
          realm: "elsewhere",
          challenge_id: "ch_none",
          nonce: "ab".repeat(31),
          action: "purchase",
          context: toBase64url(canonicalize(shown)!),
        });
        return new Response("{}", { status: 401, headers: { "www-authenticate": www } });
      }),
    );
    const error = await refusal(agentFetch(`${host.url}/pay`, { zkagent: agentOptions({ maxAmount: { amount: "10", currency: "EUR" }, announce: true }) }));
    expect([error.code, error.field]).toEqual(["limit", "amount"]);
    expect(error.message).toContain("names a currency but no amount");
  });
});

describe("the honest paths still order", () => {
  test("behind a proxy that keeps Host: the SDK as an agent and as a member, zkagent fetch and MCP (which says what it proved)", async () => {
    const host = open(proxy((body) => body));
    const url = `${host.url}/orders`;
    const seen: ZkAgentChallenge[] = [];
    const asAgent = await agentFetch(url, {
      method: "POST",
      headers: json,
      body: order("20.00"),
      zkagent: agentOptions({ action: "purchase", maxAmount: { amount: "20", currency: "EUR" }, onProof: (c) => seen.push(c) }),
    });
    expect(asAgent.status).toBe(201);
    expect(await asAgent.json()).toMatchObject({ agent_id: "alice", amount: "20.00" });
    expect(seen[0]!.context["@request"]).toEqual({ method: "POST", origin: host.url, target: "/orders" });
    const asMember = await agentFetch(url, { method: "POST", headers: json, body: order("3"), zkagent: memberOptions({ action: "purchase" }) });
    expect(asMember.status).toBe(201);
    expect((await asMember.json()).agent_id).toMatch(/^[0-9]+$/);
    const viaCli = await cli([
      "fetch",
      url,
      "-d",
      order("7"),
      "--identity",
      alice.file,
      "--action",
      "purchase",
      "--max-amount",
      "7.00",
      "--currency",
      "EUR",
      "--timeout",
      "60",
    ]);
    expect([viaCli.code, viaCli.stderr]).toEqual([0, ""]);
    expect(JSON.parse(viaCli.stdout)).toMatchObject({ agent_id: "alice", amount: "7" });
    const viaMcp = await withMcp(alice.file, [], (tool) => tool("zkagent_fetch", { url, body: order("9"), action: "purchase" }));
    expect(viaMcp.isError).toBe(false);
    const answer = JSON.parse(viaMcp.text);
    expect(answer.status).toBe(201);
    expect(answer.proved).toMatchObject({ action: "purchase", context: { amount: "9", currency: "EUR", "@request": { origin: host.url } } });
    expect(answer.proved.challenge_id).toBeString();
    expect(host.forwarded).toBe(4);
    expect(host.shop.filter((status) => status === 201)).toHaveLength(4);
  });

  test("directly: zkagent fetch as a member, and MCP zkagent_prove for the request the challenge is for, whose credentials place the order", async () => {
    const viaCli = await cli([
      "fetch",
      `${world.shopUrl}/orders`,
      "-d",
      order("2"),
      "--identity",
      memberFile,
      "--trust",
      world.node.url,
      "--allow-insecure-loopback",
    ]);
    expect([viaCli.code, viaCli.stderr]).toEqual([0, ""]);
    const body = order("4");
    const first = await fetch(`${world.shopUrl}/orders`, { method: "POST", headers: { ...json, authorization: 'ZKAgent agent="alice"' }, body });
    const { challenge } = await first.json();
    const answer = await withMcp(alice.file, [], (tool) => tool("zkagent_prove", { url: `${world.shopUrl}/orders`, method: "POST", body, challenge }));
    expect(answer.isError).toBe(false);
    const { authorization, proved } = JSON.parse(answer.text);
    expect(proved).toEqual({ challenge_id: challenge.challenge_id, action: "purchase", context: challenge.context });
    const placed = await fetch(`${world.shopUrl}/orders`, { method: "POST", headers: { ...json, authorization }, body });
    expect(placed.status).toBe(201);
  });

  test("zkagent prove --group-challenge proves an honest 401's challenge, whose credentials place the order", async () => {
    const body = order("6");
    const first = await fetch(`${world.shopUrl}/orders`, { method: "POST", headers: { ...json, authorization: 'ZKAgent group="household"' }, body });
    const { challenge } = await first.json();
    const file = join(world.tmp, "honest-challenge.json");
    writeFileSync(file, JSON.stringify(challenge));
    const proved = await cli([
      "prove",
      "--group-challenge",
      file,
      "--identity",
      memberFile,
      "--origin",
      new URL(world.shopUrl).origin,
      "--service",
      world.node.url,
      "--allow-insecure-loopback",
    ]);
    expect([proved.code, proved.stderr]).toEqual([0, ""]);
    const authorization = formatAuth({ group: "household", challenge_id: challenge.challenge_id, proof: toBase64url(proved.stdout.trim()) });
    const placed = await fetch(`${world.shopUrl}/orders`, { method: "POST", headers: { ...json, authorization }, body });
    expect(placed.status).toBe(201);
  });
});
