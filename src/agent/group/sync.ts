// Reading a group's tree from its zkagent service (issue 32): the agent keeps
// the tree it synced last (src/agent/group/cache.ts) and asks only for what
// changed since that version:
//
//   GET {service}/v1/groups/{id}/members?since=V&offset=N   (no API key)
//   → {group_id, version, size, merkle_tree_root, merkle_tree_depth, since,
//      offset, count, changes, next_offset}
//
// `changes` is base64url (no padding) of `count` records of 36 bytes: the
// leaf index (uint32, big-endian) ‖ its value (32 bytes, big-endian; 0 for a
// removed member): every leaf changed after version V, in index order, paged
// until next_offset is null; since=0 is every leaf. A group that changes while
// its pages are read shows another version: the read starts again.
//
// What it hides: which member the agent is. It downloads every change (on a
// first sync, every leaf), never its own path, and asks the same whoever it
// is. What it reveals: that some member (or anyone) read the group, when.
// Nothing served is used unchecked: the tree the changes give must have the
// root the same answer serves, or it is dropped and synced from version 0;
// a sync from 0 that does not give the served root is refused. And the
// service cannot rewrite history: a leaf the agent has seen is, in whatever
// it serves later (changes, or a whole resync after a 400 to ?since), that
// same leaf or 0 (removed), never another member, and never fewer leaves:
// else the sync is refused, naming the leaf (a service showing this agent a
// tree of its own making could steer which root it proves against). A service that
// does not know `since` (an answer without `changes`) is read the older way:
// every leaf, from the paged member list.
import { acceptedSource, readBounded } from "../../bounded-fetch";
import { serviceSays } from "./artifacts";
import { defaultTreeCacheDir, dropTree, readTree, treePath, writeTree } from "./cache";
import { GroupProofError } from "./error";
import type { LeafChange, LeanTree } from "../../groups/lean-tree";
import { NODE_BYTES, readNode, writeNode } from "../../groups/lean-tree";
import { buildTree } from "./tree";
import { FIELD_ORDER_R, parseFieldElement } from "../../identity/field";

export interface FetchMembersOptions {
  /** For tests and custom transports; the global fetch by default. */
  fetch?: typeof fetch;
  /** The most leaves accepted (default 2^21): a group larger than this is refused, not read on. */
  maxMembers?: number;
  /** The most bytes one page's body may have (default 128 MiB), enforced while it streams. */
  maxPageBytes?: number;
  /** Accept an http:// service on a loopback host (a local service, tests); https only otherwise. */
  allowInsecureLoopback?: boolean;
  /** Milliseconds each page may take, its body included (default 60 s). */
  timeoutMs?: number;
}

export interface SyncOptions extends FetchMembersOptions {
  /** Where synced trees are kept between processes; default defaultTreeCacheDir(), false for none (each process then reads every leaf). */
  treeCache?: string | false;
}

/** A group's tree as synced: its root is the one the service served in the same answer. */
export interface SyncedGroup {
  tree: LeanTree;
  /** The group's version (null from a service without the changes feed). */
  version: number | null;
  /** Leaf records the service sent in this sync (a first sync: every leaf; later: the changes). */
  received: number;
  /** Whether the sync started from a tree this agent kept (memory or disk). */
  fromCache: boolean;
  /** Whether the tree's root is the one the service served with it (false only from an older service that names no root). */
  verified: boolean;
}

