// Private verification, the agent's side (issue 24): a Semaphore v4 identity,
// and a proof that it is a member of the group a challenge names, made by
// zkagent's own prover from the pinned public-ceremony artifacts.
//
//   const id = createSemaphoreIdentity();      // keep id.private_key on the agent; the group's owner adds id.identity_commitment
//   const proof = await proveGroupChallenge({ privateKey: id.private_key, challenge, service: "https://zkagent.example" });
//   // submit JSON.stringify(proof) as the challenge's proof
//
// What the agent sends nobody: which member it is. It downloads the whole
// member list (GET /v1/groups/{id}/members, no API key), rebuilds the Lean
// incremental Merkle tree itself with @zk-kit/lean-imt, and proves
// only if that tree's root is the one the challenge names; the proof reveals
// the root, the nullifier (its pseudonym for this scope), message and scope.
//
// The members route may page. What is assumed of its answer (docs/api.md,
// "Private verification (agent side)"): `members` is the next run of leaves in
// leaf order ("0" for a removed member); the list continues when the answer
// has `next` — a URL or path on the same origin, or a number: the offset of the
// next page — or when it has a `total` (or `size`) greater than the leaves
// read so far, in which case the next page is asked for with `?offset=`. An
// answer with neither is the whole list. A group that changes between pages
// gives a root other than the challenge's, which is refused like any other.
import { acceptedSource, readBounded } from "./bounded";
import { Identity } from "@semaphore-protocol/identity";
import type { LeanIMT } from "@zk-kit/lean-imt";
import { packGroth16Proof } from "@zk-kit/utils/proof-packing";
import type { SemaphoreProof as SemaphoreProofObject } from "../groups/proof-object";
import { parseSemaphoreValue, semaphoreHash, semaphoreNullifier, semaphorePublicSignals } from "../groups/statement";
import { FIELD_ORDER_R, parseFieldElement } from "../identity/field";
import { semaphoreTree } from "../groups/tree";
import type { CircuitInput, ProofResult, Prover } from "../prover";
import type { JsonObject } from "../identity/encoding";
import { isSemaphoreDepth, semaphoreProver } from "./semaphore-artifacts";

export { loadSemaphoreArtifacts, SemaphoreArtifactError, type SemaphoreArtifacts } from "./semaphore-artifacts";

export type GroupProofErrorCode =
  /** The challenge lacks a field or has one of the wrong form. */
  | "challenge"
  /** The identity's private key is not what Identity.export() writes, or does not match its commitment. */
  | "identity"
  /** The member list could not be read, or is not a list of field elements in leaf order. */
  | "members"
  /** The tree rebuilt from the member list has another root than the challenge names. */
  | "root_mismatch"
  /** The identity's commitment is not a leaf of the tree. */
  | "not_member"
  /** The tree is deeper than the challenge's merkle_tree_depth. */
  | "depth"
  /** The prover's public signals are not the statement computed here: nothing is returned. */
  | "statement";

/** A refusal to prove, naming what was wrong. */
export class GroupProofError extends Error {
  override readonly name = "GroupProofError";
  constructor(
    readonly code: GroupProofErrorCode,
    message: string,
  ) {
    super(message);
  }
}

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
}

/** A Semaphore v4 proof, exactly as @semaphore-protocol/proof's generateProof returns it: the points packed as @zk-kit/utils' packGroth16Proof does (a, b with each Fp2 pair swapped, c). */
export type SemaphoreProof = Omit<SemaphoreProofObject, "points"> & { points: ReturnType<typeof packGroth16Proof> };

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
export function importSemaphoreIdentity(privateKey: string): Identity {
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
  /** Where semaphore-<depth>.zkey/.wasm are; default the installed @zk-kit/semaphore-artifacts. Checked against the pins either way. */
  artifactsDir?: string;
  /** Window tables when the depth's prover is built (default true); false: none (a fast start, proofs ≈ 1.5× slower at depth 20). */
  precompute?: boolean;
  /** Where the tables are kept between processes; default defaultTableCacheDir(), false for none (ProveOptions.tableCache). */
  tableCache?: string | false;
  /** Threads per proof; default the machine's cores, at most 4 (src/prover/threads.ts). */
  threads?: number;
}

// The last trees built, by group id, so that a process proving again for a
// group whose list changed a little (members added, a few removed) updates
// the tree with lean-imt's own update and insertMany instead of rebuilding it:
// a rebuild costs a Poseidon hash per member (≈ 0.1–0.5 ms each,
// docs/performance.md), an update `depth` hashes per changed leaf. Whatever
// the path, the root is checked against the challenge's before any use.
const MAX_CACHED_TREES = 4;
const trees = new Map<string, { leaves: bigint[]; tree: LeanIMT<bigint> }>();

