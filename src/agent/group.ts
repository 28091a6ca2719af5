// Private verification, the agent's side (issue 24): a Semaphore v4 identity,
// and a proof that it is a member of the group a challenge names, made by
// zkagent's own prover from the pinned public-ceremony artifacts.
//
//   const id = createSemaphoreIdentity();      // keep id.private_key on the agent; the group's owner adds id.identity_commitment
//   const proof = await proveGroupChallenge({ privateKey: id.private_key, challenge, service: "https://zkagent.example" });
//   // submit JSON.stringify(proof) as the challenge's proof
//
// What the agent sends nobody: which member it is. It keeps the group's tree
// on disk per service and group (src/agent/group-cache.ts) and asks the
// service only for the leaves changed since the version it holds
// (src/agent/group-sync.ts: GET /v1/groups/{id}/members?since=V, no API key;
// a first sync downloads every leaf), applies them, and uses the tree only if
// its root is the one the service serves. It then proves against the
// challenge's root when the group's first `size` leaves (the challenge's
// size) rebuild it, else against the current root it synced — the service
// accepts every root the group had since its last removal, so members added
// after the challenge never break a proof in flight — and only when at least
// `minAnonymity` members (default 3) are active in that tree. The path it
// proves with is hashed up to that root first. The proof reveals the root,
// the nullifier (its pseudonym for this scope), message and scope.
import { Identity } from "@semaphore-protocol/identity";
import { packGroth16Proof } from "@zk-kit/utils/proof-packing";
import type { SemaphoreProof as SemaphoreProofObject } from "../groups/proof-object";
import { parseSemaphoreValue, semaphoreHash, semaphoreNullifier, semaphorePublicSignals } from "../groups/statement";
import { FIELD_ORDER_R, parseFieldElement } from "../identity/field";
import type { CircuitInput, ProofResult, Prover } from "../prover";
import type { JsonObject } from "../identity/encoding";
import { checkGroupMessage } from "./checks";
import { defaultTreeCacheDir } from "./group-cache";
import { GroupProofError } from "./group-error";
import { forgetGroupTree, type SyncOptions, syncGroupTree } from "./group-sync";
import { AgentTree, depthOf } from "./group-tree";
import { isSemaphoreDepth, type SemaphoreProverOptions, semaphoreProver } from "./semaphore-artifacts";

export { defaultTreeCacheDir } from "./group-cache";
export { GroupProofError, type GroupProofErrorCode } from "./group-error";
export { type FetchMembersOptions, fetchGroupMembers, type SyncedGroup, type SyncOptions, syncGroupTree } from "./group-sync";
export {
  defaultSemaphoreCacheDir,
  loadSemaphoreArtifacts,
  SemaphoreArtifactError,
  type SemaphoreArtifactSource,
  type SemaphoreArtifacts,
} from "./semaphore-artifacts";

/** A challenge for a group, as POST /v1/verify/challenge returns it with `group_id`. */
export interface GroupChallenge {
  challenge_id: string;
  nonce: string;
  action: string;
  context?: JsonObject;
  group_id: string;
  /** The root the proof must be for (decimal). */
  merkle_tree_root: string;
  /** The tree depth of the circuit to prove with (1–32). */
  merkle_tree_depth: number;
  /** Decimal, passed as-is (it binds the nonce, the action and the context). */
  message: string;
  /** Decimal, passed as-is (one per platform and group: the pseudonym's domain). */
  scope: string;
  circuit_id: string;
  /** The group's size (leaves) when the challenge was made: its first `size` leaves rebuild merkle_tree_root while only members were added since. */
  size?: number;
}

/** A Semaphore v4 proof, exactly as @semaphore-protocol/proof's generateProof returns it: the points packed as @zk-kit/utils' packGroth16Proof does (a, b with each Fp2 pair swapped, c). */
export type SemaphoreProof = Omit<SemaphoreProofObject, "points"> & { points: PackedGroth16Proof };

/**
 * The proof's eight coordinates as @zk-kit/utils' packGroth16Proof returns them
 * (decimal strings), stated here so that the SDK's declarations name no
 * package its install does not carry (the SDK bundles @zk-kit/utils).
 */
export type PackedGroth16Proof = [string, string, string, string, string, string, string, string];

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

const string = (value: unknown): value is string => typeof value === "string" && value !== "";

