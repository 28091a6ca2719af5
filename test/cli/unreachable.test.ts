// Which failures the CLI reports as "cannot reach <url>" (exit 3): network
// failures of Bun's and Node's fetch, directly or as the cause of an SDK error;
// never an HTTP answer, a refusal of the SDK's own, or a database error that
// names no URL.
import { describe, expect, test } from "bun:test";
import { fetchGroupMembers, GroupProofError } from "../../src/agent";
import { reach, UnreachableError, unreachable } from "../../src/cli/unreachable";

describe("unreachable", () => {
  test("Bun's fetch: a refused connection names the URL it carries, in words", async () => {
    const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const url = `http://127.0.0.1:${probe.port}/v1/groups/g/members`;
    probe.stop(true);
    const error = await fetch(url).catch((e: unknown) => e);
    expect(unreachable(error)).toEqual(new UnreachableError(url, "connection refused (is the server running on that port?)"));
    expect(unreachable(error)?.message).toBe(`cannot reach ${url}: connection refused (is the server running on that port?)`);
    // reach() throws it ready-made.
    expect(await reach(url).catch((e: unknown) => e)).toBeInstanceOf(UnreachableError);
  });

  test("an SDK error whose cause is the network failure (the group members' download) is one too", async () => {
    const network = Object.assign(new TypeError("getaddrinfo ENOTFOUND zk.invalid"), { code: "ENOTFOUND", path: "https://zk.invalid/v1/groups/g/members" });
    const wrapped = Object.assign(new GroupProofError("members", "GET https://zk.invalid/v1/groups/g/members: getaddrinfo ENOTFOUND zk.invalid"), {
      cause: network,
    });
    expect(unreachable(wrapped)).toEqual(new UnreachableError("https://zk.invalid/v1/groups/g/members", "host not found"));
  });

  test("the SDK's members download keeps the network failure as its error's cause, so prove --group-challenge exits 3", async () => {
    const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const service = `http://127.0.0.1:${probe.port}`;
    probe.stop(true);
    const error = await fetchGroupMembers(service, "g", { allowInsecureLoopback: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GroupProofError);
    expect(unreachable(error)?.url).toBe(`${service}/v1/groups/g/members`);
  });

  test("Node's fetch (undici: TypeError 'fetch failed', the code in its cause, no URL) takes the URL the caller tried", () => {
    const undici = new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) });
    expect(unreachable(undici, "http://127.0.0.1:9/orders")?.url).toBe("http://127.0.0.1:9/orders");
    // Without a URL to name, it is not reported as one (a database connection's error says where itself).
    expect(unreachable(undici)).toBeNull();
  });

  test("a timeout is 'no answer in time'", () => {
    const timeout = new DOMException("The operation timed out.", "TimeoutError");
    expect(unreachable(timeout, "https://shop.example/orders")).toEqual(new UnreachableError("https://shop.example/orders", "no answer in time"));
  });

  test("anything else is not: an SDK refusal, a plain error, a non-error", () => {
    expect(unreachable(new GroupProofError("not_member", "not a member"), "https://x.example")).toBeNull();
    expect(unreachable(new Error("HTTP 500"), "https://x.example")).toBeNull();
    expect(unreachable("ECONNREFUSED", "https://x.example")).toBeNull();
    expect(unreachable(Object.assign(new Error("x"), { code: "EACCES" }), "https://x.example")).toBeNull();
  });
});
