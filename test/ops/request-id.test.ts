// Request ids (incoming or new) on the response and on every log line of the
// request; secrets never in the log.
import { expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { observed } from "../support/contract";
import { ManualClock } from "../../src/clock";
import { createLogger } from "../../src/log";
import { createKey } from "../../src/modules/keys/service";
import { isSaneRequestId } from "../../src/http/request-id";
import { openSqlite } from "../../src/store/sqlite";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function setup() {
  const lines: any[] = [];
  const logger = createLogger("debug", (line) => lines.push(JSON.parse(line)));
  const store = openSqlite(":memory:");
  const clock = new ManualClock();
  const app = observed(createApp({ store, clock, verifier: { verify: () => ({ ok: false, reason: "proof_rejected" }) }, logger }));
  const { key } = await createKey(store, clock, "t", 0);
  const settle = () => Bun.sleep(1); // onAfterResponse runs on the next tick
  return { app, key, lines, settle };
}

test("an incoming sane x-request-id is kept; otherwise a UUID is assigned", async () => {
  const { app } = await setup();
  const send = (id?: string) => app.handle(new Request("http://zkagent.test/health", { headers: id === undefined ? {} : { "x-request-id": id } }));
  expect((await send("gw-1234.abc:5/6+7=8@9")).headers.get("x-request-id")).toBe("gw-1234.abc:5/6+7=8@9");
  expect((await send()).headers.get("x-request-id")).toMatch(UUID);
  for (const insane of ["has space", "x".repeat(129), "-leading-dash", 'quote"', "semi;colon", "ünïcode"]) {
    expect((await send(insane)).headers.get("x-request-id")).toMatch(UUID);
  }
  expect(isSaneRequestId("x".repeat(128))).toBe(true);
});

test("error responses carry the same request id as the log lines", async () => {
  const { app, lines, settle } = await setup();
  const res = await app.handle(new Request("http://zkagent.test/v1/agents/x", { headers: { "x-request-id": "req-err-1" } }));
  expect(res.status).toBe(401);
  expect(res.headers.get("x-request-id")).toBe("req-err-1");
  await settle();
  const line = lines.find((l) => l.msg === "request" && l.request_id === "req-err-1");
  expect(line).toMatchObject({ level: "info", method: "GET", route: "/v1/agents/:agentId", status: 401 });
  expect(typeof line.duration_ms).toBe("number");
});

test("every line logged while handling a request names it, including the services' own lines", async () => {
  const { app, key, lines, settle } = await setup();
  const agent = await app.handle(
    new Request("http://zkagent.test/v1/agents", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "x-request-id": "req-flow-1" },
      body: JSON.stringify({ agent_id: "a1", identity_commitment: "123" }),
    }),
  );
  expect(agent.status).toBe(201);
  const challenge = (await (
    await app.handle(
      new Request("http://zkagent.test/v1/verify/challenge", {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ agent_id: "a1", action: "purchase" }),
      }),
    )
  ).json()) as any;
  const proof = JSON.stringify({
    pi_a: ["1", "2", "1"],
    pi_b: [
      ["1", "2"],
      ["3", "4"],
      ["1", "0"],
    ],
    pi_c: ["1", "2", "1"],
  });
  const res = await app.handle(
    new Request("http://zkagent.test/v1/verify/proof", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", "x-request-id": "req-proof-1" },
      body: JSON.stringify({ challenge_id: challenge.challenge_id, proof, agent_signature: "sig" }),
    }),
  );
  expect(res.status).toBe(400);
  await settle();
  // The proofs service logs "verification failed" itself, without passing an id.
  const failed = lines.find((l) => l.msg === "verification failed");
  expect(failed).toBeDefined();
  expect(failed.request_id).toBe("req-proof-1");
  for (const line of lines) expect(typeof line.request_id).toBe("string");
  // Neither the key, nor the proof, nor the signature appears anywhere in the log.
  const text = JSON.stringify(lines);
  expect(text).not.toContain(key);
  expect(text).not.toContain(proof.slice(0, 20));
});

test("fields that name secrets are redacted at any depth", () => {
  const lines: any[] = [];
  const logger = createLogger("info", (line) => lines.push(JSON.parse(line)));
  logger.info("x", {
    api_key: "k1",
    nested: { "X-Api-Key": "k2", signing_secret: "s", proof: "p", agent_signature: "g", key_id: "kid", list: [{ secret: "z" }] },
  });
  expect(lines[0]).toMatchObject({
    api_key: "[redacted]",
    nested: {
      "X-Api-Key": "[redacted]",
      signing_secret: "[redacted]",
      proof: "[redacted]",
      agent_signature: "[redacted]",
      key_id: "kid",
      list: [{ secret: "[redacted]" }],
    },
  });
});

test("LOG_LEVEL filters: probes log at debug, so info hides them", async () => {
  const lines: any[] = [];
  const app = observed(
    createApp({
      store: openSqlite(":memory:"),
      clock: new ManualClock(),
      verifier: { verify: () => ({ ok: true }) },
      logger: createLogger("info", (l) => lines.push(JSON.parse(l))),
    }),
  );
  await app.handle(new Request("http://zkagent.test/health"));
  await app.handle(new Request("http://zkagent.test/nope"));
  await Bun.sleep(1);
  expect(lines.map((l) => l.route)).toEqual(["unmatched"]);
});

test("issue 18: log lines carry no raw control characters: C1, DEL, separators and bidi overrides are escaped, the JSON unchanged", () => {
  const lines: string[] = [];
  const logger = createLogger("info", (line) => lines.push(line));
  const evil = "agent\u009b2J\u007f\u2028\u202e\u001b[31m";
  logger.info("verification failed", { agent_id: evil });
  const line = lines[0]!;
  expect([...line.trimEnd()].every((c) => c >= " " && !(c >= "\u007f" && c <= "\u009f") && c !== "\u2028" && c !== "\u202e")).toBe(true);
  expect(JSON.parse(line).agent_id).toBe(evil);
});
