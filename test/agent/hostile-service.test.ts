// A hostile service on a real port (issue 23): the agent runs only the witness
// code it pins, accepts a zkey only for its pinned circuit and the listed
// vk_hash, reads at most a bounded number of bytes, and writes nothing
// outside its cache directory. Each case is served by Bun.serve on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { CircuitSourceError, type LoadedCircuit, loadCircuit, prove } from "../../src/agent";
import { cacheDirOf, DOWNLOAD_LIMITS } from "../../src/agent/circuit";
import { PINNED_CIRCUITS, type PinnedCircuit } from "../../src/circuits/pins";
import { zKey } from "../../src/ceremony/snarkjs";
import { circuitIdOf, SHIPPED_CIRCUIT_ID, SHIPPED_VK_HASH } from "../../src/circuits/version";
import { parseZkey } from "../../src/prover/zkey";
import { vkHash as vkHashOf } from "../../src/receipts/circuit";
import { secondCeremony } from "../support/ceremony";

setDefaultTimeout(60_000);

const ART = "circuits/artifacts";
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const shippedZkey = new Uint8Array(readFileSync(`${ART}/agent_identity.zkey`));
const shippedWasm = new Uint8Array(readFileSync(`${ART}/agent_identity.wasm`));

interface Served {
  id: string;
  vk_hash: string;
  zkey: Uint8Array | (() => Response);
  wasm: Uint8Array | (() => Response);
  zkey_sha256?: string;
  wasm_sha256?: string;
}

/** A service that lists `served` and serves its artifacts; every request path is recorded. */
function hostile(served: () => Served, list?: () => Response) {
  const requests: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname;
      requests.push(path);
      const s = served();
      if (path === "/v1/circuits") {
        if (list) return list();
        const hash = (a: Uint8Array | (() => Response)) => (a instanceof Uint8Array ? sha256(a) : "0".repeat(64));
        return Response.json({
          circuits: [{ id: s.id, vk_hash: s.vk_hash, zkey_sha256: s.zkey_sha256 ?? hash(s.zkey), wasm_sha256: s.wasm_sha256 ?? hash(s.wasm) }],
        });
      }
      const artifact = path.endsWith("/zkey") ? s.zkey : path.endsWith("/wasm") ? s.wasm : undefined;
      if (!artifact) return new Response("not found", { status: 404 });
      return artifact instanceof Uint8Array ? new Response(artifact as BodyInit) : artifact();
    },
  });
  const origin = `http://127.0.0.1:${server.port}`;
  return { server, origin, requests, url: (id: string) => `${origin}/v1/circuits/${id}` };
}

