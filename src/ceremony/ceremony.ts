// Phase 2 of the Groth16 setup as a ceremony anyone can run and check, on
// snarkjs's own zkey functions (src/ceremony/snarkjs.ts); nothing of the MPC
// is written here. A ceremony is a directory passed from one participant to
// the next:
//
//   agent_identity.r1cs, .wasm   the circuit (the repository's, byte for byte)
//   agent_identity.zkey          the key after the latest step
//   verification_key.json        exported from that zkey
//   transcript.json              every step: who, its hash, the zkey after it
//
// init      r1cs + pinned phase-1 ptau → the initial zkey (no contribution yet)
// contribute  a contribution with entropy from the operating system only
// beacon    a final contribution from a public value (numIterationsExp rounds)
// verify    r1cs → pinned ptau → every contribution → final zkey → vk
//
// Soundness needs one honest participant in phase 1 (the public ceremony)
// and one in phase 2: whoever contributed honestly (and forgot their
// entropy) can trust the key. verify shows what each participant needs to
// see: their own contribution hash in the chain snarkjs recomputes.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CEREMONY_FILES, CIRCUIT_NAME, type CeremonyFile, shippedFile } from "../circuits/shipped";
import { sha256Hex as sha256, vkHash as vkHashOf } from "../receipts/circuit";
import { PTAU_BLAKE2B512, PTAU_NAME, PTAU_SOURCE, PtauMismatchError, readPinnedPtau } from "./ptau";
import { type SnarkjsLogger, zKey } from "./snarkjs";

export const TRANSCRIPT_FORMAT = "zkagent-ceremony/1";

export interface TranscriptStep {
  step: "init" | "contribution" | "beacon";
  /** ISO 8601 time the step was made (as the participant's clock says). */
  at: string;
  /** The contributor's name as stored in the zkey (contribution and beacon). */
  name?: string;
  /** BLAKE2b-512 contribution hash, hex, as snarkjs computes it (contribution and beacon). */
  hash?: string;
  /** The beacon value, hex, and 2^iterations_exp hash rounds (beacon only). */
  beacon?: string;
  iterations_exp?: number;
  /** SHA-256 of the zkey this step wrote. */
  zkey_sha256: string;
}

export interface Transcript {
  format: typeof TRANSCRIPT_FORMAT;
  circuit: string;
  r1cs_sha256: string;
  wasm_sha256: string;
  ptau: { name: string; blake2b512: string; source: string };
  steps: TranscriptStep[];
}

export class CeremonyError extends Error {}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
const mem = (data: Uint8Array) => ({ type: "mem" as const, data });
const quiet: SnarkjsLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** A contributor name: printable, one line, at most 64 characters (it is stored in the zkey and shown to everyone). */
export function checkName(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  if (name.length === 0 || name.length > 64 || /[\u0000-\u001f\u007f-\u009f]/.test(name)) {
    throw new CeremonyError("the name must be 1–64 printable characters");
  }
  return name;
}

