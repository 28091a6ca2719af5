// Where an agent gets what it proves with (issue 17, docs/trust.md). A
// challenge names its circuit (`circuit_id`); the agent proves with that
// circuit's zkey and witness wasm, from one of:
//
//   (nothing)                     the development circuit this SDK ships
//   a ceremony directory          agent_identity.zkey/.wasm, transcript.json,
//                                 verification_key.json (zkagent ceremony)
//   https://…/v1/circuits/{id}    the service's copy: the list at
//                                 …/v1/circuits publishes each artifact's
//                                 SHA-256; downloads are checked against it,
//                                 kept in a cache directory, and checked
//                                 again every time they are read from it
//
// The service is not trusted with the circuit (docs/trust.md, "What the agent
// pins"): whatever the source, the witness wasm must be one this SDK pins
// (src/circuits/pins.ts) byte for byte, and the zkey must be for that pinned
// circuit (its header's counts and its constraint section) with a
// verification key that hashes to the vk_hash the id is derived from. The
// wasm is code the agent runs with its secret as input; a zkey for another
// circuit could make public what that circuit computes from the secret.
//
// Downloads are bounded (DOWNLOAD_LIMITS, enforced while the body streams,
// hashed as it streams), only https:// (http:// to a loopback host only when
// asked), never redirected to another origin. The cache is keyed by the
// service's origin and the validated id, so nothing lands outside it and one
// service cannot plant entries for another.
import { acceptedSource, readBounded } from "../bounded-fetch";
import { createHash, randomUUID } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve, sep } from "node:path";
import { zKey } from "../ceremony/snarkjs";
import { CEREMONY_FILES, shippedFile } from "../circuits/shipped";
import { circuitIdOf, SHIPPED_CIRCUIT_ID, SHIPPED_VK_HASH } from "../circuits/version";
import { sha256Hex as sha256, vkHash as vkHashOf } from "../receipts/circuit";
import { PINNED_CIRCUITS, type PinnedCircuit, pinnedByWasm, zkeyPinMismatch } from "../circuits/pins";

/** What prove() needs of a circuit: its id (the challenge's circuit_id), the proving artifacts and the key hash they match. */
export interface LoadedCircuit {
  id: string;
  zkey: Uint8Array;
  wasm: Uint8Array;
  /** "sha256:<hex>" of the canonical verification key: what the receipt's circuit claim names. */
  vkHash: string;
}

export interface LoadCircuitOptions {
  /** Where downloaded artifacts are kept; default ~/.cache/zkagent/circuits. */
  cacheDir?: string;
  /** For tests and custom transports; the global fetch by default. */
  fetch?: typeof fetch;
  /**
   * Accept an http:// source whose host is loopback (127.0.0.0/8, ::1,
   * localhost): a service on the same machine, as in tests and the demo.
   * Any other http:// source is refused whatever this says.
   */
  allowInsecureLoopback?: boolean;
  /** Milliseconds each download may take, its body included; default 30 s for the list, 60 s for an artifact. */
  timeoutMs?: number;
}

/** An artifact that is not what the service published or the SDK pins (a download or a cached copy), or a source that names no circuit. */
export class CircuitSourceError extends Error {}

export const DEFAULT_CACHE_DIR = join(homedir(), ".cache", "zkagent", "circuits");

const MiB = 1024 * 1024;
/** The most bytes read for each download: the list, a zkey (the agent circuit's is ≈ 190 KB), a wasm (exactly a pinned one's size at most). */
export const DOWNLOAD_LIMITS = {
  list: 1 * MiB,
  zkey: 16 * MiB,
  wasm: Math.max(...PINNED_CIRCUITS.map((pin) => pin.wasmBytes)),
} as const;
const MAX_REDIRECTS = 3;

const ID = /^([a-z_]+)-[0-9a-f]{16}$/;
const VK_HASH = /^sha256:[0-9a-f]{64}$/;
const HEX64 = /^[0-9a-f]{64}$/;

let builtIn: Promise<LoadedCircuit> | undefined;

/** The circuit for `source` (see the file header); the shipped development circuit when absent. */
export function loadCircuit(source?: string, options: LoadCircuitOptions = {}): Promise<LoadedCircuit> {
  if (source === undefined) {
    builtIn ??= Promise.all([shippedFile("zkey"), shippedFile("wasm")]).then(([zkey, wasm]) => ({
      id: SHIPPED_CIRCUIT_ID,
      zkey,
      wasm,
      vkHash: SHIPPED_VK_HASH,
    }));
    return builtIn;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(source)) return fromService(source, options);
  return fromDirectory(source);
}

/** The pinned circuit `wasm` is, or CircuitSourceError: the check made before any witness code is compiled. */
export function pinnedCircuitOf(wasm: Uint8Array, where: string): PinnedCircuit {
  const pin = pinnedByWasm(sha256(wasm));
  if (!pin) throw new CircuitSourceError(`${where}: the witness wasm (SHA-256 ${sha256(wasm)}) is not one this SDK pins: refused, not run`);
  return pin;
}

