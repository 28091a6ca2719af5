// A member's proof for a group challenge (issue 24): a Semaphore v4 proof,
// made by zkagent's own prover from the pinned public-ceremony artifacts.
//
//   const proof = await proveGroupChallenge({ privateKey, challenge, service, action: "purchase", context: { amount: "5" } });
//
// What it reveals: the root proved against, the nullifier (the member's
// pseudonym in the challenge's scope), message and scope. What it hides:
// which member. So every choice made here is a function of public data only
// (the challenge, the caller's intent, the group as the service serves it to
// everyone), never of the member's leaf:
//
// - the root is the group's current root as this agent's sync shows it (the
//   same for every member; sync.ts checks it is the one the service serves),
//   never one picked by the challenge's `merkle_tree_root` or `size`: picking
//   the challenge's root when the member's leaf lies in its prefix told a
//   platform that edits its 401 one bit of the leaf per order (issue 37). The
//   service accepts a bounded history of recent roots (docs/protocol.md,
//   "Which roots are acceptable"), so members added meanwhile break nothing;
// - a tree no service vouched for (members handed in, or a service older
//   than issue 32 that names no root) must give the challenge's root: a
//   consistency check, the same for every member, never a choice of root;
// - the anonymity floor counts the active members of that whole tree;
// - refusals (depth, anonymity, challenge) are the same for every member.
//
// The path is hashed up to the root before the prover runs, and the proof is
// returned only when the prover's public signals are the statement computed here.
import { packGroth16Proof } from "@zk-kit/utils/proof-packing";
import { LeanTree } from "../../groups/lean-tree";
import type { SemaphoreProof as SemaphoreProofObject } from "../../groups/proof-object";
import { anonymityOf } from "../../groups/roots";
import { semaphoreHash, semaphoreNullifier, semaphorePublicSignals } from "../../groups/statement";
import { FIELD_ORDER_R, parseFieldElement } from "../../identity/field";
import type { CircuitInput, ProofResult, Prover } from "../../prover";
import { type SemaphoreProverOptions, semaphoreProver } from "./artifacts";
import { defaultTreeCacheDir } from "./cache";
import { checkGroupIntent, type GroupChallenge, type GroupIntent, parseGroupChallenge } from "./challenge";
import { GroupProofError } from "./error";
import { importSemaphoreIdentity, type SemaphoreIdentity } from "./identity";
import { forgetGroupTree, type SyncOptions, syncGroupTree } from "./sync";

/** A Semaphore v4 proof, exactly as @semaphore-protocol/proof's generateProof returns it: the points packed as @zk-kit/utils' packGroth16Proof does (a, b with each Fp2 pair swapped, c). */
export type SemaphoreProof = Omit<SemaphoreProofObject, "points"> & { points: PackedGroth16Proof };

/**
 * The proof's eight coordinates as @zk-kit/utils' packGroth16Proof returns them
 * (decimal strings), stated here so that the SDK's declarations name no
 * package its install does not carry (the SDK bundles @zk-kit/utils).
 */
export type PackedGroth16Proof = [string, string, string, string, string, string, string, string];