/** `value` checked as a group challenge; GroupProofError("challenge") naming the first field that is wrong. */
export function parseGroupChallenge(value: unknown): GroupChallenge {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new GroupProofError("challenge", "a group challenge is a JSON object");
  const c = value as Record<string, unknown>;
  const wrong = (field: string, what: string) => new GroupProofError("challenge", `the challenge's ${field} must be ${what}`);
  if (!string(c.group_id)) throw wrong("group_id", "a non-empty string (this is an agent challenge, not a group one?)");
  if (parseFieldElement(c.merkle_tree_root as string) === null) throw wrong("merkle_tree_root", "a decimal field element");
  if (!isSemaphoreDepth(c.merkle_tree_depth)) throw wrong("merkle_tree_depth", "an integer from 1 to 32");
  if (parseSemaphoreValue(c.message) === null) throw wrong("message", "a decimal integer below 2^256");
  if (parseSemaphoreValue(c.scope) === null) throw wrong("scope", "a decimal integer below 2^256");
  if (c.size !== undefined && !(Number.isSafeInteger(c.size) && (c.size as number) >= 1)) throw wrong("size", "a whole number of leaves (at least 1)");
  return c as unknown as GroupChallenge;
}

export interface GroupProveRequest {
  /** The identity's exported private key (base64). */
  privateKey: string;
  challenge: GroupChallenge;
  /** The group's leaves in leaf order, "0" for a removed member (fetchGroupMembers). */
  members: readonly (string | bigint)[];
}

export interface GroupProveOptions {
  /**
   * Where semaphore-<depth>.zkey/.wasm are; default the installed
   * @zk-kit/semaphore-artifacts, else the cache, else (proveGroupChallenge)
   * the challenge's service. Checked against the pins whatever the source.
   */
  artifactsDir?: string;
  /** Where artifacts downloaded from a service are kept; default defaultSemaphoreCacheDir() ($XDG_CACHE_HOME/zkagent/semaphore-artifacts), false for none. */
  artifactsCache?: string | false;
  /** A trusted zkagent service to download the depth's artifacts from when no local source has them (proveGroupChallenge sets it to the challenge's service). */
  artifactsService?: SemaphoreProverOptions["artifactsService"];
  /** Window tables when the depth's prover is built (default true); false: none (a fast start, proofs ≈ 1.5× slower at depth 20). */
  precompute?: boolean;
  /** Where the tables are kept between processes; default defaultTableCacheDir(), false for none (ProveOptions.tableCache). */
  tableCache?: string | false;
  /** Threads per proof; default the machine's cores, at most 4 (src/prover/threads.ts). */
  threads?: number;
  /** Build missing tables before the first proof (true), or prove without them while a detached process builds them (default; SemaphoreProverOptions). */
  waitForTables?: boolean;
  /**
   * The fewest active (non-zero) members the agent proves among (default 3):
   * fewer and the proof would narrow its member down to one of a handful, so
   * it is refused (GroupProofError "anonymity").
   */
  minAnonymity?: number;
}

/** The floor when none is given: below 3 a proof names its member or narrows it to one of two (docs/privacy.md). */
export const DEFAULT_MIN_ANONYMITY = 3;

// The last trees built from member lists handed in, by group id, so that a
// process proving again for a group whose list changed a little updates the
// tree (depth hashes per changed leaf) instead of rebuilding it (a hash per
// member). Whatever the path, the root is checked before any use.
const MAX_CACHED_TREES = 4;
const trees = new Map<string, AgentTree>();

function treeOf(groupId: string, leaves: bigint[]): AgentTree {
  const cached = trees.get(groupId);
  trees.delete(groupId); // taken out while it changes: an exception leaves no half-updated tree behind
  let tree: AgentTree | undefined;
  if (cached && cached.size > 0 && leaves.length >= cached.size) {
    const changed: { index: number; value: bigint }[] = [];
    for (let i = 0; i < cached.size; i++) if (cached.leaf(i) !== leaves[i]) changed.push({ index: i, value: leaves[i]! });
    if (changed.length * Math.max(cached.depth, 1) < leaves.length) {
      for (let i = cached.size; i < leaves.length; i++) changed.push({ index: i, value: leaves[i]! });
      cached.apply(changed);
      tree = cached;
    }
  }
  tree ??= AgentTree.fromLeaves(leaves);
  trees.set(groupId, tree);
  if (trees.size > MAX_CACHED_TREES) trees.delete(trees.keys().next().value!);
  return tree;
}

