// What the agent says when a group proof cannot be made (issue 37, 38): the
// service's own words with its refusal (a binary without the Semaphore
// artifacts answers 404 with what the operator must do), a download bounded
// by the caller's timeoutMs rather than a fixed 120 s, and error classes that
// keep their names when the SDK is bundled with code splitting (as
// scripts/pack.ts bundles it), where they printed as GroupProofError2.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSemaphoreArtifacts, SemaphoreArtifactError } from "../../src/agent";

setDefaultTimeout(60_000);

const ROOT = new URL("../../", import.meta.url).pathname;
const CIRCUIT = "semaphore_v4_d1-0123456789abcdef";
let dir: string;
let server: ReturnType<typeof Bun.serve>;
const HINT = "This service verifies the circuit but does not carry this file: get it from the package the circuit names (artifacts_package).";

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "zkagent-group-errors-"));
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path.startsWith("/slow/")) {
        await Bun.sleep(10_000); // never in time
        return new Response("late");
      }
      // As the single binary answers for a Semaphore zkey it does not carry.
      return Response.json({ error: "Artifact not served", reason: "artifact_not_served", message: HINT }, { status: 404 });
    },
  });
});
afterAll(() => {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

const load = (service: string, timeoutMs?: number) =>
  loadSemaphoreArtifacts(1, { installedPackage: false, service, circuitId: CIRCUIT, cacheDir: join(dir, "cache"), allowInsecureLoopback: true, timeoutMs });

describe("artifact downloads", () => {
  test("a 404 carries the service's message (what the operator must do), not only the status", async () => {
    const error = await load(`http://127.0.0.1:${server.port}`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SemaphoreArtifactError);
    expect((error as Error).message).toContain("HTTP 404");
    expect((error as Error).message).toContain(HINT);
    expect((error as Error).message).toContain("artifact_not_served");
  });

  test("a download follows timeoutMs: a service that never answers fails in about that time, saying so", async () => {
    const started = performance.now();
    const error = await load(`http://127.0.0.1:${server.port}/slow`, 300).catch((e: unknown) => e);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(SemaphoreArtifactError);
    expect((error as Error).message).toContain("within 0.3 s");
  });
});

test("bundled with code splitting, as the packages are, the error classes print their own names", async () => {
  const out = join(dir, "bundle");
  const built = await Bun.build({
    entrypoints: [join(ROOT, "src/agent/index.ts"), join(ROOT, "src/cli/agent.ts")],
    outdir: out,
    root: join(ROOT, "src"),
    target: "bun",
    format: "esm",
    splitting: true,
  });
  expect(built.success).toBe(true);
  const sdk = await import(join(out, "agent/index.js"));
  for (const [name, make] of [
    ["GroupProofError", () => new sdk.GroupProofError("members", "x")],
    ["SemaphoreArtifactError", () => new sdk.SemaphoreArtifactError("x")],
    ["ChallengeError", () => new sdk.ChallengeError("malformed", "x")],
  ] as const) {
    const error = make();
    expect(error.constructor.name).toBe(name);
    expect(Bun.inspect(error)).toContain(`\n${name}: x\n`);
    expect(Bun.inspect(error)).not.toContain(`${name}2`);
  }
});
