// The budget spend circuit as a circuit version (docs/protocol.md, "Budgets
// across merchants"; its setup: docs/trust.md). Its ceremony's output is
// circuits/artifacts/budget_spend/. Unlike the agent circuit it is not a
// choice an operator makes: every budget challenge names this one, so it is
// always `accepted`, never `active`, and never stored in the database.
//
// The id is `budget_spend-` and the first 16 hex digits of the zkey's
// SHA-256 (the agent pins that file). The zkey (10 MB) and witness generator
// (5 MB) are pinned here by hash and read from the repository's tree when
// asked for, never embedded in the compiled binary: where they are absent,
// GET /v1/circuits/{id}/zkey and /wasm answer 404 `Artifact not served here`.
// The verification key (5 KB) is part of every build, so spends verify
// wherever the service runs.
import { readFile } from "node:fs/promises";
import { BUDGET_CIRCUIT_NAME } from "../ceremony/circuits";
import { parseTranscript } from "../ceremony/transcript";
import { sha256Hex, vkHash } from "../receipts/circuit";
import type { CircuitRecord } from "../store/circuits/records";
import type { SnarkjsVerificationKey } from "../verifier/types";
import transcriptJson from "../../circuits/artifacts/budget_spend/transcript.json";
import vkJson from "../../circuits/artifacts/budget_spend/verification_key.json";
import { budgetFilePath } from "./budget-files";
import { listingOf } from "./listing";

/** SHA-256 of the shipped files (test/circuits/budget-circuit.test.ts recomputes them from circuits/artifacts/budget_spend/). */
export const BUDGET_PINS: { readonly zkey: string; readonly wasm: string } = {
  zkey: "6031e403894287245298750bfd6bccf3c81c6cb56f2fcbc5204ca269231c2c27",
  wasm: "4c8e55c5a9aa1543422e66e715f5ed159f08e041de2fc7b224b6a8c691b6955f",
};

export const BUDGET_CIRCUIT_ID = `${BUDGET_CIRCUIT_NAME}-${BUDGET_PINS.zkey.slice(0, 16)}`;
export const BUDGET_VK = vkJson as unknown as SnarkjsVerificationKey;
export const BUDGET_VK_HASH = vkHash(vkJson);

/** This build lacks the zkey or wasm: they cannot be served. */
export class BudgetArtifactUnavailableError extends Error {}
/** A file whose bytes are not the pinned ones: never served. */
export class BudgetPinMismatchError extends Error {}

export const isBudgetCircuitId = (id: string): boolean => id === BUDGET_CIRCUIT_ID;

/** The zkey or wasm, checked against its pin. */
export async function budgetFile(kind: "zkey" | "wasm"): Promise<Uint8Array> {
  const path = budgetFilePath(kind);
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch {
    throw new BudgetArtifactUnavailableError(`${path} is not beside this build`);
  }
  const actual = sha256Hex(bytes);
  if (actual !== BUDGET_PINS[kind]) throw new BudgetPinMismatchError(`${path}: SHA-256 ${actual}, pinned ${BUDGET_PINS[kind]}`);
  return bytes;
}

let record: CircuitRecord | undefined;

/** The circuit's row as GET /v1/circuits lists it (state accepted: it verifies every budget challenge). */
export function budgetCircuit(): CircuitRecord {
  if (record) return record;
  const listing = listingOf(parseTranscript(new TextEncoder().encode(JSON.stringify(transcriptJson))));
  record = {
    id: BUDGET_CIRCUIT_ID,
    state: "accepted",
    vk: JSON.stringify(vkJson),
    vkHash: BUDGET_VK_HASH,
    zkeySha256: BUDGET_PINS.zkey,
    wasmSha256: BUDGET_PINS.wasm,
    transcript: listing.transcript,
    transcriptSha256: listing.transcriptSha256,
    ceremony: listing.ceremony,
    refused: null,
    createdAt: 0,
    activatedAt: null,
    retiredAt: null,
  };
  return record;
}