function leaves(members: readonly (string | bigint)[]): bigint[] {
  return members.map((member, index) => {
    const value = typeof member === "bigint" ? member : parseFieldElement(member);
    if (value === null || value < 0n || value >= FIELD_ORDER_R) throw new GroupProofError("members", `member ${index} is not a decimal field element`);
    return value;
  });
}

/** A tree whose stored nodes do not hash up to its own root on the member's path: the caller drops it and syncs again. */
class DamagedTree extends Error {}

/**
 * Which tree to prove in: the first `size` leaves when they rebuild the
 * challenge's root (the whole tree when size is absent or current), else the
 * whole tree when its root is one the service served (`verified`): the
 * service accepts every root the group had since its last removal, so a
 * member added after the challenge breaks nothing. The member must be in it,
 * the tree no deeper than the challenge's circuit.
 */
function chooseTree(tree: AgentTree, challenge: GroupChallenge, index: number, verified: boolean): { size: number; root: bigint } {
  const wanted = BigInt(challenge.merkle_tree_root);
  const candidates: number[] = [];
  if (challenge.size !== undefined && challenge.size <= tree.size) candidates.push(challenge.size);
  candidates.push(tree.size);
  const tooDeep = (depth: number) =>
    new GroupProofError("depth", `group ${challenge.group_id} has depth ${depth}, more than the challenge's merkle_tree_depth ${challenge.merkle_tree_depth}`);
  for (const size of candidates) {
    if (index >= size || tree.rootOf(size) !== wanted) continue;
    if (depthOf(size) > challenge.merkle_tree_depth) throw tooDeep(depthOf(size));
    return { size, root: wanted };
  }
  if (!verified || tree.size === 0) {
    throw new GroupProofError(
      "root_mismatch",
      `the ${tree.size} members of group ${challenge.group_id} give the root ${tree.size === 0 ? "(none)" : tree.root}, not the challenge's ${wanted}${challenge.size !== undefined ? ` (nor do its first ${challenge.size})` : ""}: refused`,
    );
  }
  if (tree.depth > challenge.merkle_tree_depth) throw tooDeep(tree.depth);
  return { size: tree.size, root: tree.root };
}

/**
 * The proof for `challenge` in `tree` (see chooseTree), refused below the
 * anonymity floor; the member's path is hashed up to the chosen root before
 * the prover runs (DamagedTree otherwise), and the proof returned only when
 * the prover's public signals are the statement computed here.
 */
async function proveInTree(
  tree: AgentTree,
  challenge: GroupChallenge,
  identity: SemaphoreIdentity,
  verified: boolean,
  options: GroupProveOptions,
): Promise<SemaphoreProof> {
  const floor = options.minAnonymity ?? DEFAULT_MIN_ANONYMITY;
  if (!Number.isSafeInteger(floor) || floor < 1) throw new RangeError(`minAnonymity must be a whole number of members (at least 1), not ${floor}`);
  const index = tree.indexOf(identity.commitment);
  if (index < 0) throw new GroupProofError("not_member", `the identity commitment ${identity.commitment} is not a member of group ${challenge.group_id}`);
  const { size, root } = chooseTree(tree, challenge, index, verified);
  const active = tree.activeIn(size);
  if (active < floor) {
    throw new GroupProofError(
      "anonymity",
      `group ${challenge.group_id} has ${active} active member${active === 1 ? "" : "s"} at the root proved against, fewer than this agent's floor of ${floor} (minAnonymity, --min-anonymity): a proof would ${active === 1 ? "name its member" : `narrow its member down to one of ${active}`}: refused`,
    );
  }
  const depth = challenge.merkle_tree_depth;
  const path = tree.pathOf(index, size);
  if (path.root !== root || !tree.verifyPath(path))
    throw new DamagedTree(`the path of the member in group ${challenge.group_id} does not hash up to the root ${root}`);
  // The circuit takes `depth` siblings; those past the tree's own depth are unused (Semaphore pads them with 0).
  const siblings = Array.from({ length: depth }, (_, i) => (path.siblings[i] ?? 0n).toString());
  const message = BigInt(challenge.message);
  const scope = BigInt(challenge.scope);
  const nullifier = semaphoreNullifier(scope, identity.secretScalar);
  const expected = semaphorePublicSignals({ merkleTreeRoot: root, nullifier, message, scope });
  const prover = await semaphoreProver(depth, options);
  const { proof } = await proveStatement(
    prover,
    {
      secret: identity.secretScalar.toString(),
      merkleProofLength: path.siblings.length.toString(),
      merkleProofIndex: path.index.toString(),
      merkleProofSiblings: siblings,
      scope: semaphoreHash(scope).toString(),
      message: semaphoreHash(message).toString(),
    },
    expected,
  );
  return {
    merkleTreeDepth: depth,
    merkleTreeRoot: root.toString(),
    nullifier: nullifier.toString(),
    message: challenge.message,
    scope: challenge.scope,
    points: packGroth16Proof(proof as Parameters<typeof packGroth16Proof>[0]),
  };
}

