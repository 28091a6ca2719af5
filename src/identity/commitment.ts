// identity_commitment = Poseidon(secret), the circomlib Poseidon over BN254's
// F_r (the same parameters as circuits/agent_identity.circom's Poseidon(1)).
import { randomBytes } from "node:crypto";
import { FIELD_ORDER_R, bytesToBigInt } from "./field";

let poseidon: Promise<any> | undefined;

/**
 * Poseidon(0): a public constant (issue 11). Anyone can prove knowledge of the
 * secret 0, so an agent registered with this commitment has no secret at
 * all. Secrets live in [1, r); registration refuses this commitment.
 */
export const COMMITMENT_OF_ZERO = "19014214495641488759237505126948346942972912379615652741039992445865937985820";

export const SECRET_RANGE = "[1, r)";

/** Whether `secret` is a usable identity secret: a field element in [1, r). */
export const isValidSecret = (secret: bigint): boolean => secret > 0n && secret < FIELD_ORDER_R;

export async function identityCommitment(secret: bigint): Promise<bigint> {
  if (!isValidSecret(secret)) throw new RangeError(`secret must be a field element in ${SECRET_RANGE} (0 is public: Poseidon(0) is a known constant)`);
  // circomlibjs is imported on first use, not with this module: loading it
  // costs ≈ 0.45 s, which every `zkagent` command (and every agent process
  // that only proves group membership) would otherwise pay at start.
  const hash = await (poseidon ??= import("circomlibjs").then((m) => m.buildPoseidon()));
  return hash.F.toObject(hash([secret])) as bigint;
}

/** A uniformly random non-zero secret: 64 bytes reduced mod r leave no useful bias. */
export function newSecret(): bigint {
  for (;;) {
    const secret = bytesToBigInt(randomBytes(64)) % FIELD_ORDER_R;
    if (secret !== 0n) return secret;
  }
}
