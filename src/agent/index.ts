// The agent SDK: what an AI agent runs on its own side. It creates an identity,
// proves for a challenge, and signs. The service never sees the secret.
//
//   const id = await createIdentity();                 // keep id.secret private
//   // register id.identity_commitment (and id.signing_key) with zkagent
//   const proof = await prove({ secret: id.secret, nonce, action, context });
//   const agent_signature = sign({ signingSecret: id.signing_secret, challengeId, nonce, action, context });
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { identityCommitment, isValidSecret, newSecret, SECRET_RANGE } from "../identity/commitment";
import { publicSignals, type JsonObject } from "../identity/encoding";
import { parseFieldElement } from "../identity/field";
import { newSigningKeyPair, signChallenge } from "../identity/signature";
import { createProver, type Prover } from "../prover";
import circuitWasmPath from "../../circuits/artifacts/agent_identity.wasm" with { type: "file" };
import circuitZkeyPath from "../../circuits/artifacts/agent_identity.zkey" with { type: "file" };

export { verificationKey } from "../verifier/circuit-key";

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
}

// Under Bun (and in the compiled binary) a `type: "file"` import is an absolute
// path; a bundle built for Node (`bun build --target=node`) makes it relative
// to the bundle, which is not the working directory.
const artifactPath = (path: string) => (path.startsWith(".") ? fileURLToPath(new URL(path, import.meta.url)) : path);

let artifacts: Promise<[Uint8Array, Uint8Array]> | undefined;
const loadArtifacts = () => (artifacts ??= Promise.all([readFile(artifactPath(circuitWasmPath)), readFile(artifactPath(circuitZkeyPath))]));

export interface ProveOptions {
  /**
   * Precompute the circuit's window tables when the process's prover is
   * built (default true: ≈ 0.5 s once, then tens of milliseconds per proof).
   * false for a process that proves once, such as `zkagent prove`: it starts
   * in tens of milliseconds and its proofs take about twice as long.
   */
  precompute?: boolean;
}

const agentProvers = new Map<boolean, Promise<Prover>>();
/**
 * The built-in circuit's prover (src/prover), built on first use and kept:
 * the zkey's points and the witness calculator are loaded once per process.
 */
function builtInProver(precompute: boolean): Promise<Prover> {
  let prover = agentProvers.get(precompute);
  if (!prover) {
    prover = loadArtifacts().then(([wasm, zkey]) => createProver({ zkey, wasm }, { precompute }));
    agentProvers.set(precompute, prover);
    // A failed load is not cached: the next call tries again.
    prover.catch(() => agentProvers.delete(precompute));
  }
  return prover;
}

/**
 * A Groth16 proof that the caller knows `secret`, bound to the challenge nonce,
 * the action and the context. Returns the string to submit as `proof`
 * (snarkjs's proof JSON). The first call loads the circuit (≈ 0.5 s with the
 * default precomputation); each proof after that takes tens of milliseconds
 * (docs/performance.md, "Prover").
 */
export async function prove(request: ProveRequest, options: ProveOptions = {}): Promise<string> {
  const secret = typeof request.secret === "bigint" ? request.secret : parseFieldElement(request.secret);
  if (secret === null || !isValidSecret(secret)) throw new RangeError(`secret must be a decimal field element in ${SECRET_RANGE} (0 is public)`);
  const [identity_commitment, nonce, action_hash, context_hash] = publicSignals({
    identityCommitment: await identityCommitment(secret),
    nonce: request.nonce,
    action: request.action,
    context: request.context,
  });
  const prover = await builtInProver(options.precompute ?? true);
  const { proof } = await prover.prove({ secret: secret.toString(), identity_commitment, nonce, action_hash, context_hash });
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