/**
 * A Semaphore v4 proof that the identity is a member of the challenge's group,
 * for its message and scope, in the stock proof-object format. Refuses
 * (GroupProofError) unless the members (or their first `size`, the
 * challenge's) rebuild the challenge's root and hold the identity's
 * commitment, among at least minAnonymity active members; the proof is
 * returned only when the prover's public signals are the statement computed here.
 */
export async function proveGroupMembership(request: GroupProveRequest, options: GroupProveOptions = {}): Promise<SemaphoreProof> {
  const challenge = parseGroupChallenge(request.challenge);
  const identity = importSemaphoreIdentity(request.privateKey);
  // The tree of lean-imt's rules with Semaphore's hash (AgentTree), not `new
  // Group(members)`: @semaphore-protocol/group 4.14.2 builds on lean-imt 2.2.4,
  // whose insertMany takes a 0 leaf for a missing one, so a list with a
  // removed member would not give the root Semaphore's removeMember gives
  // (test/agent/group.test.ts shows both).
  const tree = treeOf(challenge.group_id, leaves(request.members));
  try {
    // Members handed in are not known to be the service's: only the challenge's root is proved against.
    return await proveInTree(tree, challenge, identity, false, options);
  } catch (error) {
    if (error instanceof DamagedTree) throw new GroupProofError("members", `${error.message}: refused`);
    throw error;
  }
}

// --- internals, exported for test/agent (not part of the API) ---

/** The prover's result, only if its public signals are exactly `expected` (GroupProofError "statement" otherwise). @internal (not in the packages' declarations) */
export async function proveStatement(prover: Prover, input: CircuitInput, expected: readonly string[]): Promise<ProofResult> {
  const result = await prover.prove(input);
  const { publicSignals } = result;
  if (publicSignals.length !== expected.length || publicSignals.some((signal, i) => signal !== expected[i])) {
    throw new GroupProofError("statement", `the prover's public signals [${publicSignals}] are not the statement [${expected}]: no proof returned`);
  }
  return result;
}

export interface GroupChallengeRequest {
  privateKey: string;
  challenge: GroupChallenge;
  /** The zkagent service's base URL, where the group's members are read. */
  service: string;
}

/**
 * The challenge's group synced from the service (syncGroupTree: only the
 * changes since the tree this agent keeps, checked against the served root),
 * then proved in as proveGroupMembership does — or, when only members were
 * added since the challenge and its root cannot be rebuilt, against the
 * current root. A kept tree whose path does not hash up to its root is
 * dropped and the group synced from 0 once.
 */
export async function proveGroupChallenge(request: GroupChallengeRequest, options: GroupProveOptions & SyncOptions = {}): Promise<SemaphoreProof> {
  const challenge = parseGroupChallenge(request.challenge);
  // The message is what the proof binds: it must be the one the challenge's nonce, action and context give, whoever calls.
  checkGroupMessage({ ...challenge, context: challenge.context ?? {} });
  const identity = importSemaphoreIdentity(request.privateKey); // refuse a bad key before any request is made
  const cacheDir = options.treeCache === undefined ? defaultTreeCacheDir() : options.treeCache;
  // The service that names the group also serves the depth's pinned artifacts (GET /v1/circuits/{circuit_id}/wasm, /zkey): asked only when no local source has them.
  const artifactsService = {
    service: request.service,
    circuitId: challenge.circuit_id,
    allowInsecureLoopback: options.allowInsecureLoopback,
    fetch: options.fetch,
  };
  for (let attempt = 0; ; attempt++) {
    const synced = await syncGroupTree(request.service, challenge.group_id, { ...options, treeCache: cacheDir });
    try {
      return await proveInTree(synced.tree, challenge, identity, synced.verified, { ...options, artifactsService });
    } catch (error) {
      if (!(error instanceof DamagedTree)) throw error;
      forgetGroupTree(request.service, challenge.group_id, cacheDir, options.allowInsecureLoopback);
      if (attempt > 0 || !synced.fromCache) throw new GroupProofError("members", `${error.message}: refused`);
    }
  }
}
