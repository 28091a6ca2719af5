// Every request the agent makes has a timeout (issue 34): to the merchant
// (the SDK's fetch, `zkagent fetch`), and to the zkagent service for a
// circuit or a group's members. Against servers on real loopback ports that
// accept the request and never answer, or answer the headers and never the
// body; each timeout is an error naming the URL, well before the default 30 s.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ChallengeError,
  CircuitSourceError,
  createIdentity,
  createSemaphoreIdentity,
  DEFAULT_TIMEOUT_MS,
  fetchGroupMembers,
  GroupProofError,
  loadCircuit,
  zkagentFetch,
} from "../../src/agent";
import { groupMessageOf, originScope } from "../../src/groups/derivation";
import { formatAuth, toBase64url } from "../../src/http-auth/scheme";
import { cli } from "../http-auth/support";

let dir: string;
let silent: ReturnType<typeof Bun.serve>;
let stalling: ReturnType<typeof Bun.serve>;
let silentUrl: string;
let stallingUrl: string;
const never = new Promise<Response>(() => {});

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "zkagent-timeouts-"));
  // Takes the request, answers nothing.
  silent = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => never });
  // Answers 200 and the first bytes of a body that never ends.
  stalling = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () =>
      new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"members": ['));
          },
        }),
        { headers: { "content-type": "application/json" } },
      ),
  });
  silentUrl = `http://127.0.0.1:${silent.port}`;
  stallingUrl = `http://127.0.0.1:${stalling.port}`;
});

afterAll(() => {
  silent.stop(true);
  stalling.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

describe("the merchant", () => {
  test("the SDK's fetch: ChallengeError timeout naming the URL after timeoutMs; the default is 30 s", async () => {
    expect(DEFAULT_TIMEOUT_MS).toBe(30_000);
    const identity = { ...(await createIdentity()), agent_id: "bot" };
    const started = performance.now();
    const error = await zkagentFetch({ identity, timeoutMs: 300 })(`${silentUrl}/orders`).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(ChallengeError);
    expect((error as ChallengeError).code).toBe("timeout");
    expect((error as ChallengeError).url).toBe(`${silentUrl}/orders`);
    expect((error as ChallengeError).message).toBe(`GET ${silentUrl}/orders: no answer within 0.3 s`);
    expect(() => zkagentFetch({ identity, timeoutMs: 0 })).toThrow(/timeoutMs/);
  });

  test("zkagent fetch --timeout: exit 3 (out of reach) naming the URL, for no answer and for a body that stops; a bad value is a usage error", async () => {
    const file = join(dir, "bot.json");
    writeFileSync(file, JSON.stringify({ ...(await createIdentity()), agent_id: "bot" }));
    const started = performance.now();
    const silentRun = await cli(["fetch", `${silentUrl}/orders`, "--identity", file, "--timeout", "0.5"]);
    expect(performance.now() - started).toBeLessThan(15_000);
    expect([silentRun.code, silentRun.stdout]).toEqual([3, ""]);
    expect(silentRun.stderr).toBe(`zkagent: GET ${silentUrl}/orders: no answer within 0.5 s\n`);
    const stallingRun = await cli(["fetch", `${stallingUrl}/page`, "--identity", file, "--timeout", "0.5"]);
    expect([stallingRun.code, stallingRun.stderr]).toEqual([3, `zkagent: cannot reach ${stallingUrl}/page: no answer in time\n`]);
    const bad = await cli(["fetch", `${silentUrl}/orders`, "--identity", file, "--timeout", "0"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--timeout must be a number of seconds above 0");
  });
});

describe("the zkagent service", () => {
  test("a group's members: no answer, and a page that stops, each a GroupProofError naming the URL", async () => {
    const silentError = await fetchGroupMembers(silentUrl, "g", { timeoutMs: 300, allowInsecureLoopback: true }).catch((e: unknown) => e);
    expect(silentError).toBeInstanceOf(GroupProofError);
    expect((silentError as Error).message).toBe(`GET ${silentUrl}/v1/groups/g/members: no answer within 0.3 s`);
    const stallingError = await fetchGroupMembers(stallingUrl, "g", { timeoutMs: 300, allowInsecureLoopback: true }).catch((e: unknown) => e);
    expect(stallingError).toBeInstanceOf(GroupProofError);
    expect((stallingError as Error).message).toBe(`GET ${stallingUrl}/v1/groups/g/members: the answer did not arrive in time`);
  });

  test("a circuit: CircuitSourceError naming the URL", async () => {
    const error = await loadCircuit(`${silentUrl}/v1/circuits/agent_identity-0123456789abcdef`, {
      timeoutMs: 300,
      allowInsecureLoopback: true,
      cacheDir: join(dir, "circuits"),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CircuitSourceError);
    expect((error as Error).message).toBe(`GET ${silentUrl}/v1/circuits: no answer within 0.3 s`);
  });

  test("the SDK's fetch passes timeoutMs on: a group challenge whose service never answers the member list fails in time, naming it", async () => {
    const member = createSemaphoreIdentity();
    const nonce = "ab".repeat(31);
    const merchant = (request: Request) => {
      const context = { "@request": { method: "GET", origin: new URL(request.url).origin, target: "/orders" } };
      const www = formatAuth({
        realm: "r",
        challenge_id: "ch_1",
        nonce,
        action: "purchase",
        context: toBase64url(JSON.stringify(context)),
        group_id: "g",
        merkle_tree_root: "1",
        merkle_tree_depth: "1",
        message: groupMessageOf({ nonce, action: "purchase", context }).toString(),
        // The origin's scope: the agent checks it before it reads anything (issue 37).
        scope: originScope(new URL(request.url).origin, "g").toString(),
        circuit_id: "semaphore-1",
        circuit: `${silentUrl}/v1/circuits/semaphore-1`,
      });
      return new Response("{}", { status: 401, headers: { "www-authenticate": www } });
    };
    const started = performance.now();
    const error = await zkagentFetch({
      identity: { group_id: "g", private_key: member.private_key },
      announce: true,
      trustedServices: [silentUrl],
      allowInsecureLoopback: true,
      timeoutMs: 300,
      fetch: merchant,
    })("http://shop.test/orders").catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(GroupProofError);
    // The agent syncs: its first read asks for every change since version 0 (issue 32).
    expect((error as Error).message).toBe(`GET ${silentUrl}/v1/groups/g/members?since=0: no answer within 0.3 s`);
  });
});