function treeOf(groupId: string, leaves: bigint[]): LeanIMT<bigint> {
  const cached = trees.get(groupId);
  trees.delete(groupId); // taken out while it changes: an exception leaves no half-updated tree behind
  let tree: LeanIMT<bigint> | undefined;
  if (cached && cached.leaves.length > 0 && leaves.length >= cached.leaves.length) {
    const changed: number[] = [];
    for (let i = 0; i < cached.leaves.length; i++) if (cached.leaves[i] !== leaves[i]) changed.push(i);
    if (changed.length * Math.max(cached.tree.depth, 1) < leaves.length) {
      tree = cached.tree;
      for (const i of changed) tree.update(i, leaves[i]!);
      if (leaves.length > cached.leaves.length) tree.insertMany(leaves.slice(cached.leaves.length));
    }
  }
  tree ??= semaphoreTree(leaves);
  trees.set(groupId, { leaves, tree });
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

/**
 * A Semaphore v4 proof that the identity is a member of the challenge's group,
 * for its message and scope, in the stock proof-object format. Refuses
 * (GroupProofError) unless the members rebuild the challenge's root and hold
 * the identity's commitment; the proof is returned only when the prover's
 * public signals are the statement computed here.
 */
export async function proveGroupMembership(request: GroupProveRequest, options: GroupProveOptions = {}): Promise<SemaphoreProof> {
  const challenge = parseGroupChallenge(request.challenge);
  const identity = importSemaphoreIdentity(request.privateKey);
  const root = BigInt(challenge.merkle_tree_root);
  const depth = challenge.merkle_tree_depth;
  const message = BigInt(challenge.message);
  const scope = BigInt(challenge.scope);

  // The tree of @zk-kit/lean-imt ≥ 2.2.5 with Semaphore's hash, not `new
  // Group(members)`: @semaphore-protocol/group 4.14.2 builds on lean-imt 2.2.4,
  // whose insertMany takes a 0 leaf for a missing one, so a list with a
  // removed member would not give the root Semaphore's removeMember gives
  // (test/agent/group.test.ts shows both).
  const group = treeOf(challenge.group_id, leaves(request.members));
  if (group.size === 0 || group.root !== root) {
    throw new GroupProofError(
      "root_mismatch",
      `the ${group.size} members of group ${challenge.group_id} give the root ${group.root ?? "(none)"}, not the challenge's ${root}: refused`,
    );
  }
  const index = group.indexOf(identity.commitment);
  if (index < 0) throw new GroupProofError("not_member", `the identity commitment ${identity.commitment} is not a member of group ${challenge.group_id}`);
  if (group.depth > depth) {
    throw new GroupProofError("depth", `group ${challenge.group_id} has depth ${group.depth}, more than the challenge's merkle_tree_depth ${depth}`);
  }
  const path = group.generateProof(index);
  // The circuit takes `depth` siblings; those past the tree's own depth are unused (Semaphore pads them with 0).
  const siblings = Array.from({ length: depth }, (_, i) => (path.siblings[i] ?? 0n).toString());

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

// --- internals, exported for test/agent (not part of the API) ---

/** The prover's result, only if its public signals are exactly `expected` (GroupProofError "statement" otherwise). */
export async function proveStatement(prover: Prover, input: CircuitInput, expected: readonly string[]): Promise<ProofResult> {
  const result = await prover.prove(input);
  const { publicSignals } = result;
  if (publicSignals.length !== expected.length || publicSignals.some((signal, i) => signal !== expected[i])) {
    throw new GroupProofError("statement", `the prover's public signals [${publicSignals}] are not the statement [${expected}]: no proof returned`);
  }
  return result;
}

export interface FetchMembersOptions {
  /** For tests and custom transports; the global fetch by default. */
  fetch?: typeof fetch;
  /** The most leaves accepted (default 2^21): a list longer than this is refused, not read on. */
  maxMembers?: number;
  /** The most bytes one page's body may have (default 128 MiB), enforced while it streams. */
  maxPageBytes?: number;
  /** Accept an http:// service on a loopback host (a local service, tests); https only otherwise. */
  allowInsecureLoopback?: boolean;
  /** Milliseconds each page may take, its body included (default 60 s). */
  timeoutMs?: number;
}

/** The service's base URL: https, or http on a loopback address when asked (acceptedSource). */
function serviceBase(service: string, allowInsecureLoopback?: boolean): URL {
  let url: URL;
  try {
    url = new URL(service);
  } catch {
    throw new GroupProofError("members", `${service} is not a URL`);
  }
  if (!acceptedSource(url, allowInsecureLoopback)) {
    throw new GroupProofError("members", `${service}: the service must be https:// (http:// only on a loopback address, with allowInsecureLoopback)`);
  }
  return url;
}

/** The body of a response as text, refused once it passes `limit` bytes (counted while streaming). */
async function boundedText(response: Response, limit: number, url: string): Promise<string> {
  const body = await readBounded(response, limit);
  if (body === null) throw new GroupProofError("members", `GET ${url}: the answer passes ${limit} bytes: refused`);
  return new TextDecoder().decode(body.bytes);
}

/**
 * Every leaf of a group, in leaf order, from GET {service}/v1/groups/{id}/members
 * (no API key is sent: the route is public). Pages are followed as the file
 * header says; each leaf must be a decimal field element.
 */
export async function fetchGroupMembers(service: string, groupId: string, options: FetchMembersOptions = {}): Promise<string[]> {
  const get = options.fetch ?? fetch;
  const maxMembers = options.maxMembers ?? 1 << 21;
  const maxPageBytes = options.maxPageBytes ?? 128 << 20;
  const base = serviceBase(service, options.allowInsecureLoopback);
  const first = new URL(`${base.pathname.replace(/\/$/, "")}/v1/groups/${encodeURIComponent(groupId)}/members`, base);
  const members: string[] = [];
  let url: URL | null = first;
  let total: number | undefined;
  while (url) {
    const current: URL = url;
    const signal = AbortSignal.timeout(options.timeoutMs ?? 60_000);
    const response = await get(current.href, { redirect: "error", signal, headers: { accept: "application/json" } }).catch((error: Error) => {
      throw new GroupProofError("members", `GET ${current}: ${signal.aborted ? `no answer within ${(options.timeoutMs ?? 60_000) / 1000} s` : error.message}`);
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw new GroupProofError("members", `GET ${url}: HTTP ${response.status}`);
    }
    let page: Record<string, unknown>;
    try {
      page = JSON.parse(await boundedText(response, maxPageBytes, url.href));
    } catch (error) {
      if (error instanceof GroupProofError) throw error;
      throw new GroupProofError("members", `GET ${url}: ${signal.aborted ? "the answer did not arrive in time" : "the answer is not JSON"}`);
    }
    if (typeof page !== "object" || page === null || !Array.isArray(page.members)) throw new GroupProofError("members", `GET ${url}: no "members" list`);
    for (const member of page.members) {
      if (typeof member !== "string" || parseFieldElement(member) === null) {
        throw new GroupProofError("members", `GET ${url}: member ${members.length} is not a decimal field element`);
      }
      members.push(member);
    }
    if (members.length > maxMembers) throw new GroupProofError("members", `group ${groupId} has more than ${maxMembers} members: refused`);
    const announced = page.total ?? page.size;
    if (announced !== undefined && announced !== null) {
      if (!Number.isSafeInteger(announced) || (announced as number) < 0) throw new GroupProofError("members", `GET ${url}: "total" is not a count`);
      if (total !== undefined && total !== announced) throw new GroupProofError("members", `group ${groupId} changed size while its pages were read`);
      total = announced as number;
      if (total > maxMembers) throw new GroupProofError("members", `group ${groupId} has ${total} members, more than ${maxMembers}: refused`);
    }
    const previous: URL = url;
    url = null;
    if (typeof page.next === "string") {
      url = new URL(page.next, previous);
      if (url.origin !== first.origin) throw new GroupProofError("members", `GET ${previous}: the next page ${page.next} is on another origin: refused`);
      if (url.href === previous.href) throw new GroupProofError("members", `GET ${previous}: the next page is this page`);
    } else if (typeof page.next === "number") {
      if (page.next !== members.length) throw new GroupProofError("members", `GET ${previous}: the next page starts at ${page.next}, not at ${members.length}`);
      url = new URL(first);
      url.searchParams.set("offset", String(members.length));
    } else if (total !== undefined && members.length < total) {
      url = new URL(first);
      url.searchParams.set("offset", String(members.length));
    }
    // A page that adds nothing while more is announced would loop forever.
    if (url && page.members.length === 0) throw new GroupProofError("members", `GET ${previous}: an empty page, yet more members are announced`);
  }
  if (total !== undefined && members.length !== total)
    throw new GroupProofError("members", `group ${groupId}: ${members.length} members read, ${total} announced`);
  return members;
}

export interface GroupChallengeRequest {
  privateKey: string;
  challenge: GroupChallenge;
  /** The zkagent service's base URL, where the group's members are read. */
  service: string;
}

/** fetchGroupMembers for the challenge's group, then proveGroupMembership. */
export async function proveGroupChallenge(request: GroupChallengeRequest, options: GroupProveOptions & FetchMembersOptions = {}): Promise<SemaphoreProof> {
  const challenge = parseGroupChallenge(request.challenge);
  importSemaphoreIdentity(request.privateKey); // refuse a bad key before any request is made
  const members = await fetchGroupMembers(request.service, challenge.group_id, options);
  return proveGroupMembership({ privateKey: request.privateKey, challenge, members }, options);
}