let sandbox: string;
const servers: { stop: (force?: boolean) => unknown }[] = [];
const start = (...args: Parameters<typeof hostile>) => {
  const h = hostile(...args);
  servers.push(h.server);
  return h;
};
const options = (cacheDir: string) => ({ cacheDir, allowInsecureLoopback: true });
/** Every file under `dir`, relative to it. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)));

// The secret-leaking circuit: compiled with circom2 and given a zkey on the pinned ptau, here.
let leak: { zkey: Uint8Array; wasm: Uint8Array; vkHash: string };

beforeAll(async () => {
  sandbox = mkdtempSync(join(tmpdir(), "zkagent-hostile-"));
  const out = join(sandbox, "leak-build");
  mkdirSync(out);
  const compile = Bun.spawnSync(["node_modules/.bin/circom2", "test/fixtures/leak/leak.circom", "--r1cs", "--wasm", "-l", "node_modules", "-o", out], {
    stdout: "ignore",
    stderr: "pipe",
  });
  if (compile.exitCode !== 0) throw new Error(`circom2: ${compile.stderr}`);
  const r1cs = new Uint8Array(readFileSync(join(out, "leak.r1cs")));
  const ptau = new Uint8Array(readFileSync("circuits/ptau/powersOfTau28_hez_final_09.ptau"));
  const zkeyPath = join(out, "leak.zkey");
  await zKey.newZKey({ type: "mem", data: r1cs }, { type: "mem", data: ptau }, join(out, "leak_0.zkey"));
  // One contribution: a usable key (an initial zkey has γ = δ, which the prover refuses).
  await zKey.contribute({ type: "mem", data: new Uint8Array(readFileSync(join(out, "leak_0.zkey"))) }, zkeyPath, "hostile", "hostile entropy");
  const zkey = new Uint8Array(readFileSync(zkeyPath));
  leak = {
    zkey,
    wasm: new Uint8Array(readFileSync(join(out, "leak_js", "leak.wasm"))),
    vkHash: vkHashOf(await zKey.exportVerificationKey({ type: "mem", data: zkey })),
  };
});

afterAll(() => {
  for (const s of servers) s.stop(true);
  rmSync(sandbox, { recursive: true, force: true });
});

describe("the agent runs only what it pins", () => {
  test("a circuit with an extra public output derived from the secret, served with consistent hashes, is refused before its wasm is downloaded", async () => {
    const id = circuitIdOf(leak.vkHash);
    const s = start(() => ({ id, vk_hash: leak.vkHash, zkey: leak.zkey, wasm: leak.wasm }));
    const cacheDir = join(sandbox, "cache-leak");
    await expect(loadCircuit(s.url(id), options(cacheDir))).rejects.toThrow(/wasm .* is not a witness generator this SDK pins/);
    expect(s.requests).toEqual(["/v1/circuits"]);
    // Handed to prove() directly, the same artifacts are refused before the wasm is compiled: no proof.
    const circuit: LoadedCircuit = { id, zkey: leak.zkey, wasm: leak.wasm, vkHash: leak.vkHash };
    await expect(prove({ secret: "12345", nonce: "ab".repeat(31), action: "purchase", circuit })).rejects.toThrow(/is not one this SDK pins: refused, not run/);
    // The leak circuit's zkey beside the pinned wasm is refused too: not the pinned circuit's shape.
    const mixed = start(() => ({ id, vk_hash: leak.vkHash, zkey: leak.zkey, wasm: shippedWasm }));
    await expect(loadCircuit(mixed.url(id), options(join(sandbox, "cache-mixed")))).rejects.toThrow(
      /the zkey is not for the pinned agent_identity circuit \(nVars 424, pinned 423\)/,
    );
  });

  test("an altered witness generator (the shipped wasm plus a custom section) with its own hash listed is refused, never downloaded", async () => {
    // A custom section: id 0, size, name length, name, payload.
    const extra = new Uint8Array([0x00, 0x06, 0x04, ...new TextEncoder().encode("evil"), 0x2a]);
    const altered = new Uint8Array([...shippedWasm, ...extra]);
    expect(await WebAssembly.compile(altered)).toBeInstanceOf(WebAssembly.Module);
    const s = start(() => ({ id: SHIPPED_CIRCUIT_ID, vk_hash: SHIPPED_VK_HASH, zkey: shippedZkey, wasm: altered }));
    await expect(loadCircuit(s.url(SHIPPED_CIRCUIT_ID), options(join(sandbox, "cache-wasm")))).rejects.toThrow(/not a witness generator this SDK pins/);
    expect(s.requests.some((p) => p.endsWith("/wasm"))).toBe(false);
  });

  test("another ceremony's zkey listed under the shipped id and vk_hash (its own SHA-256 listed) is refused: its key hashes elsewhere", async () => {
    const other = (await secondCeremony()).circuit;
    const s = start(() => ({ id: SHIPPED_CIRCUIT_ID, vk_hash: SHIPPED_VK_HASH, zkey: other.zkey, wasm: shippedWasm }));
    const cacheDir = join(sandbox, "cache-swap");
    await expect(loadCircuit(s.url(SHIPPED_CIRCUIT_ID), options(cacheDir))).rejects.toThrow(
      new RegExp(`verification key hashes to ${other.vkHash}, not ${SHIPPED_VK_HASH}`),
    );
    expect(filesUnder(cacheDir).filter((f) => f.endsWith("zkey"))).toEqual([]);
    // Listed under its own id, the same zkey is accepted: it is the pinned circuit with its own key.
    const own = start(() => ({ id: other.id, vk_hash: other.vkHash, zkey: other.zkey, wasm: shippedWasm }));
    expect((await loadCircuit(own.url(other.id), options(cacheDir))).vkHash).toBe(other.vkHash);
  });

  test("only https://: http:// is refused before any request unless loopback is asked for, and never for another host", async () => {
    const s = start(() => ({ id: SHIPPED_CIRCUIT_ID, vk_hash: SHIPPED_VK_HASH, zkey: shippedZkey, wasm: shippedWasm }));
    const cacheDir = join(sandbox, "cache-http");
    await expect(loadCircuit(s.url(SHIPPED_CIRCUIT_ID), { cacheDir })).rejects.toThrow(/only https:\/\/ circuit sources are accepted/);
    await expect(loadCircuit(`http://example.com/v1/circuits/${SHIPPED_CIRCUIT_ID}`, options(cacheDir))).rejects.toThrow(/only https:\/\//);
    await expect(loadCircuit(`ftp://127.0.0.1/v1/circuits/${SHIPPED_CIRCUIT_ID}`, options(cacheDir))).rejects.toThrow(/only https:\/\//);
    expect(s.requests).toEqual([]);
    expect((await loadCircuit(s.url(SHIPPED_CIRCUIT_ID), options(cacheDir))).vkHash).toBe(SHIPPED_VK_HASH);
  });

  test("a redirect to another origin is refused and the other origin never asked; one within the origin is followed", async () => {
    const target = start(() => ({ id: SHIPPED_CIRCUIT_ID, vk_hash: SHIPPED_VK_HASH, zkey: shippedZkey, wasm: shippedWasm }));
    const s = start(
      () => ({ id: SHIPPED_CIRCUIT_ID, vk_hash: SHIPPED_VK_HASH, zkey: shippedZkey, wasm: shippedWasm }),
      () => Response.redirect(`${target.origin}/v1/circuits`, 302),
    );
    await expect(loadCircuit(s.url(SHIPPED_CIRCUIT_ID), options(join(sandbox, "cache-redirect")))).rejects.toThrow(/redirected to another origin/);
    expect(target.requests).toEqual([]);
    // Within its origin a redirect is followed.
    let redirected = 0;
    const entry = { id: SHIPPED_CIRCUIT_ID, vk_hash: SHIPPED_VK_HASH, zkey_sha256: sha256(shippedZkey), wasm_sha256: sha256(shippedWasm) };
    const same = start(
      () => ({ id: SHIPPED_CIRCUIT_ID, vk_hash: SHIPPED_VK_HASH, zkey: shippedZkey, wasm: shippedWasm }),
      () => (redirected++ === 0 ? Response.redirect(`${same.origin}/v1/circuits?moved`, 302) : Response.json({ circuits: [entry] })),
    );
    expect((await loadCircuit(same.url(SHIPPED_CIRCUIT_ID), options(join(sandbox, "cache-redirect")))).vkHash).toBe(SHIPPED_VK_HASH);
    expect(redirected).toBe(2);
  });
});

describe("prove() returns only a proof of the statement", () => {
  test("a circuit pinned by mistake whose public signals are more than the statement: no proof is returned", async () => {
    // Pin the leak circuit for this test only, as a careless table entry would.
    const shape = parseZkey(leak.zkey);
    const entry = {
      name: "agent_identity",
      wasmSha256: sha256(leak.wasm),
      wasmBytes: leak.wasm.length,
      zkey: { nVars: shape.nVars, nPublic: shape.nPublic, domainSize: shape.domainSize, nCoef: shape.nCoef, coefsSha256: sha256(shape.coefs) },
    };
    (PINNED_CIRCUITS as PinnedCircuit[]).push(entry);
    try {
      const circuit: LoadedCircuit = { id: circuitIdOf(leak.vkHash), zkey: leak.zkey, wasm: leak.wasm, vkHash: leak.vkHash };
      await expect(prove({ secret: "123456789", nonce: "ab".repeat(31), action: "purchase", circuit })).rejects.toThrow(
        /proves public signals other than the statement: refused, no proof returned/,
      );
    } finally {
      (PINNED_CIRCUITS as PinnedCircuit[]).pop();
    }
  });
});

describe("downloads are bounded", () => {
  const stream = (bytes: number) => {
    let sent = 0;
    const chunk = new Uint8Array(1024 * 1024).fill(7);
    const counter = { sent: () => sent };
    const response = () =>
      new Response(
        new ReadableStream({
          pull(controller) {
            if (sent >= bytes) return controller.close();
            sent += chunk.length;
            controller.enqueue(chunk);
          },
        }),
      );
    return { counter, response };
  };

  test("a 1.5 GiB zkey streamed without a length is refused while streaming; RSS grows by less than 64 MiB", async () => {
    const big = stream(1536 * 1024 * 1024);
    const s = start(() => ({ id: SHIPPED_CIRCUIT_ID, vk_hash: SHIPPED_VK_HASH, zkey: big.response, zkey_sha256: sha256(shippedZkey), wasm: shippedWasm }));
    Bun.gc(true);
    const before = process.memoryUsage.rss();
    await expect(loadCircuit(s.url(SHIPPED_CIRCUIT_ID), options(join(sandbox, "cache-big")))).rejects.toThrow(
      /more than the \d+ bytes accepted: refused while downloading/,
    );
    const grown = (process.memoryUsage.rss() - before) / (1024 * 1024);
    if (process.env.SHOW_RSS) console.log(`RSS growth ${grown.toFixed(1)} MiB, ${big.counter.sent()} bytes produced`);
    expect(grown).toBeLessThan(64);
    // Refused early: the server produced a little more than the limit, nowhere near 1.5 GiB.
    expect(big.counter.sent()).toBeLessThan(DOWNLOAD_LIMITS.zkey + 64 * 1024 * 1024);
  });

  test("a list larger than its limit is refused, by its Content-Length or while streaming", async () => {
    const big = stream(64 * 1024 * 1024);
    const s = start(() => ({ id: SHIPPED_CIRCUIT_ID, vk_hash: SHIPPED_VK_HASH, zkey: shippedZkey, wasm: shippedWasm }), big.response);
    await expect(loadCircuit(s.url(SHIPPED_CIRCUIT_ID), options(join(sandbox, "cache-list")))).rejects.toThrow(/list is more than the 1048576 bytes/);
    const declared = start(
      () => ({ id: SHIPPED_CIRCUIT_ID, vk_hash: SHIPPED_VK_HASH, zkey: shippedZkey, wasm: shippedWasm }),
      () => new Response(new Uint8Array(2 * 1024 * 1024)),
    );
    await expect(loadCircuit(declared.url(SHIPPED_CIRCUIT_ID), options(join(sandbox, "cache-list")))).rejects.toThrow(/list is 2097152 bytes, more than/);
  });
});

describe("the cache", () => {
  test("an id with %2F and a vk_hash of sha256:../../.. are refused; nothing is written outside the cache directory", async () => {
    const root = join(sandbox, "escape");
    const cacheDir = join(root, "a", "b", "cache");
    const evilHash = "sha256:../../../../../x";
    const evilId = circuitIdOf(evilHash);
    expect(evilId).toBe("agent_identity-../../../../../x");
    const s = start(() => ({ id: evilId, vk_hash: evilHash, zkey: shippedZkey, wasm: shippedWasm }));
    const encoded = `agent_identity-..%2F..%2F..%2F..%2F..%2Fx`;
    await expect(loadCircuit(s.url(encoded), options(cacheDir))).rejects.toBeInstanceOf(CircuitSourceError);
    // A well-formed id whose list entry carries the evil vk_hash is refused by the hash's form.
    const t = start(() => ({ id: SHIPPED_CIRCUIT_ID, vk_hash: evilHash, zkey: shippedZkey, wasm: shippedWasm }));
    await expect(loadCircuit(t.url(SHIPPED_CIRCUIT_ID), options(cacheDir))).rejects.toThrow(/is not sha256:<64 hex digits>/);
    expect(existsSync(root)).toBe(false);
    expect(filesUnder(sandbox).filter((f) => !f.startsWith("cache") && !f.startsWith("leak-build"))).toEqual([]);
  });

  test("keyed by origin: what one service put in the cache is not used for another's circuit of the same id", async () => {
    const cacheDir = join(sandbox, "cache-origins");
    const a = start(() => ({ id: SHIPPED_CIRCUIT_ID, vk_hash: SHIPPED_VK_HASH, zkey: shippedZkey, wasm: shippedWasm }));
    await loadCircuit(a.url(SHIPPED_CIRCUIT_ID), options(cacheDir));
    expect(filesUnder(cacheDirOf(cacheDir, a.origin, SHIPPED_CIRCUIT_ID)).sort()).toEqual(["wasm", "zkey"]);
    const b = start(() => ({
      id: SHIPPED_CIRCUIT_ID,
      vk_hash: SHIPPED_VK_HASH,
      zkey: () => new Response("gone", { status: 404 }),
      zkey_sha256: sha256(shippedZkey),
      wasm: shippedWasm,
    }));
    // b's zkey is read from b (which has none), not from a's cache entry.
    await expect(loadCircuit(b.url(SHIPPED_CIRCUIT_ID), options(cacheDir))).rejects.toThrow(/HTTP 404/);
    expect(b.requests.some((p) => p.endsWith("/zkey"))).toBe(true);
  });
});
