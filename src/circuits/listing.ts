// What GET /v1/circuits shows of a circuit's ceremony, computed once when the
// circuit is added (`zkagent circuits add`, the first start's seeding) and
// stored in its row: the list reads it as stored and never parses or hashes a
// transcript per request (a large transcript had made every list slow for
// everyone, issue 23). Rows stored before this existed are rebuilt once, on
// the first start that finds them (rebuildCircuitListings, registry.ts).
import { createHash } from "node:crypto";
import { type Transcript, transcriptText } from "../ceremony/transcript";

/** The contributions, beacon and ptau a circuit's transcript lists (the list's `ceremony`, src/modules/circuits/model.ts). */
export interface CeremonySummary {
  contributions: { name: string; hash: string }[];
  beacon: { value: string; iterations_exp: number; name: string; hash: string } | null;
  ptau: { name: string; blake2b512: string };
}

/** What a circuit's row holds for the list: the transcript as served, its hash, and its summary. */
export interface CircuitListing {
  /** The transcript rebuilt from its known fields: what GET …/transcript serves. */
  transcript: string;
  transcriptSha256: string;
  ceremony: CeremonySummary;
}

export function ceremonySummaryOf(transcript: Transcript): CeremonySummary {
  const beacon = transcript.steps.find((s) => s.step === "beacon");
  return {
    contributions: transcript.steps.filter((s) => s.step === "contribution").map((s) => ({ name: s.name!, hash: s.hash! })),
    beacon: beacon ? { value: beacon.beacon!, iterations_exp: beacon.iterations_exp!, name: beacon.name!, hash: beacon.hash! } : null,
    ptau: { name: transcript.ptau.name, blake2b512: transcript.ptau.blake2b512 },
  };
}

/** The listing of a transcript that passed its checks. */
export function listingOf(transcript: Transcript): CircuitListing {
  const text = transcriptText(transcript);
  return { transcript: text, transcriptSha256: createHash("sha256").update(text).digest("hex"), ceremony: ceremonySummaryOf(transcript) };
}
