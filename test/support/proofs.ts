// A shared, lazily built pool of real proofs and identities, made by the
// project's own prover (src/agent). Proving takes ≈0.3 s, so everything here is
// memoised for the life of the test process: a file asks for what it needs and
// pays for each distinct statement once, however many files ask for it.
import { createIdentity, prove, type AgentIdentity, type ProveRequest } from "../../src/agent";
import { publicSignals, type JsonObject } from "../../src/identity/encoding";

const identities = new Map<string, Promise<AgentIdentity>>();
const proofs = new Map<string, Promise<string>>();

/** A named agent identity (secret, commitment, signing key pair), created once per name. */
export function identity(name: string): Promise<AgentIdentity> {
  let found = identities.get(name);
  if (!found) identities.set(name, (found = createIdentity()));
  return found;
}

/** A real proof for the statement, memoised on the statement. */
export function proofFor(request: ProveRequest): Promise<string> {
  const id = JSON.stringify([String(request.secret), request.nonce, request.action, request.context ?? null]);
  let found = proofs.get(id);
  if (!found) proofs.set(id, (found = prove(request)));
  return found;
}

/** A fixed statement (nonce, action, context) used where any valid proof will do. */
export const SAMPLE = {
  nonce: "0123456789abcdef".repeat(3) + "0123456789abcd",
  action: "purchase",
  context: { amount: 20, currency: "EUR", merchant: "shop-a" } as JsonObject,
} as const;

export interface SampleProof {
  identity: AgentIdentity;
  proof: string;
  /** The four public inputs the proof verifies against, in the circuit's order. */
  publicSignals: string[];
}

let sample: Promise<SampleProof> | undefined;

/** One valid proof of the SAMPLE statement by the "sample" identity. */
export function sampleProof(): Promise<SampleProof> {
  return (sample ??= (async () => {
    const agent = await identity("sample");
    const proof = await proofFor({ secret: agent.secret, ...SAMPLE });
    const signals = publicSignals({ identityCommitment: BigInt(agent.identity_commitment), ...SAMPLE });
    return { identity: agent, proof, publicSignals: signals };
  })());
}