export interface GroupProveRequest {
  /** The identity's exported private key (base64). */
  privateKey: string;
  challenge: GroupChallenge;
  /** The group's leaves in leaf order, "0" for a removed member (fetchGroupMembers). The proof is for their root. */
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
const trees = new Map<string, LeanTree>();

function treeOf(groupId: string, leaves: bigint[]): LeanTree {
  const cached = trees.get(groupId);
  trees.delete(groupId); // taken out while it changes: an exception leaves no half-updated tree behind
  let tree: LeanTree | undefined;
  if (cached && cached.size > 0 && leaves.length >= cached.size) {
    const changed: { index: number; value: bigint }[] = [];
    for (let i = 0; i < cached.size; i++) if (cached.leaf(i) !== leaves[i]) changed.push({ index: i, value: leaves[i]! });
    if (changed.length * Math.max(cached.depth, 1) < leaves.length) {
      for (let i = cached.size; i < leaves.length; i++) changed.push({ index: i, value: leaves[i]! });
      cached.apply(changed);
      tree = cached;
    }
  }
  tree ??= LeanTree.fromLeaves(leaves);
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
 * The proof for `challenge` against the whole tree's root, refused (the same
 * way for every member) when the tree is deeper than the challenge's circuit
 * or below the anonymity floor; the member's path is hashed up to the root
 * before the prover runs (DamagedTree otherwise).
 */
async function proveInTree(
  tree: LeanTree,
  challenge: GroupChallenge,
  identity: SemaphoreIdentity,
  verified: boolean,
  options: GroupProveOptions,
): Promise<SemaphoreProof> {
  const floor = options.minAnonymity ?? DEFAULT_MIN_ANONYMITY;
  if (!Number.isSafeInteger(floor) || floor < 1) throw new RangeError(`minAnonymity must be a whole number of members (at least 1), not ${floor}`);
  // Public facts first, in the same order for every member: whose tree, its depth, then the anonymity floor.
  if (!verified && tree.root.toString() !== challenge.merkle_tree_root) {
    throw new GroupProofError(
      "root_mismatch",
      `the ${tree.size} members of group ${challenge.group_id} give the root ${tree.size === 0 ? "(none)" : tree.root}, not the challenge's ${challenge.merkle_tree_root}, and no service vouched for them: refused`,
    );
  }
  if (tree.depth > challenge.merkle_tree_depth) {
    throw new GroupProofError(
      "depth",
      `group ${challenge.group_id} has depth ${tree.depth}, more than the challenge's merkle_tree_depth ${challenge.merkle_tree_depth}`,
    );
  }
  if (tree.active < floor) {
    throw new GroupProofError(
      "anonymity",
      `group ${challenge.group_id} has ${tree.active} active member${tree.active === 1 ? "" : "s"}, fewer than this agent's floor of ${floor} (minAnonymity, --min-anonymity): ${anonymityOf(tree.active)}: refused`,
    );
  }
  const index = tree.indexOf(identity.commitment);
  if (index < 0) throw new GroupProofError("not_member", `the identity commitment ${identity.commitment} is not a member of group ${challenge.group_id}`);
  const root = tree.root;
  const depth = challenge.merkle_tree_depth;
  const path = tree.pathOf(index);
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
 * A Semaphore v4 proof that the identity is one of `members`, for the
 * challenge's message and scope as given (the low-level call: a caller that
 * did not make them itself holds them to what it means with
 * checkGroupIntent first, as proveGroupChallenge does). The members must
 * give the challenge's root (no service vouched for them: root_mismatch
 * otherwise, the same for every member); refuses below minAnonymity active members.
 */
export async function proveGroupMembership(request: GroupProveRequest, options: GroupProveOptions = {}): Promise<SemaphoreProof> {
  const challenge = parseGroupChallenge(request.challenge);
  const identity = importSemaphoreIdentity(request.privateKey);
  // The tree of lean-imt's rules with Semaphore's hash (LeanTree), not `new
  // Group(members)`: @semaphore-protocol/group 4.14.2 builds on lean-imt 2.2.4,
  // whose insertMany takes a 0 leaf for a missing one, so a list with a
  // removed member would not give the root Semaphore's removeMember gives
  // (test/agent/group.test.ts shows both).
  const tree = treeOf(challenge.group_id, leaves(request.members));
  try {
    // Members handed in are not known to be the service's: they must give the challenge's root.
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

export interface GroupChallengeRequest extends GroupIntent {
  privateKey: string;
  /** The challenge: the service's answer to POST /v1/verify/challenge (with action and context given here), or a 401's. */
  challenge: GroupChallenge;
  /** The zkagent service's base URL, where the group's members are read. */
  service: string;
}

/**
 * The challenge held to what the caller means (action, context, origin:
 * checkGroupIntent), the group synced from the service (syncGroupTree: only
 * the changes since the tree this agent keeps, checked against the served
 * root), and the proof made against that current root. A kept tree whose
 * path does not hash up to its root is dropped and the group synced from 0 once.
 */
export async function proveGroupChallenge(request: GroupChallengeRequest, options: GroupProveOptions & SyncOptions = {}): Promise<SemaphoreProof> {
  const challenge = parseGroupChallenge(request.challenge);
  // The message and scope are what the proof binds: checked against what the caller means, whoever calls.
  checkGroupIntent(challenge, request);
  const identity = importSemaphoreIdentity(request.privateKey); // refuse a bad key before any request is made
  const cacheDir = options.treeCache === undefined ? defaultTreeCacheDir() : options.treeCache;
  // The service that names the group also serves the depth's pinned artifacts (GET /v1/circuits/{circuit_id}/wasm, /zkey): asked only when no local source has them.
  const artifactsService = {
    service: request.service,
    circuitId: challenge.circuit_id,
    allowInsecureLoopback: options.allowInsecureLoopback,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
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