const RECORD_BYTES = 4 + NODE_BYTES;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** The service's base URL: https, or http on a loopback address when asked (acceptedSource). */
export function serviceBase(service: string, allowInsecureLoopback?: boolean): URL {
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

const membersUrl = (base: URL, groupId: string): URL => new URL(`${base.pathname.replace(/\/$/, "")}/v1/groups/${encodeURIComponent(groupId)}/members`, base);

/** The body of a response as a JSON object, refused once it passes `limit` bytes (counted while streaming) or its time ran out. */
async function boundedJson(response: Response, limit: number, url: string, signal: AbortSignal): Promise<Record<string, unknown>> {
  let body: Awaited<ReturnType<typeof readBounded>>;
  try {
    body = await readBounded(response, limit);
  } catch (error) {
    throw Object.assign(new GroupProofError("members", `GET ${url}: ${signal.aborted ? "the answer did not arrive in time" : (error as Error).message}`), {
      cause: error,
    });
  }
  if (body === null) throw new GroupProofError("members", `GET ${url}: the answer passes ${limit} bytes: refused`);
  let page: unknown;
  try {
    page = JSON.parse(new TextDecoder().decode(body.bytes));
  } catch {
    throw new GroupProofError("members", `GET ${url}: the answer is not JSON`);
  }
  if (typeof page !== "object" || page === null || Array.isArray(page)) throw new GroupProofError("members", `GET ${url}: the answer is not a JSON object`);
  return page as Record<string, unknown>;
}

/** GET `url` (no key, no redirect) within the options' time per page; the signal also bounds reading the body. */
async function get(options: FetchMembersOptions, url: URL): Promise<{ response: Response; signal: AbortSignal }> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const signal = AbortSignal.timeout(timeoutMs);
  const response = await (options.fetch ?? fetch)(url.href, { redirect: "error", signal, headers: { accept: "application/json" } }).catch((error: Error) => {
    const reason = signal.aborted ? `no answer within ${timeoutMs / 1000} s` : error.message;
    throw Object.assign(new GroupProofError("members", `GET ${url}: ${reason}`), { cause: error });
  });
  return { response, signal };
}

/**
 * Every leaf of a group, in leaf order, from GET {service}/v1/groups/{id}/members
 * (no API key is sent: the route is public), and the root the last page
 * served (undefined when it names none). Pages are followed by `next` (a URL
 * on the same origin, or the next offset), `next_offset`, or a `total`/`size`
 * larger than what was read; each leaf must be a decimal field element.
 */
export async function readMembers(
  service: string,
  groupId: string,
  options: FetchMembersOptions = {},
  /** The first page, already read (a service that answered ?since=0 with its plain list). */
  firstPage?: { url: URL; page: Record<string, unknown> },
): Promise<{ members: string[]; root?: string }> {
  const maxMembers = options.maxMembers ?? 1 << 21;
  const maxPageBytes = options.maxPageBytes ?? 128 << 20;
  const first = membersUrl(serviceBase(service, options.allowInsecureLoopback), groupId);
  const members: string[] = [];
  let url: URL | null = first;
  let total: number | undefined;
  let root: string | undefined;
  let prefetched = firstPage;
  while (url) {
    let current: URL = url;
    let page: Record<string, unknown>;
    if (prefetched) {
      ({ url: current, page } = prefetched);
      prefetched = undefined;
    } else {
      const { response, signal } = await get(options, current);
      if (!response.ok) throw new GroupProofError("members", `GET ${current}: HTTP ${response.status}${await serviceSays(response)}`);
      page = await boundedJson(response, maxPageBytes, current.href, signal);
    }
    if (!Array.isArray(page.members)) throw new GroupProofError("members", `GET ${current}: no "members" list`);
    for (const member of page.members) {
      if (typeof member !== "string" || parseFieldElement(member) === null) {
        throw new GroupProofError("members", `GET ${current}: member ${members.length} is not a decimal field element`);
      }
      members.push(member);
    }
    if (members.length > maxMembers) throw new GroupProofError("members", `group ${groupId} has more than ${maxMembers} members: refused`);
    root = typeof page.merkle_tree_root === "string" ? page.merkle_tree_root : undefined;
    const announced = page.total ?? page.size;
    if (announced !== undefined && announced !== null) {
      if (!Number.isSafeInteger(announced) || (announced as number) < 0) throw new GroupProofError("members", `GET ${current}: "total" is not a count`);
      if (total !== undefined && total !== announced) throw new GroupProofError("members", `group ${groupId} changed size while its pages were read`);
      total = announced as number;
      if (total > maxMembers) throw new GroupProofError("members", `group ${groupId} has ${total} members, more than ${maxMembers}: refused`);
    }
    url = null;
    const next = page.next ?? page.next_offset;
    if (typeof next === "string") {
      url = new URL(next, current);
      if (url.origin !== first.origin) throw new GroupProofError("members", `GET ${current}: the next page ${next} is on another origin: refused`);
      if (url.href === current.href) throw new GroupProofError("members", `GET ${current}: the next page is this page`);
    } else if (typeof next === "number") {
      if (next !== members.length) throw new GroupProofError("members", `GET ${current}: the next page starts at ${next}, not at ${members.length}`);
      url = new URL(first);
      url.searchParams.set("offset", String(members.length));
    } else if (total !== undefined && members.length < total) {
      url = new URL(first);
      url.searchParams.set("offset", String(members.length));
    }
    // A page that adds nothing while more is announced would loop forever.
    if (url && page.members.length === 0) throw new GroupProofError("members", `GET ${current}: an empty page, yet more members are announced`);
  }
  if (total !== undefined && members.length !== total)
    throw new GroupProofError("members", `group ${groupId}: ${members.length} members read, ${total} announced`);
  return { members, root };
}

