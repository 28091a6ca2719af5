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
//
// The directory is hostile input (src/ceremony/files.ts): checked whole before
// a step reads or writes it, and the transcript is parsed into its known
// fields only (parseTranscript) and written back from them.
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CEREMONY_FILES, CIRCUIT_NAME, type CeremonyFile, shippedFile } from "../circuits/shipped";
import { sha256Hex as sha256, vkHash as vkHashOf } from "../receipts/circuit";
import { CeremonyError, parseTranscript, TRANSCRIPT_FORMAT, type Transcript, type TranscriptStep, transcriptText } from "./transcript";
import { type ZkeyContribution, ZkeyContributionsError, zkeyContributions } from "./contributions";
import { CEREMONY_FILE_LIMITS } from "./limits";
import { CeremonyDirError, type CeremonyFileNames, checkCeremonyDir, readCeremonyFile, stepArea } from "./files";
export { CeremonyError, parseTranscript, TRANSCRIPT_FORMAT, type Transcript, type TranscriptStep, transcriptText } from "./transcript";
import { AGENT_CEREMONY, type CeremonyCircuit, ceremonyCircuit } from "./circuits";
import { PTAU_BLAKE2B512, PTAU_NAME, PtauMismatchError, readPinnedPtau } from "./ptau";
import { type SnarkjsLogger, zKey } from "./snarkjs";

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

async function readDir(dir: string, file: CeremonyFile, names: CeremonyFileNames = CEREMONY_FILES): Promise<Uint8Array> {
  try {
    return await readCeremonyFile(dir, file, names);
  } catch (error) {
    if (error instanceof CeremonyDirError) throw new CeremonyError(error.message);
    throw error;
  }
}

/** Refuses a directory with anything but regular files and directories in it (before a step reads or writes anything). */
async function checkDir(dir: string, names: CeremonyFileNames = CEREMONY_FILES): Promise<void> {
  try {
    await checkCeremonyDir(dir, names);
  } catch (error) {
    if (error instanceof CeremonyDirError) throw new CeremonyError(error.message);
    throw error;
  }
}

export async function readTranscript(dir: string): Promise<Transcript> {
  return parseTranscript(await readDir(dir, "transcript"), join(dir, CEREMONY_FILES.transcript));
}

async function exportVk(zkey: Uint8Array): Promise<Record<string, unknown>> {
  return zKey.exportVerificationKey(mem(zkey), quiet);
}

