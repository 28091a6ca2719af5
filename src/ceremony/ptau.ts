// Phase 1 of the Groth16 setup: the public Hermez Powers of Tau (2^9), from
// the Perpetual Powers of Tau ceremony (contribution 54 plus a beacon). The
// file ships in the repository (circuits/ptau/README.md: source and hash);
// this pin is what makes it *that* file, whatever it is called. Every user of
// a ptau (the ceremony, circuits/build.sh, CI) checks it against this hash.
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import ptauPath from "../../circuits/ptau/powersOfTau28_hez_final_09.ptau" with { type: "file" };
import { bundledFilePath } from "../bundled-file";

/** BLAKE2b-512 of powersOfTau28_hez_final_09.ptau as the snarkjs README publishes it. */
export const PTAU_BLAKE2B512 =
  "94f108a80e81b5d932d8e8c9e8fd7f46cf32457e31462deeeef37af1b71c2c1b3c71fb0d9b59c654ec266b042735f50311f9fd1d4cadce47ab234ad163157cb5";
export const PTAU_NAME = "powersOfTau28_hez_final_09.ptau";
export const PTAU_SOURCE = "Hermez final Powers of Tau 2^9 (Perpetual Powers of Tau contribution 54 + beacon), listed in the snarkjs README";

export class PtauMismatchError extends Error {}

/** A phase-1 file known by its hash: its name, where it comes from, where the repository keeps it. */
export interface PtauPin {
  name: string;
  blake2b512: string;
  source: string;
  path(): string;
}

export const AGENT_PTAU: PtauPin = {
  name: PTAU_NAME,
  blake2b512: PTAU_BLAKE2B512,
  source: PTAU_SOURCE,
  path: () => bundledFilePath(ptauPath, import.meta.url),
};

export const blake2b512 = (bytes: Uint8Array): string => createHash("blake2b512").update(bytes).digest("hex");

/**
 * The bytes of a Powers of Tau file that is the pinned one (the agent
 * circuit's public file unless `pin` names another): the repository's copy by
 * default, or `path` (a copy of the same file). Throws PtauMismatchError for
 * any other file.
 */
export async function readPinnedPtau(path?: string, pin: PtauPin = AGENT_PTAU): Promise<Uint8Array> {
  const bytes = new Uint8Array(await readFile(path ?? pin.path()));
  const hash = blake2b512(bytes);
  if (hash !== pin.blake2b512) {
    throw new PtauMismatchError(
      `${path ?? pin.name} is not the pinned phase-1 file: BLAKE2b-512 ${hash.slice(0, 16)}…, expected ${pin.blake2b512.slice(0, 16)}…`,
    );
  }
  return bytes;
}

if (import.meta.main) {
  // `bun src/ceremony/ptau.ts [FILE]`: exit 0 when the file is the pinned one (circuits/build.sh, CI).
  try {
    await readPinnedPtau(process.argv[2]);
    process.stdout.write(`ptau ok: BLAKE2b-512 ${PTAU_BLAKE2B512.slice(0, 16)}… (${PTAU_NAME})\n`);
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  }
}
