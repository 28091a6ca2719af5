// One attempt on the wire: it connects to the address the policy checked
// (whatever the name resolves to now) with the URL's host in the Host
// header, follows no redirect, reads little of an answer, and gives up at
// its deadline.
import { afterAll, expect, test } from "bun:test";
import { send } from "../../src/webhooks/deliver";
import { checkTarget } from "../../src/webhooks/policy";

const seen: { path: string; host: string | null }[] = [];
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request): Promise<Response> {
    const url = new URL(request.url);
    seen.push({ path: url.pathname, host: request.headers.get("host") });
    if (url.pathname === "/moved") return new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${server.port}/elsewhere` } });
    if (url.pathname === "/huge") return new Response("x".repeat(1 << 20), { status: 500 });
    if (url.pathname === "/slow") return new Promise<Response>(() => {});
    return new Response("ok");
  },
});
afterAll(() => server.stop(true));

/** The name resolves to the test server's address, through a resolver of our own: no DNS involved. */
const target = async (path: string) => {
  const checked = await checkTarget(`http://receiver.example:${server.port}${path}`, true, async () => [{ address: "127.0.0.1", family: 4 }]);
  if (!checked.ok) throw new Error(checked.problem);
  return checked.target;
};

test("the connection goes to the checked address, the Host header names the URL's host", async () => {
  expect(await send(await target("/in"), { "webhook-id": "msg_1" }, "{}", 2000)).toEqual({ delivered: true, status: 200, error: null });
  expect(seen.at(-1)).toEqual({ path: "/in", host: `receiver.example:${server.port}` });
});

test("a redirect is not followed, and counts as not delivered", async () => {
  const before = seen.length;
  expect(await send(await target("/moved"), {}, "{}", 2000)).toEqual({ delivered: false, status: 302, error: "redirect (302) not followed" });
  expect(seen.slice(before).map((s) => s.path)).toEqual(["/moved"]);
});

test("a large answer is read only up to a few KB; a silent one is given up at the deadline", async () => {
  const huge = await send(await target("/huge"), {}, "{}", 2000);
  expect(huge.delivered).toBe(false);
  expect(huge.status).toBe(500);
  expect(huge.error!.length).toBeLessThanOrEqual(220);
  const started = performance.now();
  expect(await send(await target("/slow"), {}, "{}", 300)).toEqual({ delivered: false, status: null, error: "no answer within 300 ms" });
  expect(performance.now() - started).toBeLessThan(1500);
});