// A zkey checked once per process against a vk_hash (exporting its key takes ≈ 0.4 s).
const checkedZkeys = new Map<string, Promise<void>>();

/**
 * Refuses a zkey that is not for `pin`'s circuit (header counts, constraint
 * section) or whose exported verification key does not hash to `vkHash`.
 */
export function checkZkey(zkey: Uint8Array, pin: PinnedCircuit, vkHash: string, where: string): Promise<void> {
  const key = `${sha256(zkey)}:${pin.name}:${vkHash}`;
  let checked = checkedZkeys.get(key);
  if (!checked) {
    checked = checkZkeyOnce(zkey, pin, vkHash, where);
    checkedZkeys.set(key, checked);
    checked.catch(() => checkedZkeys.delete(key));
  }
  return checked;
}

async function checkZkeyOnce(zkey: Uint8Array, pin: PinnedCircuit, vkHash: string, where: string): Promise<void> {
  const mismatch = zkeyPinMismatch(zkey, pin);
  if (mismatch) throw new CircuitSourceError(`${where}: ${mismatch}: refused`);
  const exported = vkHashOf(await zKey.exportVerificationKey({ type: "mem", data: zkey }));
  if (exported !== vkHash) throw new CircuitSourceError(`${where}: the zkey's verification key hashes to ${exported}, not ${vkHash}: refused`);
}

/** The pinned circuit of `id` and `vkHash` after checking their forms and that the id is derived from the hash. */
function checkId(id: string, vkHash: string, where: string): void {
  if (!ID.test(id)) throw new CircuitSourceError(`${where}: ${JSON.stringify(id)} is not a circuit id (<name>-<16 hex digits>)`);
  if (!VK_HASH.test(vkHash)) throw new CircuitSourceError(`${where}: vk_hash ${JSON.stringify(vkHash)} is not sha256:<64 hex digits>`);
  if (circuitIdOf(vkHash) !== id) throw new CircuitSourceError(`${where}: ${id} does not match its vk_hash ${vkHash}`);
}

async function fromDirectory(dir: string): Promise<LoadedCircuit> {
  const read = async (file: keyof typeof CEREMONY_FILES) => {
    try {
      return new Uint8Array(await readFile(join(dir, CEREMONY_FILES[file])));
    } catch (error) {
      throw new CircuitSourceError(`${join(dir, CEREMONY_FILES[file])}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  };
  const [zkey, wasm, vkBytes, transcriptBytes] = await Promise.all([read("zkey"), read("wasm"), read("vk"), read("transcript")]);
  // The zkey must be the one the ceremony's last step wrote (zkagent ceremony verify checks the rest).
  const transcript = JSON.parse(new TextDecoder().decode(transcriptBytes)) as { steps?: { zkey_sha256?: string }[] };
  if (transcript.steps?.at(-1)?.zkey_sha256 !== sha256(zkey)) throw new CircuitSourceError(`${dir}: the zkey is not the one its transcript ends with`);
  const vkHash = vkHashOf(JSON.parse(new TextDecoder().decode(vkBytes)));
  await checkZkey(zkey, pinnedCircuitOf(wasm, dir), vkHash, dir);
  return { id: circuitIdOf(vkHash), zkey, wasm, vkHash };
}

interface Published {
  id: string;
  vk_hash: string;
  zkey_sha256: string;
  wasm_sha256: string;
}

/** `…/v1/circuits/{id}` → the list's URL and the id, once the source's scheme and host are acceptable. */
function parseCircuitUrl(source: string, options: LoadCircuitOptions): { origin: string; list: string; id: string } {
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    throw new CircuitSourceError(`${source} is not a URL`);
  }
  if (!acceptedSource(url, options.allowInsecureLoopback)) {
    throw new CircuitSourceError(`${url.origin}: only https:// circuit sources are accepted (http:// only to a loopback host, with allowInsecureLoopback)`);
  }
  const match = /^(.*)\/v1\/circuits\/([^/]+)\/?$/.exec(url.pathname);
  if (!match) throw new CircuitSourceError(`${source} is not a …/v1/circuits/{id} URL`);
  // The id goes into a cache path: only the form ids have, never a decoded "%2F".
  const id = match[2]!;
  if (!ID.test(id)) throw new CircuitSourceError(`${source}: ${JSON.stringify(id)} is not a circuit id (<name>-<16 hex digits>)`);
  return { origin: url.origin, list: `${url.origin}${match[1]}/v1/circuits`, id };
}

/**
 * GET `url`, at most `limit` bytes (refused as soon as the header or the
 * streamed body says more), following redirects only within its origin.
 * Returns the body and its SHA-256, hashed as it arrived.
 */
async function download(url: string, limit: number, what: string, get: typeof fetch, timeoutMs: number): Promise<{ bytes: Uint8Array; sha256: string }> {
  const origin = new URL(url).origin;
  let current = url;
  const signal = AbortSignal.timeout(timeoutMs);
  const timedOut = (error: unknown) => {
    if (!signal.aborted) throw error;
    throw new CircuitSourceError(`GET ${current}: no answer within ${timeoutMs / 1000} s`);
  };
  for (let hop = 0; ; hop++) {
    const response = await get(current, { redirect: "manual", signal }).catch(timedOut);
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      const location = response.headers.get("location");
      if (!location || hop >= MAX_REDIRECTS) throw new CircuitSourceError(`GET ${current}: HTTP ${response.status} without a usable redirect`);
      const next = new URL(location, current);
      if (next.origin !== origin) throw new CircuitSourceError(`GET ${current}: redirected to another origin (${next.origin}): refused`);
      current = next.href;
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new CircuitSourceError(`GET ${current}: HTTP ${response.status}`);
    }
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    if (declared > limit) {
      await response.body?.cancel();
      throw new CircuitSourceError(`GET ${current}: the ${what} is ${declared} bytes, more than the ${limit} accepted: refused`);
    }
    const body = await readBounded(response, limit).catch(timedOut);
    if (body === null) throw new CircuitSourceError(`GET ${current}: the ${what} is more than the ${limit} bytes accepted: refused while downloading`);
    return body;
  }
}

/** The list's entry for `id`, its fields checked for form. */
function publishedEntry(body: Uint8Array, list: string, id: string): Published {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new CircuitSourceError(`GET ${list}: not JSON`);
  }
  const circuits = (parsed as { circuits?: unknown }).circuits;
  if (!Array.isArray(circuits)) throw new CircuitSourceError(`GET ${list}: no circuits array`);
  const entry = circuits.find((c) => (c as Published | null)?.id === id) as Published | undefined;
  if (!entry) throw new CircuitSourceError(`${list} lists no circuit ${id}`);
  checkId(id, String(entry.vk_hash), list);
  for (const field of ["zkey_sha256", "wasm_sha256"] as const) {
    if (typeof entry[field] !== "string" || !HEX64.test(entry[field])) throw new CircuitSourceError(`${list}: ${id}'s ${field} is not 64 hex digits`);
  }
  return entry;
}

