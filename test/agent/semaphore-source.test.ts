// Where the agent gets Semaphore's artifacts when the 164 MB npm package is not
// installed (the @zkagent/agent package carries none): from a trusted
// service, checked against the pins, then from the cache.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSemaphoreArtifacts, SemaphoreArtifactError } from "../../src/agent/group/artifacts";
import { SEMAPHORE_PINS } from "../../src/groups/semaphore-pins";

const real = await loadSemaphoreArtifacts(1); // from the repository's installed package
const CIRCUIT = "semaphore_v4_d1-0123456789abcdef";
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "zkagent-semaphore-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A service that serves `files` by URL path and records what was asked. */
function service(files: Record<string, Uint8Array>) {
  const asked: string[] = [];
  const fetch = (async (input: string | URL | Request) => {
    const path = new URL(String(input)).pathname;
    asked.push(path);
    const body = files[path];
    return body ? new Response(body as BodyInit) : new Response("not found", { status: 404 });
  }) as typeof globalThis.fetch;
  return { asked, fetch };
}

test("without the package, the depth is downloaded from the service, checked, cached, and read back from the cache without a request", async () => {
  const cacheDir = tempDir();
  const { asked, fetch } = service({ [`/v1/circuits/${CIRCUIT}/wasm`]: real.wasm, [`/v1/circuits/${CIRCUIT}/zkey`]: real.zkey });
  const source = { installedPackage: false, service: "https://zkagent.example", circuitId: CIRCUIT, cacheDir, fetch };
  const first = await loadSemaphoreArtifacts(1, source);
  expect(first.wasm).toEqual(real.wasm);
  expect(first.zkey).toEqual(real.zkey);
  expect(asked.sort()).toEqual([`/v1/circuits/${CIRCUIT}/wasm`, `/v1/circuits/${CIRCUIT}/zkey`]);
  expect(readdirSync(cacheDir).sort()).toEqual([`${SEMAPHORE_PINS[1]!.wasm}.wasm`, `${SEMAPHORE_PINS[1]!.zkey}.zkey`].sort());

  const again = await loadSemaphoreArtifacts(1, source);
  expect(again.zkey).toEqual(real.zkey);
  expect(asked.length).toBe(2);
});

test("bytes the service sends that are not the pinned ones are refused and never cached", async () => {
  const cacheDir = tempDir();
  const planted = new Uint8Array(real.wasm);
  planted[100] = planted[100]! ^ 1;
  const { fetch } = service({ [`/v1/circuits/${CIRCUIT}/wasm`]: planted, [`/v1/circuits/${CIRCUIT}/zkey`]: real.zkey });
  const load = loadSemaphoreArtifacts(1, { installedPackage: false, service: "https://zkagent.example", circuitId: CIRCUIT, cacheDir, fetch });
  await expect(load).rejects.toThrow(/SHA-256 .* is not the pinned/);
  expect(readdirSync(cacheDir).filter((f) => f.endsWith(".wasm"))).toEqual([]);
});

test("a cached file that is not the pinned bytes is not used: it is downloaded again", async () => {
  const cacheDir = tempDir();
  writeFileSync(join(cacheDir, `${SEMAPHORE_PINS[1]!.wasm}.wasm`), "planted");
  const { asked, fetch } = service({ [`/v1/circuits/${CIRCUIT}/wasm`]: real.wasm, [`/v1/circuits/${CIRCUIT}/zkey`]: real.zkey });
  const loaded = await loadSemaphoreArtifacts(1, { installedPackage: false, service: "https://zkagent.example", circuitId: CIRCUIT, cacheDir, fetch });
  expect(loaded.wasm).toEqual(real.wasm);
  expect(asked).toContain(`/v1/circuits/${CIRCUIT}/wasm`);
});

test("no source: an error that names the ways to provide one; a plain-http service or another depth's circuit id is refused before any request", async () => {
  const cacheDir = tempDir();
  await expect(loadSemaphoreArtifacts(1, { installedPackage: false, cacheDir })).rejects.toThrow(
    /trusted zkagent service.*directory.*@zk-kit\/semaphore-artifacts/,
  );
  const { asked, fetch } = service({});
  await expect(loadSemaphoreArtifacts(1, { installedPackage: false, service: "http://zkagent.example", circuitId: CIRCUIT, cacheDir, fetch })).rejects.toThrow(
    /must be https/,
  );
  await expect(
    loadSemaphoreArtifacts(1, { installedPackage: false, service: "https://zkagent.example", circuitId: "semaphore_v4_d2-0123456789abcdef", cacheDir, fetch }),
  ).rejects.toBeInstanceOf(SemaphoreArtifactError);
  expect(asked).toEqual([]);
});
