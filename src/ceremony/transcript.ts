// A ceremony's transcript.json: what it may hold, and how it is read back.
// parseTranscript keeps the known fields only, each checked for form, so a
// transcript written back (by the next step, or stored by `circuits add`)
// holds nothing a previous participant added. Kept apart from ceremony.ts
// (no snarkjs) because the service reads transcripts too.
import { CEREMONY_FILES } from "../circuits/shipped";

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

export const STEP_LABELS = ["init", "contribution", "beacon"] as const;
const HEX64 = /^[0-9a-f]{64}$/;
const HEX128 = /^[0-9a-f]{128}$/;

/**
 * A transcript's known fields, each checked for form; anything else in the
 * file is dropped, so a transcript written back holds only these. Throws
 * CeremonyError naming the first field that is wrong.
 */
export function parseTranscript(bytes: Uint8Array, where: string = CEREMONY_FILES.transcript): Transcript {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new CeremonyError(`${where} is not JSON`);
  }
  const bad = (what: string): never => {
    throw new CeremonyError(`${where}: ${what}`);
  };
  const t = raw as Record<string, unknown>;
  if (typeof t !== "object" || t === null || t.format !== TRANSCRIPT_FORMAT) bad(`not a ${TRANSCRIPT_FORMAT} transcript`);
  const str = (value: unknown, name: string, form?: RegExp): string =>
    typeof value === "string" && (!form || form.test(value)) ? value : bad(`${name} is missing or malformed`);
  const ptau = (t.ptau ?? {}) as Record<string, unknown>;
  if (!Array.isArray(t.steps) || t.steps.length === 0) bad("it lists no steps");
  const steps = (t.steps as Record<string, unknown>[]).map((raw, i): TranscriptStep => {
    const label = raw?.step;
    if (!STEP_LABELS.includes(label as TranscriptStep["step"])) bad(`step ${i + 1} has the unknown label ${JSON.stringify(label)}`);
    // Built field by field in the order steps are written, zkey_sha256 last.
    const step = { step: label, at: str(raw.at, `step ${i + 1}'s at`) } as TranscriptStep;
    if (label !== "init") {
      step.name = str(raw.name, `step ${i + 1}'s name`);
      step.hash = str(raw.hash, `step ${i + 1}'s hash`, HEX128);
    }
    if (label === "beacon") {
      step.beacon = str(raw.beacon, `step ${i + 1}'s beacon`, /^([0-9a-f]{2}){1,64}$/);
      if (!Number.isInteger(raw.iterations_exp)) bad(`step ${i + 1}'s iterations_exp is missing or malformed`);
      step.iterations_exp = raw.iterations_exp as number;
    }
    step.zkey_sha256 = str(raw.zkey_sha256, `step ${i + 1}'s zkey_sha256`, HEX64);
    return step;
  });
  return {
    format: TRANSCRIPT_FORMAT,
    circuit: str(t.circuit, "circuit"),
    r1cs_sha256: str(t.r1cs_sha256, "r1cs_sha256", HEX64),
    wasm_sha256: str(t.wasm_sha256, "wasm_sha256", HEX64),
    ptau: { name: str(ptau.name, "ptau.name"), blake2b512: str(ptau.blake2b512, "ptau.blake2b512", HEX128), source: str(ptau.source, "ptau.source") },
    steps,
  };
}

/** The transcript as a step writes it: its known fields only, in this order. */
export const transcriptText = (transcript: Transcript): string => `${JSON.stringify(transcript, null, 2)}\n`;