/** The cache directory of one circuit of one service: under `root`, named by a hash of the origin and by the (validated) id. */
export function cacheDirOf(root: string, origin: string, id: string): string {
  const dir = resolve(root, createHash("sha256").update(origin).digest("hex").slice(0, 32), id);
  if (!ID.test(id) || !dir.startsWith(resolve(root) + sep)) throw new CircuitSourceError(`${id}: not a cache entry`);
  return dir;
}

async function fromService(source: string, options: LoadCircuitOptions): Promise<LoadedCircuit> {
  const get = options.fetch ?? fetch;
  const { origin, list, id } = parseCircuitUrl(source, options);
  const published = publishedEntry((await download(list, DOWNLOAD_LIMITS.list, "list", get, options.timeoutMs ?? 30_000)).bytes, list, id);
  // The wasm is refused by its published hash before a byte of it is downloaded.
  const pin = pinnedByWasm(published.wasm_sha256);
  if (!pin || `${pin.name}-` !== id.slice(0, pin.name.length + 1)) {
    throw new CircuitSourceError(`${list}: ${id}'s wasm (SHA-256 ${published.wasm_sha256}) is not a witness generator this SDK pins: refused`);
  }
  const dir = cacheDirOf(options.cacheDir ?? DEFAULT_CACHE_DIR, origin, id);
  const base = `${list}/${id}`;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const wasm = await cached(dir, "wasm", published.wasm_sha256, `${base}/wasm`, pin.wasmBytes, get, timeoutMs);
  pinnedCircuitOf(wasm, `${base}/wasm`);
  const zkey = await cached(dir, "zkey", published.zkey_sha256, `${base}/zkey`, DOWNLOAD_LIMITS.zkey, get, timeoutMs, (bytes) =>
    checkZkey(bytes, pin, published.vk_hash, `${base}/zkey`),
  );
  // Checked again when read from the cache: the list's vk_hash may have changed since.
  await checkZkey(zkey, pin, published.vk_hash, `${base}/zkey`);
  return { id, zkey, wasm, vkHash: published.vk_hash };
}

/** The artifact from the cache if it is there (refused when it no longer hashes to `expected`), else downloaded, checked and cached. */
async function cached(
  dir: string,
  name: "zkey" | "wasm",
  expected: string,
  url: string,
  limit: number,
  get: typeof fetch,
  timeoutMs: number,
  check?: (bytes: Uint8Array) => Promise<void>,
): Promise<Uint8Array> {
  const path = join(dir, name);
  let bytes: Uint8Array | null = null;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  if (bytes) {
    if (sha256(bytes) !== expected) {
      throw new CircuitSourceError(
        `the cached ${name} at ${path} does not hash to the published SHA-256 ${expected}: refused (delete it to download it again)`,
      );
    }
    return bytes;
  }
  const downloaded = await download(url, limit, name, get, timeoutMs);
  if (downloaded.sha256 !== expected) throw new CircuitSourceError(`GET ${url}: the ${name} does not hash to the published SHA-256 ${expected}: refused`);
  await check?.(downloaded.bytes);
  await mkdir(dir, { recursive: true });
  const temporary = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporary, downloaded.bytes, { flag: "wx" });
  await rename(temporary, path);
  return downloaded.bytes;
}
