// A member's Semaphore v4 identity: the private key that never leaves the
// agent, and the commitment the group's owner adds as a leaf. What it hides:
// the private key (and the secret scalar derived from it, the proof's only
// private input besides the Merkle path). What it reveals: the commitment,
// to whoever the agent hands it (the group's owner; the members route shows
// it to everyone, as a leaf among the others).
import { Identity } from "@semaphore-protocol/identity";
import { GroupProofError } from "./error";

/** What the SDK uses of a Semaphore identity (@semaphore-protocol/identity's Identity has these, and more). */
export interface SemaphoreIdentity {
  readonly commitment: bigint;
  readonly secretScalar: bigint;
  export(): string;
}

export interface SemaphoreIdentityKeys {
  /** base64 of the private key (Identity.export()). Never leaves the agent. */
  private_key: string;
  /** Poseidon of the public key, decimal: what the group's owner adds as a member. */
  identity_commitment: string;
}

/** A new Semaphore v4 identity (a random private key). */
export function createSemaphoreIdentity(): SemaphoreIdentityKeys {
  const identity = new Identity();
  return { private_key: identity.export(), identity_commitment: identity.commitment.toString() };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;

/** The identity behind an exported private key (Identity.import), refused unless it is base64 as export() writes it. */
export function importSemaphoreIdentity(privateKey: string): SemaphoreIdentity {
  if (typeof privateKey !== "string" || !BASE64.test(privateKey)) {
    throw new GroupProofError("identity", "the Semaphore private key must be base64, as Identity.export() writes it");
  }
  return Identity.import(privateKey);
}
