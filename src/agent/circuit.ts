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
// An artifact whose hash is not the published one is refused, never used: a
// zkey swapped in the cache would make proofs the service rejects at best,
// and the wasm is code the agent runs.
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { CEREMONY_FILES, shippedFile } from "../circuits/shipped";
import { circuitIdOf, SHIPPED_CIRCUIT_ID, SHIPPED_VK_HASH } from "../circuits/version";
import { sha256Hex as sha256, vkHash as vkHashOf } from "../receipts/circuit";

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
}

/** An artifact that is not what the service published (a download or a cached copy), or a source that names no circuit. */
export class CircuitSourceError extends Error {}

export const DEFAULT_CACHE_DIR = join(homedir(), ".cache", "zkagent", "circuits");

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
  if (/^https?:\/\//i.test(source)) return fromService(source, options);
  return fromDirectory(source);
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
  return { id: circuitIdOf(vkHash), zkey, wasm, vkHash };
}

interface Published {
  id: string;
  vk_hash: string;
  zkey_sha256: string;
  wasm_sha256: string;
}

/** `…/v1/circuits/{id}` → the list's URL and the id. */
function parseCircuitUrl(source: string): { list: string; id: string } {
  const url = new URL(source);
  const match = /^(.*)\/v1\/circuits\/([^/]+)\/?$/.exec(url.pathname);
  if (!match) throw new CircuitSourceError(`${source} is not a …/v1/circuits/{id} URL`);
  return { list: `${url.origin}${match[1]}/v1/circuits`, id: decodeURIComponent(match[2]!) };
}

async function fromService(source: string, options: LoadCircuitOptions): Promise<LoadedCircuit> {
  const get = options.fetch ?? fetch;
  const { list, id } = parseCircuitUrl(source);
  const response = await get(list, { signal: AbortSignal.timeout(30_000) });
  if (!response.ok) throw new CircuitSourceError(`GET ${list}: HTTP ${response.status}`);
  const { circuits } = (await response.json()) as { circuits: Published[] };
  const published = circuits.find((c) => c.id === id);
  if (!published) throw new CircuitSourceError(`${list} lists no circuit ${id}`);
  // The id is derived from the key: a list that pairs them otherwise is not to be believed.
  if (circuitIdOf(published.vk_hash) !== id) throw new CircuitSourceError(`${id} does not match its published vk_hash ${published.vk_hash}`);
  const dir = join(options.cacheDir ?? DEFAULT_CACHE_DIR, id);
  const [zkey, wasm] = await Promise.all([
    cached(dir, "zkey", published.zkey_sha256, `${list}/${encodeURIComponent(id)}/zkey`, get),
    cached(dir, "wasm", published.wasm_sha256, `${list}/${encodeURIComponent(id)}/wasm`, get),
  ]);
  return { id, zkey, wasm, vkHash: published.vk_hash };
}

/** The artifact from the cache if it is there (refused when it no longer hashes to `expected`), else downloaded, checked and cached. */
async function cached(dir: string, name: "zkey" | "wasm", expected: string, url: string, get: typeof fetch): Promise<Uint8Array> {
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
  const response = await get(url, { signal: AbortSignal.timeout(60_000) });
  if (!response.ok) throw new CircuitSourceError(`GET ${url}: HTTP ${response.status}`);
  bytes = new Uint8Array(await response.arrayBuffer());
  if (sha256(bytes) !== expected) throw new CircuitSourceError(`GET ${url}: the ${name} does not hash to the published SHA-256 ${expected}: refused`);
  await mkdir(dir, { recursive: true });
  await writeFile(`${path}.${process.pid}.tmp`, bytes);
  await rename(`${path}.${process.pid}.tmp`, path);
  return bytes;
}