/** The initial zkey of the circuit on the pinned ptau: deterministic, so anyone can recompute a transcript's init hash. */
async function initialZkey(r1cs: Uint8Array, ptau: Uint8Array): Promise<Uint8Array> {
  const scratch = await mkdtemp(join(tmpdir(), "zkagent-init-"));
  try {
    const out = join(scratch, CEREMONY_FILES.zkey);
    await zKey.newZKey(mem(r1cs), mem(ptau), out, quiet);
    return new Uint8Array(await readFile(out));
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** One step's outputs, written in a fresh area of `dir` and renamed into place: the zkey (snarkjs writes it), the vk and the transcript. */
async function writeStep(
  dir: string,
  circuit: CeremonyCircuit,
  run: (out: string) => Promise<unknown>,
  transcript: (zkey: Uint8Array, result: unknown) => Transcript,
) {
  const area = await stepArea(dir, circuit.files);
  try {
    const out = area.path(circuit.files.zkey);
    const result = await run(out);
    if (result === false) throw new CeremonyError("snarkjs refused the step");
    const zkey = new Uint8Array(await readFile(out));
    await area.write("vk", `${JSON.stringify(await exportVk(zkey), null, 1)}\n`);
    const next = transcript(zkey, result);
    await area.write("transcript", transcriptText(next));
    // snarkjs wrote the zkey itself (in the fresh area); it is committed with the others.
    await area.adopt("zkey");
    await area.commit();
    return next;
  } finally {
    await area.discard();
  }
}

/** init: the circuit (the agent's unless named) and its pinned ptau → DIR with the initial zkey (no contribution: not usable yet). */
export async function initCeremony(dir: string, options: { ptau?: string; now?: () => Date; circuit?: CeremonyCircuit } = {}): Promise<Transcript> {
  const circuit = options.circuit ?? AGENT_CEREMONY;
  if (existsSync(join(dir, circuit.files.transcript))) throw new CeremonyError(`${dir} already holds a ceremony`);
  const ptau = await readPinnedPtau(options.ptau, circuit.ptau);
  const [r1cs, wasm] = await Promise.all([circuit.source("r1cs"), circuit.source("wasm")]);
  await mkdir(dir, { recursive: true });
  await checkDir(dir, circuit.files);
  const area = await stepArea(dir, circuit.files);
  try {
    await area.write("r1cs", r1cs);
    await area.write("wasm", wasm);
    await area.commit();
  } finally {
    await area.discard();
  }
  return writeStep(
    dir,
    circuit,
    (out) => zKey.newZKey(mem(r1cs), mem(ptau), out, quiet),
    (zkey) => ({
      format: TRANSCRIPT_FORMAT,
      circuit: circuit.name,
      r1cs_sha256: sha256(r1cs),
      wasm_sha256: sha256(wasm),
      ptau: { name: circuit.ptau.name, blake2b512: circuit.ptau.blake2b512, source: circuit.ptau.source },
      steps: [{ step: "init", at: (options.now?.() ?? new Date()).toISOString(), zkey_sha256: sha256(zkey) }],
    }),
  );
}

/** The circuit a transcript is for, among those a ceremony can be run for. */
function circuitOf(transcript: Transcript): CeremonyCircuit {
  const circuit = ceremonyCircuit(transcript.circuit);
  if (!circuit) throw new CeremonyError(`the transcript is for ${JSON.stringify(transcript.circuit)}, not a circuit this build knows`);
  return circuit;
}

async function lastZkey(dir: string): Promise<{ transcript: Transcript; zkey: Uint8Array; circuit: CeremonyCircuit }> {
  await checkDir(dir);
  const transcript = await readTranscript(dir);
  const circuit = circuitOf(transcript);
  await checkDir(dir, circuit.files);
  const zkey = await readDir(dir, "zkey", circuit.files);
  if (sha256(zkey) !== transcript.steps.at(-1)!.zkey_sha256) throw new CeremonyError(`${circuit.files.zkey} is not the zkey of the transcript's last step`);
  if (transcript.steps.some((s) => s.step === "beacon")) throw new CeremonyError("the ceremony is closed: its beacon is applied");
  return { transcript, zkey, circuit };
}

/**
 * contribute: one more contribution, its secret from the operating system's
 * CSPRNG (64 bytes; snarkjs mixes in 64 more of its own) and dropped when
 * the call returns. No argument can supply it: a contributor who could
 * choose it could also remember it.
 */
export async function contribute(dir: string, name: string, options: { now?: () => Date } = {}): Promise<TranscriptStep> {
  checkName(name);
  const { transcript, zkey, circuit } = await lastZkey(dir);
  const entropy = randomBytes(64).toString("hex");
  const at = (options.now?.() ?? new Date()).toISOString();
  const next = await writeStep(
    dir,
    circuit,
    (out) => zKey.contribute(mem(zkey), out, name, entropy, quiet),
    (written, result) => ({
      ...transcript,
      steps: [...transcript.steps, { step: "contribution", at, name, hash: hex(result as Uint8Array), zkey_sha256: sha256(written) }],
    }),
  );
  return next.steps.at(-1)!;
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
  const { transcript, zkey, circuit } = await lastZkey(dir);
  if (!transcript.steps.some((s) => s.step === "contribution")) throw new CeremonyError("contribute at least once before the beacon");
  const beacon = beaconHex.toLowerCase();
  const at = (options.now?.() ?? new Date()).toISOString();
  const next = await writeStep(
    dir,
    circuit,
    (out) => zKey.beacon(mem(zkey), out, name, beacon, iterationsExp, quiet),
    (written, result) => ({
      ...transcript,
      steps: [
        ...transcript.steps,
        { step: "beacon", at, name, hash: hex(result as Uint8Array), beacon, iterations_exp: iterationsExp, zkey_sha256: sha256(written) },
      ],
    }),
  );
  return next.steps.at(-1)!;
}

export interface Check {
  check: string;
  ok: boolean;
  detail: string;
}

export interface CeremonyReport {
  ok: boolean;
  checks: Check[];
  contributions: ZkeyContribution[];
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

/**
 * A ceremony directory's files, once the directory is checked (files.ts):
 * nothing is read from one holding a link, a FIFO or a device. The file
 * names are those of the circuit its transcript names (the agent circuit's
 * when the transcript cannot be read: verify then says why).
 */
export async function readCeremonyDir(dir: string): Promise<CeremonyFiles> {
  await checkDir(dir);
  let names: CeremonyFileNames = CEREMONY_FILES;
  try {
    names = ceremonyCircuit((await readTranscript(dir)).circuit)?.files ?? CEREMONY_FILES;
  } catch (error) {
    if (!(error instanceof CeremonyError)) throw error;
  }
  await checkDir(dir, names);
  return ceremonyFiles((file) => readDir(dir, file, names));
}
/** The ceremony a circuit ships with: the agent circuit's from the build, another's from its artifacts directory. */
export const shippedCeremony = (circuit: CeremonyCircuit = AGENT_CEREMONY): Promise<CeremonyFiles> =>
  circuit.shippedDir ? readCeremonyDir(circuit.shippedDir()) : ceremonyFiles(shippedFile);

/**
 * verify: every link from the circuit to the verification key, each a check
 * in the report (ok only when all hold). The transcript is checked, not
 * trusted: everything it says is compared with what is recomputed.
 *   transcript  a zkagent-ceremony/1 transcript (known step labels, well-formed fields)
 *   circuit     the transcript names this circuit
 *   r1cs        the repository's circuit (its SHA-256 is the shipped r1cs's, as the transcript says)
 *   wasm        the repository's witness generator, likewise
 *   ptau        the file is the pinned public phase 1, and the transcript names it (name and BLAKE2b-512)
 *   steps       init first and once, a beacon only last, times well-formed and in order
 *   init        the init step's zkey is the one r1cs + ptau give (recomputed)
 *   zkey        snarkjs zkey verify: the zkey derives from r1cs + ptau
 *               through every contribution recorded in it
 *   contributions  at least one, read from the zkey itself (names, hashes,
 *               beacon), and the transcript lists exactly those in that order
 *   transcript  (last) the final zkey is the one the transcript's last step wrote
 *   vk          verification_key.json is the zkey's
 */
export async function verifyCeremony(files: CeremonyFiles, options: { ptau?: string; circuit?: CeremonyCircuit } = {}): Promise<CeremonyReport> {
  const checks: Check[] = [];
  const report: CeremonyReport = { ok: false, checks, contributions: [], vk_hash: null, zkey_sha256: sha256(files.zkey), wasm_sha256: sha256(files.wasm) };
  const add = (check: string, ok: boolean, detail: string) => (checks.push({ check, ok, detail }), ok);
  const done = () => ((report.ok = checks.every((c) => c.ok)), report);

  let transcript: Transcript;
  try {
    transcript = parseTranscript(files.transcript);
  } catch (error) {
    if (!(error instanceof CeremonyError)) throw error;
    add("transcript", false, error.message);
    return done();
  }
  // The circuit asked for, else the one the transcript names, else the agent's: whichever, the transcript must name it.
  const circuit = options.circuit ?? ceremonyCircuit(transcript.circuit) ?? AGENT_CEREMONY;
  add(
    "circuit",
    transcript.circuit === circuit.name,
    `transcript names ${JSON.stringify(transcript.circuit)}${transcript.circuit === circuit.name ? "" : `, not ${circuit.name}`}`,
  );
  const [shippedR1cs, shippedWasm] = await Promise.all([circuit.source("r1cs"), circuit.source("wasm")]);
  const r1csHash = sha256(files.r1cs);
  add("r1cs", r1csHash === sha256(shippedR1cs) && r1csHash === transcript.r1cs_sha256, `sha256 ${r1csHash}`);
  const wasmHash = report.wasm_sha256;
  add("wasm", wasmHash === sha256(shippedWasm) && wasmHash === transcript.wasm_sha256, `sha256 ${wasmHash}`);
  let ptau: Uint8Array;
  try {
    ptau = await readPinnedPtau(options.ptau, circuit.ptau);
  } catch (error) {
    if (!(error instanceof PtauMismatchError) && !(error as NodeJS.ErrnoException).code) throw error;
    add("ptau", false, (error as Error).message);
    return done();
  }
  const pin = circuit.ptau;
  const namesPinned = transcript.ptau.name === pin.name && transcript.ptau.blake2b512 === pin.blake2b512;
  add(
    "ptau",
    namesPinned,
    namesPinned
      ? `BLAKE2b-512 ${pin.blake2b512.slice(0, 32)}… (${pin.name})`
      : `the transcript names ptau ${JSON.stringify(transcript.ptau.name)} (BLAKE2b-512 ${transcript.ptau.blake2b512.slice(0, 16)}…), not the pinned ${pin.name} (${pin.blake2b512.slice(0, 16)}…)`,
  );
  add("steps", ...stepOrder(transcript.steps));
  // A transcript that already fails its own checks is not worth the seconds of the cryptographic ones.
  if (!checks.every((c) => c.ok)) return done();
  const init = sha256(await initialZkey(files.r1cs, ptau));
  add(
    "init",
    transcript.steps[0]!.zkey_sha256 === init,
    `the initial zkey is ${init}${transcript.steps[0]!.zkey_sha256 === init ? "" : `, the transcript says ${transcript.steps[0]!.zkey_sha256}`}`,
  );

  const errors: string[] = [];
  const logger: SnarkjsLogger = { debug() {}, info() {}, warn: (m) => errors.push(m), error: (m) => errors.push(m) };
  let zkeyOk = false;
  try {
    zkeyOk = await zKey.verifyFromR1cs(mem(files.r1cs), mem(ptau), mem(files.zkey), logger);
  } catch (error) {
    errors.push((error as Error).message);
  }
  add("zkey", zkeyOk, zkeyOk ? "snarkjs zkey verify: ZKey Ok!" : `snarkjs zkey verify failed: ${errors.join("; ") || "invalid"}`);
  if (!zkeyOk) return done();

  let contributions: ZkeyContribution[];
  try {
    contributions = await zkeyContributions(files.zkey);
  } catch (error) {
    if (!(error instanceof ZkeyContributionsError)) throw error;
    add("contributions", false, error.message);
    return done();
  }
  report.contributions = contributions;
  const mismatch = contributionMismatch(transcript, contributions);
  add(
    "contributions",
    contributions.length > 0 && !mismatch,
    contributions.length === 0 ? "none: the key's toxic waste is known" : (mismatch ?? `${contributions.length} in the zkey, as the transcript lists them`),
  );
  add("transcript", transcript.steps.at(-1)!.zkey_sha256 === report.zkey_sha256, `final zkey sha256 ${report.zkey_sha256}`);

  const exported = await exportVk(files.zkey);
  let committed: unknown = null;
  try {
    committed = JSON.parse(new TextDecoder().decode(files.vk));
  } catch {}
  report.vk_hash = vkHashOf(exported);
  add("vk", committed !== null && vkHashOf(committed) === report.vk_hash, `vk_hash ${report.vk_hash}`);
  return done();
}

/** Why the contributions `transcript` lists are not exactly the zkey's (names, hashes, beacon, in order), or null when they are. */
function contributionMismatch(transcript: Transcript, contributions: readonly ZkeyContribution[]): string | null {
  const recorded = transcript.steps.filter((s) => s.step !== "init");
  if (recorded.length !== contributions.length) return `the transcript lists ${recorded.length} contributions, the zkey holds ${contributions.length}`;
  const differs = recorded.findIndex((s, i) => {
    const c = contributions[i]!;
    return !(
      s.name === c.name &&
      s.hash === c.hash &&
      (s.step === "beacon") === (c.beacon !== undefined) &&
      s.beacon === c.beacon &&
      s.iterations_exp === c.iterations_exp
    );
  });
  return differs === -1 ? null : `contribution #${contributions[differs]!.index} in the transcript is not the zkey's`;
}

/**
 * The checks of verifyCeremony that need no phase-1 file, for a transcript
 * stored before `circuits add` made them (the first start re-checks such a
 * row, registry.ts rebuildCircuitListings): its form and size, the pinned
 * circuit and ptau, the order of its steps, the row's wasm and final zkey,
 * and exactly the contributions read from the stored zkey. The parsed
 * transcript, or why it is refused.
 */
export async function recheckStoredTranscript(
  text: string,
  row: { wasmSha256: string; zkeySha256: string; zkey: Uint8Array },
): Promise<{ ok: true; transcript: Transcript } | { ok: false; reason: string }> {
  const refuse = (reason: string) => ({ ok: false as const, reason });
  const bytes = new TextEncoder().encode(text);
  if (bytes.length > CEREMONY_FILE_LIMITS.transcript)
    return refuse(`the transcript is ${bytes.length} bytes, more than the ${CEREMONY_FILE_LIMITS.transcript} accepted`);
  let transcript: Transcript;
  try {
    transcript = parseTranscript(bytes);
  } catch (error) {
    if (error instanceof CeremonyError) return refuse(error.message);
    throw error;
  }
  if (transcript.circuit !== CIRCUIT_NAME) return refuse(`the transcript names the circuit ${JSON.stringify(transcript.circuit)}, not ${CIRCUIT_NAME}`);
  if (transcript.ptau.name !== PTAU_NAME || transcript.ptau.blake2b512 !== PTAU_BLAKE2B512)
    return refuse(`the transcript names ptau ${JSON.stringify(transcript.ptau.name)}, not the pinned ${PTAU_NAME}`);
  const [inOrder, order] = stepOrder(transcript.steps);
  if (!inOrder) return refuse(order);
  if (transcript.wasm_sha256 !== row.wasmSha256) return refuse("the transcript's wasm_sha256 is not the circuit's wasm");
  if (transcript.steps.at(-1)!.zkey_sha256 !== row.zkeySha256) return refuse("the transcript's last step did not write the circuit's zkey");
  let contributions: ZkeyContribution[];
  try {
    contributions = await zkeyContributions(row.zkey);
  } catch (error) {
    if (error instanceof ZkeyContributionsError) return refuse(error.message);
    throw error;
  }
  if (contributions.length === 0) return refuse("the zkey holds no contribution");
  const mismatch = contributionMismatch(transcript, contributions);
  return mismatch ? refuse(mismatch) : { ok: true, transcript };
}

/** Whether the steps are in a ceremony's order (init once and first, a beacon only last) with well-formed, non-decreasing times. */
function stepOrder(steps: readonly TranscriptStep[]): [boolean, string] {
  if (steps[0]!.step !== "init" || steps.slice(1).some((s) => s.step === "init")) return [false, "init must be the first step and only that"];
  if (steps.slice(0, -1).some((s) => s.step === "beacon")) return [false, "a beacon may only be the last step"];
  let previous = "";
  for (const [i, s] of steps.entries()) {
    const time = Date.parse(s.at);
    if (!Number.isFinite(time) || new Date(time).toISOString() !== s.at)
      return [false, `step ${i + 1}'s time ${JSON.stringify(s.at)} is not an ISO 8601 UTC time`];
    if (s.at < previous) return [false, `step ${i + 1}'s time ${s.at} is before the step it follows`];
    if (time > Date.now() + 24 * 3600_000) return [false, `step ${i + 1}'s time ${s.at} is in the future`];
    previous = s.at;
  }
  return [true, `${steps.length} steps, in order`];
}