/** Every leaf of a group, in leaf order (readMembers without the root). */
export async function fetchGroupMembers(service: string, groupId: string, options: FetchMembersOptions = {}): Promise<string[]> {
  return (await readMembers(service, groupId, options)).members;
}

interface ChangeSet {
  version: number;
  size: number;
  root: bigint;
  changes: LeafChange[];
}

const count = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/**
 * The changes since `since`, every page of one version: a ChangeSet; `legacy`
 * when the service answers without `changes` (with its plain list's first
 * page when it sent one); "unknown" when it refuses the
 * version (400: a tree from another life of the service); "moved" when the
 * group changed between pages.
 */
async function readChanges(
  first: URL,
  groupId: string,
  since: number,
  options: FetchMembersOptions,
): Promise<ChangeSet | { legacy: { url: URL; page: Record<string, unknown> } | undefined } | "unknown" | "moved"> {
  const maxMembers = options.maxMembers ?? 1 << 21;
  const maxPageBytes = options.maxPageBytes ?? 128 << 20;
  const changes: LeafChange[] = [];
  let head: { version: number; size: number; root: bigint } | undefined;
  let offset = 0;
  for (;;) {
    const url = new URL(first);
    url.searchParams.set("since", String(since));
    if (offset > 0) url.searchParams.set("offset", String(offset));
    const { response, signal } = await get(options, url);
    if (response.status === 400 && offset === 0) {
      await response.body?.cancel();
      // since > 0: a version this service never had (a tree from another life of it); since = 0: a service that does not take `since`.
      return since > 0 ? "unknown" : { legacy: undefined };
    }
    if (!response.ok) throw new GroupProofError("members", `GET ${url}: HTTP ${response.status}${await serviceSays(response)}`);
    const page = await boundedJson(response, maxPageBytes, url.href, signal);
    if (!("changes" in page)) {
      if (since > 0 || offset > 0) throw new GroupProofError("members", `GET ${url}: no "changes" in an answer to ?since=`);
      // A service without the feed ignored `since`: this is the first page of its plain list.
      return { legacy: { url, page } };
    }
    const wrong = (what: string) => new GroupProofError("members", `GET ${url}: ${what}: refused`);
    if (page.group_id !== groupId) throw wrong(`the answer is for group ${String(page.group_id)}`);
    if (!count(page.version) || !count(page.size) || !count(page.count) || page.offset !== offset)
      throw wrong("version, size, count or offset is not what was asked");
    const root = typeof page.merkle_tree_root === "string" ? parseFieldElement(page.merkle_tree_root) : null;
    if (root === null) throw wrong("merkle_tree_root is not a decimal field element");
    if (page.size > maxMembers) throw wrong(`group ${groupId} has ${page.size} leaves, more than ${maxMembers}`);
    if (head === undefined) head = { version: page.version, size: page.size, root };
    else if (page.version !== head.version || page.size !== head.size) return "moved";
    if (typeof page.changes !== "string" || !BASE64URL.test(page.changes)) throw wrong("changes is not base64url");
    const bytes = Buffer.from(page.changes, "base64url");
    if (bytes.length !== page.count * RECORD_BYTES) throw wrong(`changes holds ${bytes.length} bytes, not count × ${RECORD_BYTES}`);
    for (let at = 0; at < bytes.length; at += RECORD_BYTES) {
      const index = bytes.readUInt32BE(at);
      const value = readNode(bytes, at + 4);
      if (value >= FIELD_ORDER_R) throw wrong(`leaf ${index} is not below the field order`);
      const previous = changes[changes.length - 1];
      if (previous !== undefined && index <= previous.index) throw wrong(`leaf ${index} comes after leaf ${previous.index}`);
      if (index >= head.size) throw wrong(`leaf ${index} is past the group's ${head.size} leaves`);
      changes.push({ index, value });
    }
    const next = page.next_offset;
    if (next === null || next === undefined) break;
    // A service pages by key (issue 37: the leaf after the page's last record) or, before it, by record count (offset + count).
    const last = changes[changes.length - 1]?.index;
    const follows = next === offset + page.count || (last !== undefined && next === last + 1);
    if (!follows || page.count === 0) throw wrong(`next_offset ${String(next)} does not follow ${offset} + ${page.count}`);
    offset = next;
  }
  return { ...head!, changes };
}