async function readDir(dir: string, file: CeremonyFile): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(join(dir, CEREMONY_FILES[file])));
  } catch (error) {
    throw new CeremonyError(`${join(dir, CEREMONY_FILES[file])}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** Writes beside, then renames: a reader never sees half a file, an interrupted step leaves the last good one. */
async function writeDir(dir: string, file: CeremonyFile, data: Uint8Array | string): Promise<void> {
  const path = join(dir, CEREMONY_FILES[file]);
  await writeFile(`${path}.tmp`, data);
  await rename(`${path}.tmp`, path);
}

export async function readTranscript(dir: string): Promise<Transcript> {
  const text = new TextDecoder().decode(await readDir(dir, "transcript"));
  let parsed: Transcript;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CeremonyError(`${join(dir, CEREMONY_FILES.transcript)} is not JSON`);
  }
  if (parsed?.format !== TRANSCRIPT_FORMAT || !Array.isArray(parsed.steps) || parsed.steps.length === 0) {
    throw new CeremonyError(`${join(dir, CEREMONY_FILES.transcript)} is not a ${TRANSCRIPT_FORMAT} transcript`);
  }
  return parsed;
}

const writeTranscript = (dir: string, transcript: Transcript) => writeDir(dir, "transcript", `${JSON.stringify(transcript, null, 2)}\n`);

async function exportVk(zkey: Uint8Array): Promise<Record<string, unknown>> {
  return zKey.exportVerificationKey(mem(zkey), quiet);
}

/** A temporary file snarkjs writes its output zkey to (fastfile's memory files are for reading). */
async function runToZkey(dir: string, step: (out: string) => Promise<unknown>): Promise<{ zkey: Uint8Array; result: unknown }> {
  const out = join(dir, `${CEREMONY_FILES.zkey}.next`);
  const result = await step(out);
  if (result === false) throw new CeremonyError("snarkjs refused the step");
  const zkey = new Uint8Array(await readFile(out));
  await rename(out, join(dir, CEREMONY_FILES.zkey));
  return { zkey, result };
}

/** init: the circuit and the pinned ptau → DIR with the initial zkey (no contribution: not usable yet). */
export async function initCeremony(dir: string, options: { ptau?: string; now?: () => Date } = {}): Promise<Transcript> {
  if (existsSync(join(dir, CEREMONY_FILES.transcript))) throw new CeremonyError(`${dir} already holds a ceremony`);
  const ptau = await readPinnedPtau(options.ptau);
  const [r1cs, wasm] = await Promise.all([shippedFile("r1cs"), shippedFile("wasm")]);
  await mkdir(dir, { recursive: true });
  await writeDir(dir, "r1cs", r1cs);
  await writeDir(dir, "wasm", wasm);
  const { zkey } = await runToZkey(dir, (out) => zKey.newZKey(mem(r1cs), mem(ptau), out, quiet));
  await writeDir(dir, "vk", `${JSON.stringify(await exportVk(zkey), null, 1)}\n`);
  const transcript: Transcript = {
    format: TRANSCRIPT_FORMAT,
    circuit: CIRCUIT_NAME,
    r1cs_sha256: sha256(r1cs),
    wasm_sha256: sha256(wasm),
    ptau: { name: PTAU_NAME, blake2b512: PTAU_BLAKE2B512, source: PTAU_SOURCE },
    steps: [{ step: "init", at: (options.now?.() ?? new Date()).toISOString(), zkey_sha256: sha256(zkey) }],
  };
  await writeTranscript(dir, transcript);
  return transcript;
}

async function lastZkey(dir: string): Promise<{ transcript: Transcript; zkey: Uint8Array }> {
  const transcript = await readTranscript(dir);
  const zkey = await readDir(dir, "zkey");
  if (sha256(zkey) !== transcript.steps.at(-1)!.zkey_sha256) throw new CeremonyError(`${CEREMONY_FILES.zkey} is not the zkey of the transcript's last step`);
  if (transcript.steps.some((s) => s.step === "beacon")) throw new CeremonyError("the ceremony is closed: its beacon is applied");
  return { transcript, zkey };
}

/**
 * contribute: one more contribution, its secret from the operating system's
 * CSPRNG (64 bytes; snarkjs mixes in 64 more of its own) and dropped when
 * the call returns. No argument can supply it: a contributor who could
 * choose it could also remember it.
 */
export async function contribute(dir: string, name: string, options: { now?: () => Date } = {}): Promise<TranscriptStep> {
  checkName(name);
  const { transcript, zkey } = await lastZkey(dir);
  const entropy = randomBytes(64).toString("hex");
  const { zkey: next, result } = await runToZkey(dir, (out) => zKey.contribute(mem(zkey), out, name, entropy, quiet));
  const step: TranscriptStep = {
    step: "contribution",
    at: (options.now?.() ?? new Date()).toISOString(),
    name,
    hash: hex(result as Uint8Array),
    zkey_sha256: sha256(next),
  };
  await writeDir(dir, "vk", `${JSON.stringify(await exportVk(next), null, 1)}\n`);
  transcript.steps.push(step);
  await writeTranscript(dir, transcript);
  return step;
}

/** beacon: the closing contribution from a public value, 2^iterationsExp hash rounds (snarkjs zkey beacon). */
export async function applyBeacon(
  dir: string,
  beaconHex: string,
  iterationsExp: number,
  options: { name?: string; now?: () => Date } = {},
): Promise<TranscriptStep> {
  if (!/^([0-9a-f]{2}){1,64}$/i.test(beaconHex)) throw new CeremonyError("the beacon must be 1–64 bytes of hex");
  if (!Number.isInteger(iterationsExp) || iterationsExp < 10 || iterationsExp > 63)
    throw new CeremonyError("--iterations must be an integer in [10, 63] (snarkjs's range)");
  const name = checkName(options.name ?? "beacon");
  const { transcript, zkey } = await lastZkey(dir);
  if (!transcript.steps.some((s) => s.step === "contribution")) throw new CeremonyError("contribute at least once before the beacon");
  const beacon = beaconHex.toLowerCase();
  const { zkey: next, result } = await runToZkey(dir, (out) => zKey.beacon(mem(zkey), out, name, beacon, iterationsExp, quiet));
  const step: TranscriptStep = {
    step: "beacon",
    at: (options.now?.() ?? new Date()).toISOString(),
    name,
    hash: hex(result as Uint8Array),
    beacon,
    iterations_exp: iterationsExp,
    zkey_sha256: sha256(next),
  };
  await writeDir(dir, "vk", `${JSON.stringify(await exportVk(next), null, 1)}\n`);
  transcript.steps.push(step);
  await writeTranscript(dir, transcript);
  return step;
}

/** One contribution as snarkjs's verification reads it back out of the zkey. */
export interface VerifiedContribution {
  index: number;
  name: string;
  hash: string;
  beacon?: string;
  iterations_exp?: number;
}

export interface Check {
  check: string;
  ok: boolean;
  detail: string;
}

export interface CeremonyReport {
  ok: boolean;
  checks: Check[];
  contributions: VerifiedContribution[];
  vk_hash: string | null;
  zkey_sha256: string | null;
  wasm_sha256: string | null;
}

/** The files of a ceremony, wherever they are: a directory, the shipped circuit, rows of the store. */
export interface CeremonyFiles {
  r1cs: Uint8Array;
  wasm: Uint8Array;
  zkey: Uint8Array;
  vk: Uint8Array;
  transcript: Uint8Array;
}

/** Every file of a ceremony, each read with `read`. */
async function ceremonyFiles(read: (file: CeremonyFile) => Promise<Uint8Array>): Promise<CeremonyFiles> {
  const [r1cs, wasm, zkey, vk, transcript] = await Promise.all((["r1cs", "wasm", "zkey", "vk", "transcript"] as const).map(read));
  return { r1cs: r1cs!, wasm: wasm!, zkey: zkey!, vk: vk!, transcript: transcript! };
}

export const readCeremonyDir = (dir: string): Promise<CeremonyFiles> => ceremonyFiles((file) => readDir(dir, file));
export const shippedCeremony = (): Promise<CeremonyFiles> => ceremonyFiles(shippedFile);

/**
 * snarkjs's log of verifyFromR1cs, read back: it prints every contribution
 * (newest first) as "contribution #i NAME:" and its hash in four rows of
 * 32-bit words, and, for a beacon, the beacon value and its iterations.
 */
export function parseVerifyLog(lines: readonly string[]): VerifiedContribution[] {
  const found: VerifiedContribution[] = [];
  for (const line of lines) {
    const head = /^contribution #(\d+) ?([\s\S]*?):\n([\s\S]*)$/.exec(line);
    if (head) {
      found.push({ index: Number(head[1]), name: head[2]!, hash: head[3]!.replace(/\s+/g, "") });
      continue;
    }
    const last = found.at(-1);
    const beacon = /^Beacon generator: ([0-9a-f]+)$/.exec(line);
    if (beacon && last) last.beacon = beacon[1];
    const iterations = /^Beacon iterations Exp: (\d+)$/.exec(line);
    if (iterations && last) last.iterations_exp = Number(iterations[1]);
  }
  return found.sort((a, b) => a.index - b.index);
}

/**
 * verify: every link from the circuit to the verification key, each a check
 * in the report (ok only when all hold):
 *   r1cs        the repository's circuit (its SHA-256 is the shipped r1cs's)
 *   wasm        the repository's witness generator
 *   ptau        BLAKE2b-512 is the pinned public phase 1
 *   zkey        snarkjs zkey verify: the zkey derives from r1cs + ptau
 *               through every contribution recorded in it
 *   contributions  at least one, and the transcript lists exactly those
 *               (names, hashes, beacon) in that order
 *   transcript  the final zkey is the one the transcript's last step wrote
 *   vk          verification_key.json is the zkey's
 */
export async function verifyCeremony(files: CeremonyFiles, options: { ptau?: string } = {}): Promise<CeremonyReport> {
  const checks: Check[] = [];
  const report: CeremonyReport = { ok: false, checks, contributions: [], vk_hash: null, zkey_sha256: sha256(files.zkey), wasm_sha256: sha256(files.wasm) };
  const add = (check: string, ok: boolean, detail: string) => (checks.push({ check, ok, detail }), ok);
  const done = () => ((report.ok = checks.every((c) => c.ok)), report);

  let transcript: Transcript;
  try {
    transcript = JSON.parse(new TextDecoder().decode(files.transcript));
    if (transcript?.format !== TRANSCRIPT_FORMAT || !Array.isArray(transcript.steps)) throw new Error();
  } catch {
    add("transcript", false, `not a ${TRANSCRIPT_FORMAT} transcript`);
    return done();
  }
  const [shippedR1cs, shippedWasm] = await Promise.all([shippedFile("r1cs"), shippedFile("wasm")]);
  const r1csHash = sha256(files.r1cs);
  add("r1cs", r1csHash === sha256(shippedR1cs) && r1csHash === transcript.r1cs_sha256, `sha256 ${r1csHash}`);
  const wasmHash = report.wasm_sha256;
  add("wasm", wasmHash === sha256(shippedWasm) && wasmHash === transcript.wasm_sha256, `sha256 ${wasmHash}`);
  let ptau: Uint8Array;
  try {
    ptau = await readPinnedPtau(options.ptau);
    add("ptau", true, `BLAKE2b-512 ${PTAU_BLAKE2B512.slice(0, 32)}… (${PTAU_NAME})`);
  } catch (error) {
    if (!(error instanceof PtauMismatchError) && !(error as NodeJS.ErrnoException).code) throw error;
    add("ptau", false, (error as Error).message);
    return done();
  }

  const log: string[] = [];
  const errors: string[] = [];
  const logger: SnarkjsLogger = { debug() {}, info: (m) => log.push(m), warn: (m) => errors.push(m), error: (m) => errors.push(m) };
  let zkeyOk = false;
  try {
    zkeyOk = await zKey.verifyFromR1cs(mem(files.r1cs), mem(ptau), mem(files.zkey), logger);
  } catch (error) {
    errors.push((error as Error).message);
  }
  add("zkey", zkeyOk, zkeyOk ? "snarkjs zkey verify: ZKey Ok!" : `snarkjs zkey verify failed: ${errors.join("; ") || "invalid"}`);
  if (!zkeyOk) return done();

  const contributions = parseVerifyLog(log);
  report.contributions = contributions;
  const recorded = transcript.steps.filter((s) => s.step !== "init");
  const same =
    recorded.length === contributions.length &&
    recorded.every((s, i) => {
      const c = contributions[i]!;
      return (
        s.name === c.name &&
        s.hash === c.hash &&
        (s.step === "beacon") === (c.beacon !== undefined) &&
        s.beacon === c.beacon &&
        s.iterations_exp === c.iterations_exp
      );
    });
  add(
    "contributions",
    contributions.length > 0 && same,
    contributions.length === 0
      ? "none: the key's toxic waste is known"
      : same
        ? `${contributions.length} in the zkey, as the transcript lists them`
        : "the transcript does not list the zkey's contributions",
  );
  add("transcript", transcript.steps.at(-1)?.zkey_sha256 === report.zkey_sha256, `final zkey sha256 ${report.zkey_sha256}`);

  const exported = await exportVk(files.zkey);
  let committed: unknown = null;
  try {
    committed = JSON.parse(new TextDecoder().decode(files.vk));
  } catch {}
  report.vk_hash = vkHashOf(exported);
  add("vk", committed !== null && vkHashOf(committed) === report.vk_hash, `vk_hash ${report.vk_hash}`);
  return done();
}
