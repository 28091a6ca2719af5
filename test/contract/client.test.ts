// A client generated from the OpenAPI document, as an integrator would make
// one: openapi-typescript writes the types (test/client/generate.ts), the
// typed flow (test/client/flow.ts: register, challenge, its circuit, proof, status,
// mandate, a refused proof told apart by its `error`, JWKS, usage) must
// compile under tsc --strict, and then runs against the service, every
// answer also checked against the contract (support/contract.ts).
import { beforeAll, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SHIPPED_CIRCUIT_ID, shippedCircuitRecord } from "../../src/circuits/registry";
import { createHarness } from "../support/harness";
import { identity, proofFor } from "../support/proofs";

const CLIENT = join(import.meta.dir, "../client");
const ROOT = join(import.meta.dir, "../..");
const tsc = (project: string) => Bun.spawnSync([join(ROOT, "node_modules/.bin/tsc"), "-p", project], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });

beforeAll(() => {
  rmSync(join(CLIENT, "generated"), { recursive: true, force: true });
  const generated = Bun.spawnSync(["bun", join(CLIENT, "generate.ts")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (generated.exitCode !== 0) throw new Error(`generate: ${generated.stderr.toString()}`);
}, 60_000);

test("the generated client's flow compiles under tsc --strict, with no casts, any or unknown", () => {
  const source = readFileSync(join(CLIENT, "flow.ts"), "utf8").replace(/^\s*\/\/.*$/gm, "");
  expect(source).not.toMatch(/\bas\s+[A-Za-z{[]|\bany\b|\bunknown\b|@ts-/);
  const result = tsc(join(CLIENT, "tsconfig.json"));
  expect(`${result.stdout}${result.stderr}`).toBe("");
  expect(result.exitCode).toBe(0);
}, 60_000);

test("without telling the proof's 400s apart by `error`, the flow does not compile: the types are that precise", () => {
  const flow = readFileSync(join(CLIENT, "flow.ts"), "utf8");
  const check = 'if (!("verified" in body) || body.error !== "Proof verification failed") throw failure("refund", refused.response.status, body);';
  expect(flow).toContain(check);
  const loose = join(CLIENT, "generated/loose-flow.ts");
  writeFileSync(loose, flow.replace(check, "").replaceAll("./generated/api", "./api"));
  const config = join(CLIENT, "generated/tsconfig.json");
  writeFileSync(config, JSON.stringify({ extends: "../tsconfig.json", files: ["loose-flow.ts"] }));
  const result = tsc(config);
  rmSync(loose);
  rmSync(config);
  expect(result.exitCode).not.toBe(0);
  expect(result.stdout.toString()).toContain("Property 'reason' does not exist");
}, 60_000);

test("the flow runs against the service and passes", async () => {
  const h = await createHarness();
  // The shipped circuit, as a server's first start seeds it.
  await h.store.addCircuit(await shippedCircuitRecord(Date.now()));
  const agent = await identity("generated-client");
  // A variable specifier: the root typecheck must not follow it into types generated only by this test.
  const flowPath = join(CLIENT, "flow.ts");
  const { runFlow } = await import(flowPath);
  const result = await runFlow({
    baseUrl: "http://zkagent.test",
    apiKey: await h.newKey("generated-client"),
    fetch: (request: Request) => h.app.handle(request),
    agent: { agentId: "client-agent", identityCommitment: agent.identity_commitment, signingKey: agent.signing_key },
    prove: (nonce: string, action: string, context: Record<string, string | number>) => proofFor({ secret: agent.secret, nonce, action, context }),
  });
  expect(result.registered).toMatchObject({ agent_id: "client-agent", status: "active" });
  expect(result.circuit).toMatchObject({ id: SHIPPED_CIRCUIT_ID, state: "active", setup: "development" });
  expect(result.circuitListedActive).toBe(true);
  expect(result.verifiedConfidence).toBe(0.99);
  expect(result.receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  expect(result.session).toMatchObject({ status: "verified", reason: null });
  expect(result.mandateActions).toEqual(["purchase"]);
  expect(result.refused).toEqual({ reason: "mandate_violation", detail: "action", receipt: expect.any(String) });
  expect(result.jwks.keys.length).toBeGreaterThan(0);
  expect(result.usage).toMatchObject({ challenges: 2, verifications: { verified: 1, failed: 1 } });
}, 60_000);
