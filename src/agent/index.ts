// The agent SDK: what an AI agent runs on its own side. It creates an identity,
// proves for a challenge, and signs. The service never sees the secret.
//
//   const id = await createIdentity();                 // keep id.secret private
//   // register id.identity_commitment (and id.signing_key) with zkagent
//   const proof = await prove({ secret: id.secret, nonce, action, context });
//   // or with the circuit the challenge names (its circuit_id):
//   const circuit = await loadCircuit(`${url}/v1/circuits/${challenge.circuit_id}`);
//   const proof = await prove({ secret: id.secret, nonce, action, context, circuit });
//   // private verification (a group challenge): ./group.ts
//   const agent_signature = sign({ signingSecret: id.signing_secret, challengeId, nonce, action, context });
import { createHash } from "node:crypto";
import { identityCommitment, isValidSecret, newSecret, SECRET_RANGE } from "../identity/commitment";
import { publicSignals, type JsonObject } from "../identity/encoding";
import { parseFieldElement } from "../identity/field";
import { newSigningKeyPair, signChallenge } from "../identity/signature";
import { CircuitSourceError, type LoadedCircuit, loadCircuit, pinnedCircuitOf } from "./circuit";
import { createProver, type Prover } from "../prover";
import { proverThreads, tableOptions } from "./prover-tables";

export { verificationKey } from "../verifier/circuit-key";
export { CircuitSourceError, type LoadCircuitOptions, type LoadedCircuit, loadCircuit } from "./circuit";
export { defaultTableCacheDir } from "./prover-tables";

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

export interface ProveOptions {
  /**
   * Precompute the circuit's window tables when the process's prover is
   * built (default true: ≈ 0.5 s once, then tens of milliseconds per proof).
   * false for a process that proves once, such as `zkagent prove`: it starts
   * in tens of milliseconds and its proofs take about twice as long.
   */
  precompute?: boolean;
  /**
   * Where the tables are kept between processes (src/agent/prover-tables.ts):
   * default $XDG_CACHE_HOME/zkagent/prover-tables (~/.cache/…); false: build
   * them in every process. The first process to build them writes them; any
   * later one reads them back, checked.
   */
  tableCache?: string | false;
  /** Threads per proof (src/prover/threads.ts); default 1: the agent circuit's proof is tens of milliseconds, a helper saves a few. */
  threads?: number;
}