// The trees this process synced, by cache key: a process proving twice reads its file once.
const MAX_MEMORY_TREES = 4;
const memory = new Map<string, { tree: LeanTree; version: number }>();

function remember(key: string, tree: LeanTree, version: number): void {
  memory.delete(key);
  memory.set(key, { tree, version });
  if (memory.size > MAX_MEMORY_TREES) memory.delete(memory.keys().next().value!);
}

/** Drops what this process and its cache hold of a group (a tree that failed a check). */
export function forgetGroupTree(service: string, groupId: string, cacheDir: string | false, allowInsecureLoopback?: boolean): void {
  const key = serviceKey(serviceBase(service, allowInsecureLoopback));
  memory.delete(`${key}\n${groupId}`);
  if (cacheDir !== false) dropTree(treePath(cacheDir, key, groupId));
}

/**
 * The leaves this agent has seen of a group: a tree whose root was served,
 * as it stood before any change not yet checked against a served root
 * (`before`: the earlier value of each leaf such a change touched).
 */
interface Seen {
  tree: LeanTree;
  size: number;
  before: Map<number, bigint>;
}

const leafBytes = (tree: LeanTree): Uint8Array => tree.payload()[0] ?? new Uint8Array(0);

/**
 * GroupProofError unless `fresh` (a tree with a served root) keeps every leaf
 * `seen` held: the same value, or 0 (removed); never another member, never
 * a removed leaf back, never fewer leaves. Compared as bytes (a million
 * leaves in milliseconds), then leaf by leaf where they differ.
 */
