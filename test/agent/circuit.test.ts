// Where the SDK gets its proving artifacts (src/agent/circuit.ts): from the
// service, checked against the SHA-256 the list publishes, cached, and
// checked again when read from the cache; from a ceremony directory; or
// built in. Over the in-process app (its fetch is app.handle).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CircuitSourceError, loadCircuit } from "../../src/agent";
import { cacheDirOf } from "../../src/agent/circuit";
import { SHIPPED_CIRCUIT_ID, SHIPPED_VK_HASH, shippedCircuitRecord } from "../../src/circuits/registry";
import { createHarness, type Harness } from "../support/harness";

setDefaultTimeout(30_000);

const ART = "circuits/artifacts";
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
let h: Harness;
let tmp: string;
const base = "https://zkagent.test";
const viaApp = (tamper?: (path: string, bytes: Uint8Array) => Uint8Array) =>
  (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await h.app.handle(new Request(input, init));
    if (!tamper || !response.ok || !String(input).match(/\/(zkey|wasm)$/)) return response;
    return new Response(tamper(String(input), new Uint8Array(await response.arrayBuffer())) as BodyInit, { status: 200 });
  }) as typeof fetch;

beforeAll(async () => {
  h = await createHarness();
  await h.store.addCircuit(await shippedCircuitRecord(Date.now()));
  tmp = mkdtempSync(join(tmpdir(), "zkagent-sdk-circuit-"));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("loadCircuit", () => {
  test("without a source: the built-in development circuit", async () => {
    const circuit = await loadCircuit();
    expect(circuit.id).toBe(SHIPPED_CIRCUIT_ID);
    expect(circuit.vkHash).toBe(SHIPPED_VK_HASH);
    expect(sha256(circuit.zkey)).toBe(sha256(readFileSync(`${ART}/agent_identity.zkey`)));
  });

  test("from a URL: downloads, checks the published hashes, caches; a cached artifact altered afterwards is refused", async () => {
    const cacheDir = join(tmp, "cache");
    const circuit = await loadCircuit(`${base}/v1/circuits/${SHIPPED_CIRCUIT_ID}`, { cacheDir, fetch: viaApp() });
    expect(circuit).toMatchObject({ id: SHIPPED_CIRCUIT_ID, vkHash: SHIPPED_VK_HASH });
    expect(circuit.zkey).toEqual(new Uint8Array(readFileSync(`${ART}/agent_identity.zkey`)));
    expect(circuit.wasm).toEqual(new Uint8Array(readFileSync(`${ART}/agent_identity.wasm`)));
    const cachedZkey = join(cacheDirOf(cacheDir, base, SHIPPED_CIRCUIT_ID), "zkey");
    expect(existsSync(cachedZkey)).toBe(true);

    // Read from the cache: no artifact is downloaded again.
    const noDownloads = viaApp(() => {
      throw new Error("downloaded although cached");
    });
    expect((await loadCircuit(`${base}/v1/circuits/${SHIPPED_CIRCUIT_ID}`, { cacheDir, fetch: noDownloads })).zkey).toEqual(circuit.zkey);

    const altered = new Uint8Array(readFileSync(cachedZkey));
    altered[altered.length - 100]! ^= 0x01;
    writeFileSync(cachedZkey, altered);
    const refused = loadCircuit(`${base}/v1/circuits/${SHIPPED_CIRCUIT_ID}`, { cacheDir, fetch: viaApp() });
    await expect(refused).rejects.toBeInstanceOf(CircuitSourceError);
    await expect(refused).rejects.toThrow(/cached zkey .* does not hash to the published SHA-256/);
  });

  test("a download that does not hash to the published SHA-256 is refused and not cached", async () => {
    const cacheDir = join(tmp, "cache-tampered");
    const swapped = viaApp((_path, bytes) => {
      const copy = bytes.slice();
      copy[10]! ^= 0xff;
      return copy;
    });
    await expect(loadCircuit(`${base}/v1/circuits/${SHIPPED_CIRCUIT_ID}`, { cacheDir, fetch: swapped })).rejects.toThrow(/does not hash to the published/);
    expect(existsSync(join(cacheDirOf(cacheDir, base, SHIPPED_CIRCUIT_ID), "zkey"))).toBe(false);
  });

  test("an id the list does not publish, or a URL that names no circuit, is refused", async () => {
    await expect(loadCircuit(`${base}/v1/circuits/agent_identity-0000000000000000`, { cacheDir: tmp, fetch: viaApp() })).rejects.toThrow(/lists no circuit/);
    await expect(loadCircuit(`${base}/v1/verify/status/x`, { cacheDir: tmp, fetch: viaApp() })).rejects.toThrow(/not a …\/v1\/circuits\/\{id\} URL/);
  });

  test("from a ceremony directory: the shipped one gives the shipped id; a zkey that is not the transcript's last is refused", async () => {
    expect((await loadCircuit(ART)).id).toBe(SHIPPED_CIRCUIT_ID);
    const dir = join(tmp, "dir");
    cpSync(ART, dir, { recursive: true });
    const zkey = new Uint8Array(readFileSync(join(dir, "agent_identity.zkey")));
    zkey[zkey.length - 1]! ^= 0x01;
    writeFileSync(join(dir, "agent_identity.zkey"), zkey);
    await expect(loadCircuit(dir)).rejects.toThrow(/not the one its transcript ends with/);
  });
});