// One prover per circuit (and table choice), built on first use and kept: the
// zkey's points and the witness calculator are loaded once per process. Keyed
// by the circuit's id and the hashes of its zkey and wasm, so a circuit object
// loaded again (the same artifacts) reuses the prover, and other bytes never
// reuse one. Each artifact array is hashed once (digests are remembered per
// array): prove() with the same circuit object, the usual case, hashes
// nothing (hashing the ≈ 190 KB zkey on every call cost 0.1–0.25 ms per
// proof here). The arrays are taken to be left unchanged once passed in.
const provers = new Map<string, Promise<Prover>>();
const digests = new WeakMap<Uint8Array, string>();
function digest(bytes: Uint8Array): string {
  let hex = digests.get(bytes);
  if (hex === undefined) {
    hex = createHash("sha256").update(bytes).digest("hex");
    digests.set(bytes, hex);
  }
  return hex;
}
function proverFor(circuit: LoadedCircuit, options: ProveOptions): Promise<Prover> {
  const tables = tableOptions(options.precompute, options.tableCache);
  // The cache only changes how the tables are obtained, not the prover: not part of the key.
  const key = `${circuit.id}:${digest(circuit.zkey)}:${digest(circuit.wasm)}:${tables.precompute}`;
  let prover = provers.get(key);
  if (!prover) {
    // However the circuit object was made, the witness code run with the secret is a pinned one.
    pinnedCircuitOf(circuit.wasm, circuit.id);
    prover = createProver({ zkey: circuit.zkey, wasm: circuit.wasm }, { ...tables, threads: proverThreads(options.threads, 1) });
    provers.set(key, prover);
    // A failed load is not cached: the next call tries again.
    prover.catch(() => provers.delete(key));
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
  const circuit = request.circuit ?? (await loadCircuit());
  const prover = await proverFor(circuit, options);
  const statement = [identity_commitment, nonce, action_hash, context_hash];
  const { proof, publicSignals: proved } = await prover.prove({ secret: secret.toString(), identity_commitment, nonce, action_hash, context_hash });
  // A proof whose public signals are not exactly the statement would make public something else (a value derived from the secret): none is returned.
  if (proved.length !== statement.length || proved.some((signal, i) => signal !== statement[i])) {
    throw new CircuitSourceError(`the circuit ${circuit.id} proves public signals other than the statement: refused, no proof returned`);
  }
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

export {
  checkGroupIntent,
  createSemaphoreIdentity,
  defaultSemaphoreCacheDir,
  DEFAULT_MIN_ANONYMITY,
  defaultTreeCacheDir,
  type FetchMembersOptions,
  fetchGroupMembers,
  type GroupChallenge,
  type GroupChallengeRequest,
  type GroupIntent,
  GroupProofError,
  type GroupProofErrorCode,
  type GroupProveOptions,
  type GroupProveRequest,
  importSemaphoreIdentity,
  loadSemaphoreArtifacts,
  parseGroupChallenge,
  proveGroupChallenge,
  proveGroupMembership,
  SemaphoreArtifactError,
  type PackedGroth16Proof,
  type SemaphoreArtifactSource,
  type SemaphoreIdentity,
  type SemaphoreArtifacts,
  type SemaphoreIdentityKeys,
  type SemaphoreProof,
  type SyncedGroup,
  type SyncOptions,
  syncGroupTree,
} from "./group/index";
export { createPrincipal, type PrincipalKeyPair, signMandate, type SignMandateRequest } from "./mandate";
// Budget spends (a budgeted group's member pays at any merchant that accepts the group, unlinkably): src/agent/budget/.
export {
  BUDGET_CIRCUIT_ID,
  type BudgetChallenge,
  BudgetSpendError,
  type BudgetSpendErrorCode,
  type BudgetSpendOptions,
  type BudgetSpendProof,
  type BudgetSpendRequest,
  defaultBudgetDir,
  loadMembership,
  type Membership,
  membershipOf,
  parseBudgetChallenge,
  saveMembership,
  type SpendOutcome,
  spendBudget,
  syncNotes,
} from "./budget/index";
// Web Bot Auth for operators: sign agents' requests, publish their key directory (docs/http-auth.md, "Signed agents").
export {
  DIRECTORY_PATH,
  DIRECTORY_TYPE,
  directoryResponse,
  type KeyDirectory,
  keyDirectory,
  keyIdOf,
  type RequestSigner,
  requestSigner,
} from "../web-bot-auth";
/** The checks the agent runs before a proof (docs/http-auth.md, "What the agent checks before it proves"), for code that handles a 401 itself. */
export { type CheckedChallenge, checkChallenge, checkGroupMessage, type Expectation, outgoingRequest } from "./checks";

export {
  type AgentFetchOptions,
  answerChallenge,
  ChallengeError,
  type ChallengeErrorCode,
  DEFAULT_TIMEOUT_MS,
  type FetchIdentity,
  type MaxAmount,
  readChallenge,
  type ZkAgentChallenge,
  zkagentFetch,
} from "./fetch";
import { type AgentFetchOptions, zkagentFetch } from "./fetch";

/** fetch, answering ZKAgent challenges with `init.zkagent` (docs/http-auth.md): `fetch(url, { method, body, zkagent: { identity } })`. */
// `string | URL | Request`, not the DOM lib's RequestInfo: a project without "dom" in its lib (Node's, bun init's) has no such type.
export function fetch(input: string | URL | Request, init: RequestInit & { zkagent: AgentFetchOptions }): Promise<Response> {
  const { zkagent, ...rest } = init;
  return zkagentFetch(zkagent)(input, rest);
}
