// The agent SDK: what an AI agent runs on its own side. It creates an identity,
// proves for a challenge, and signs. The service never sees the secret.
//
//   const id = await createIdentity();                 // keep id.secret private
//   // register id.identity_commitment (and id.signing_key) with zkagent
//   const proof = await prove({ secret: id.secret, nonce, action, context });
//   // or with the circuit the challenge names (its circuit_id):
//   const circuit = await loadCircuit(`${url}/v1/circuits/${challenge.circuit_id}`);
//   const proof = await prove({ secret: id.secret, nonce, action, context, circuit });
//   const agent_signature = sign({ signingSecret: id.signing_secret, challengeId, nonce, action, context });
import * as snarkjs from "snarkjs";
import { identityCommitment, isValidSecret, newSecret, SECRET_RANGE } from "../identity/commitment";
import { publicSignals, type JsonObject } from "../identity/encoding";
import { parseFieldElement } from "../identity/field";
import { newSigningKeyPair, signChallenge } from "../identity/signature";
import { type LoadedCircuit, loadCircuit } from "./circuit";

export { verificationKey } from "../verifier/circuit-key";
export { CircuitSourceError, type LoadCircuitOptions, type LoadedCircuit, loadCircuit } from "./circuit";

export interface AgentIdentity {
  /** The agent's secret field element (decimal). Never leaves the agent. */
  secret: string;
  /** Poseidon(secret), decimal: what the service stores. */
  identity_commitment: string;
  /** Ed25519 public key, base64url: register it to sign challenges. */
  signing_key: string;
  /** Ed25519 private seed, base64url. Never leaves the agent. */
  signing_secret: string;
}

export async function createIdentity(): Promise<AgentIdentity> {
  const secret = newSecret();
  const { signingKey, signingSecret } = newSigningKeyPair();
  return {
    secret: secret.toString(),
    identity_commitment: (await identityCommitment(secret)).toString(),
    signing_key: signingKey,
    signing_secret: signingSecret,
  };
}

export interface ProveRequest {
  secret: string | bigint;
  nonce: string;
  action: string;
  context?: JsonObject;
  /** The circuit to prove with (loadCircuit): the challenge's circuit_id. Default: the shipped development circuit. */
  circuit?: LoadedCircuit;
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * A Groth16 proof that the caller knows `secret`, bound to the challenge nonce,
 * the action and the context. Returns the string to submit as `proof`
 * (snarkjs's proof JSON). Takes about 0.3 s.
 */
export async function prove(request: ProveRequest): Promise<string> {
  const secret = typeof request.secret === "bigint" ? request.secret : parseFieldElement(request.secret);
  if (secret === null || !isValidSecret(secret)) throw new RangeError(`secret must be a decimal field element in ${SECRET_RANGE} (0 is public)`);
  const [identity_commitment, nonce, action_hash, context_hash] = publicSignals({
    identityCommitment: await identityCommitment(secret),
    nonce: request.nonce,
    action: request.action,
    context: request.context,
  });
  const { wasm, zkey } = request.circuit ?? (await loadCircuit());
  const input = { secret: secret.toString(), identity_commitment, nonce, action_hash, context_hash };
  // Single-threaded: snarkjs's worker threads never finish under Bun.
  const { proof } = await (snarkjs.groth16.fullProve as any)(
    input,
    { type: "mem", data: wasm },
    { type: "mem", data: zkey },
    silent,
    {},
    { singleThread: true },
  );
  return JSON.stringify({ pi_a: proof.pi_a, pi_b: proof.pi_b, pi_c: proof.pi_c, protocol: "groth16", curve: "bn128" });
}

export interface SignRequest {
  signingSecret: string;
  challengeId: string;
  nonce: string;
  action: string;
  context?: JsonObject;
}

/** The `agent_signature` for a challenge: Ed25519 over the canonical message. */
export const sign = (request: SignRequest): string => signChallenge(request.signingSecret, request);

export { createPrincipal, type PrincipalKeyPair, signMandate, type SignMandateRequest } from "./mandate";
