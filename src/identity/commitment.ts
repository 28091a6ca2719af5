// identity_commitment = Poseidon(secret), the circomlib Poseidon over BN254's
// F_r (the same parameters as circuits/agent_identity.circom's Poseidon(1)).
import { randomBytes } from "node:crypto";
import { buildPoseidon } from "circomlibjs";
import { FIELD_ORDER_R, bytesToBigInt } from "./field";

let poseidon: Promise<any> | undefined;

export async function identityCommitment(secret: bigint): Promise<bigint> {
  if (secret < 0n || secret >= FIELD_ORDER_R) throw new RangeError("secret must be a field element below r");
  const hash = await (poseidon ??= buildPoseidon());
  return hash.F.toObject(hash([secret])) as bigint;
}

/** A uniformly random non-zero secret: 64 bytes reduced mod r leave no useful bias. */
export function newSecret(): bigint {
  for (;;) {
    const secret = bytesToBigInt(randomBytes(64)) % FIELD_ORDER_R;
    if (secret !== 0n) return secret;
  }
}