export function checkHistory(seen: Seen, fresh: LeanTree, groupId: string): void {
  const refuse = (what: string) =>
    new GroupProofError(
      "members",
      `the service rewrote the history of group ${groupId}: ${what}, yet leaves are only ever added or removed (set to 0): refused (the tree this agent keeps is left as it was; if the service's store was really replaced, remove the agent's group-tree cache)`,
    );
  if (fresh.size < seen.size) throw refuse(`it now serves ${fresh.size} leaves, this agent has seen ${seen.size}`);
  const old = leafBytes(seen.tree);
  const now = leafBytes(fresh);
  const bytes = seen.size * NODE_BYTES;
  if (seen.before.size === 0 && Buffer.compare(old.subarray(0, bytes), now.subarray(0, bytes)) === 0) return;
  for (let i = 0; i < seen.size; i++) {
    const at = i * NODE_BYTES;
    const known = seen.before.get(i);
    if (known === undefined && Buffer.compare(old.subarray(at, at + NODE_BYTES), now.subarray(at, at + NODE_BYTES)) === 0) continue;
    const was = known ?? readNode(old, at);
    const is = readNode(now, at);
    if (is === was || is === 0n) continue;
    throw refuse(was === 0n ? `leaf ${i} was removed (0) and is now ${is}` : `leaf ${i} was ${was} and is now ${is}`);
  }
}

/** The service as the cache names it: its base URL without a trailing slash. */
const serviceKey = (base: URL): string => base.href.replace(/\/$/, "");

/**
 * The group's tree, brought up to the service's current version: from this
 * process's last tree or the disk cache when there is one, with only the
 * changes since; checked against the root the service serves (else dropped
 * and synced from 0, and refused if that does not give it either).
 */
export async function syncGroupTree(service: string, groupId: string, options: SyncOptions = {}): Promise<SyncedGroup> {
  const cacheDir = options.treeCache === undefined ? defaultTreeCacheDir() : options.treeCache;
  const base = serviceBase(service, options.allowInsecureLoopback);
  const key = serviceKey(base);
  const memoryKey = `${key}\n${groupId}`;
  const path = cacheDir === false ? null : treePath(cacheDir, key, groupId);
  const first = membersUrl(base, groupId);

  let held: { tree: LeanTree; version: number } | undefined = memory.get(memoryKey);
  memory.delete(memoryKey); // taken out while it changes: an exception leaves no half-updated tree behind
  if (!held && path) {
    const read = readTree(path, key, groupId);
    if ("tree" in read) held = read;
    else if (read.problem !== "none") dropTree(path);
  }
  let received = 0;
  // What this agent has seen, whatever the service answers from here on: a resync from 0 must keep it (checkHistory).
  const seen: Seen | undefined = held ? { tree: held.tree, size: held.tree.size, before: new Map() } : undefined;
  const seenVersion = held?.version ?? 0;
  const keepsHistory = (fresh: LeanTree) => {
    if (!seen || fresh === seen.tree) return;
    try {
      checkHistory(seen, fresh, groupId);
    } catch (error) {
      // Refused: this process keeps what it had seen (unless unchecked changes touched it; the disk copy is untouched either way).
      if (seen.before.size === 0 && seen.tree.size === seen.size) remember(memoryKey, seen.tree, seenVersion);
      throw error;
    }
  };
  for (let attempt = 0; attempt < 4; attempt++) {
    const since = held?.version ?? 0;
    const answer = await readChanges(first, groupId, since, options);
    if (answer === "moved") continue;
    if (answer === "unknown") {
      // Resynced from 0, but not trusted more for it: the new history is checked against `seen` before it replaces anything.
      held = undefined;
      continue;
    }
    if ("legacy" in answer) {
      const synced = await legacySync(service, groupId, options, held?.tree, answer.legacy);
      keepsHistory(synced.tree);
      // Kept in this process only (no version to resume from): the next read hashes only the leaves that differ.
      remember(memoryKey, synced.tree, 0);
      return synced;
    }
    received += answer.changes.length;
    const tree = held?.tree ?? (await firstTree(answer.changes));
    // A group's leaves are only ever added or removed (set to 0, never back): a change that rewrites a leaf the agent
    // holds is a service rewriting history, e.g. to show this agent a tree of its own choosing. Refused, not resynced.
    for (const change of answer.changes) {
      if (change.index >= tree.size || change.value === 0n) continue;
      if (tree.leaf(change.index) !== change.value) {
        throw new GroupProofError(
          "members",
          `the service changed leaf ${change.index} of group ${groupId} from ${tree.leaf(change.index)} to ${change.value}, yet leaves are only added or removed: refused`,
        );
      }
    }
    try {
      if (held) {
        // The leaves these changes overwrite, as seen: if the result is not the served root, the resync is held to them.
        for (const change of answer.changes)
          if (change.index < tree.size && !seen!.before.has(change.index)) seen!.before.set(change.index, tree.leaf(change.index));
        tree.apply(answer.changes);
      }
    } catch (error) {
      throw new GroupProofError("members", `the changes served for group ${groupId}: ${(error as Error).message}: refused`);
    }
    if (tree.size === answer.size && tree.root === answer.root) {
      if (held === undefined) keepsHistory(tree);
      if (path && (held === undefined || answer.version !== held.version)) writeTree(cacheDir as string, path, key, groupId, answer.version, tree);
      remember(memoryKey, tree, answer.version);
      return { tree, version: answer.version, received, fromCache: held !== undefined, verified: true };
    }
    if (held === undefined) {
      throw new GroupProofError(
        "root_mismatch",
        `the ${tree.size} leaves served for group ${groupId} give the root ${tree.root}, not the root ${answer.root} the service names: refused`,
      );
    }
    // The kept tree and the changes do not give the served root: start again from nothing (held to what was seen).
    held = undefined;
  }
  throw new GroupProofError("members", `group ${groupId} kept changing while it was read: try again`);
}

