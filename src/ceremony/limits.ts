// How large each file of a ceremony may be (read by the ceremony and by the
// service's `circuits add`, so kept free of anything heavy).
import type { CeremonyFile } from "../circuits/shipped";

const MiB = 1024 * 1024;
/** The most bytes a ceremony file may have: the agent circuit's are ≈ 50 KB (r1cs), 1.6 MB (wasm), 190 KB (zkey). */
export const CEREMONY_FILE_LIMITS: Readonly<Record<CeremonyFile, number>> = {
  r1cs: 16 * MiB,
  wasm: 16 * MiB,
  zkey: 64 * MiB,
  vk: 1 * MiB,
  transcript: 1 * MiB,
};