/**
 * The tree of a first sync (every leaf, in order): hashed in shares on
 * threads when it is large (src/agent/group/tree.ts). Leaves with a gap are refused.
 */
async function firstTree(changes: readonly LeafChange[]): Promise<LeanTree> {
  const bytes = new Uint8Array(changes.length * NODE_BYTES);
  for (const [i, change] of changes.entries()) {
    if (change.index !== i) throw new GroupProofError("members", `the leaves served leave a gap before leaf ${change.index}: refused`);
    writeNode(bytes, i * NODE_BYTES, change.value);
  }
  return buildTree(bytes, changes.length);
}

/** A service without the changes feed: every leaf, applied as changes to the tree held (so only what differs is hashed). */
async function legacySync(
  service: string,
  groupId: string,
  options: FetchMembersOptions,
  held: LeanTree | undefined,
  firstPage: { url: URL; page: Record<string, unknown> } | undefined,
): Promise<SyncedGroup> {
  const { members, root } = await readMembers(service, groupId, options, firstPage);
  const leaves = members.map(BigInt);
  let tree = held;
  const changes: LeafChange[] = [];
  if (tree && leaves.length >= tree.size) {
    for (let i = 0; i < tree.size; i++) {
      if (tree.leaf(i) === leaves[i]) continue;
      // Only removals (0) of leaves the agent holds: any other change is a rewritten history (checkHistory).
      if (leaves[i] !== 0n)
        throw new GroupProofError(
          "members",
          `the service rewrote the history of group ${groupId}: leaf ${i} was ${tree.leaf(i)} and is now ${leaves[i]}, yet leaves are only ever added or removed (set to 0): refused`,
        );
      changes.push({ index: i, value: 0n });
    }
    for (let i = tree.size; i < leaves.length; i++) changes.push({ index: i, value: leaves[i]! });
    tree.apply(changes);
  } else tree = await firstTree(leaves.map((value, index) => ({ index, value })));
  if (root !== undefined && tree.root.toString() !== root) {
    throw new GroupProofError(
      "root_mismatch",
      `the ${tree.size} leaves served for group ${groupId} give the root ${tree.root}, not the root ${root} the service names: refused`,
    );
  }
  return { tree, version: null, received: members.length, fromCache: held !== undefined, verified: root !== undefined };
}
