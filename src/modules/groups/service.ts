// Groups (issue 24): create, change and read Semaphore v4 groups. The tree
// arithmetic is the domain's (src/groups/); the store applies each change in
// one transaction (GroupsStore.changeGroup) with this process's cached trees. The
// bounds of issue 32 (groups per key, leaves per group, additions in flight
// per key) and the owner's rules of issue 34 (no re-add, challengers) are
// decided here and in the store's transaction.
import type { Clock } from "../../clock";
import { ApiError, invalidField } from "../../errors";
import type { TreeCache } from "../../groups/cache";
import { Queues } from "../../groups/cache";
import { anonymityWarning } from "../../groups/roots";
import { storedMandate } from "../../mandates/enforce";
import { type Mandate, parseMandate } from "../../mandates/schema";
import { type ChangeGroupResult, type GroupRecord, type GroupsStore, newGroupRecord } from "../../store/groups/records";
import type { ApiKeyRecord } from "../../store/keys/records";
import type { BudgetsStore } from "../../store/budgets/records";
import { genesisCheckpoint } from "../../budgets/checkpoints";
import { SETTINGS } from "../../config";
import { SlidingWindows } from "../../sliding-window";
import { encodeChanges, MAX_CHANGES_PAGE, MAX_MEMBERS_PAGE, type GroupRequest } from "./model";

export interface GroupDeps {
  store: GroupsStore & Pick<BudgetsStore, "recordCheckpoint">;
  clock: Clock;
  groups: TreeCache;
  limits?: { groupMaxPerKey?: number; groupMaxMembers?: number; groupAdditionsInFlight?: number; groupAdditionsInFlightTotal?: number };
}

export const treeView = (group: GroupRecord) => ({
  group_id: group.groupId,
  size: group.size,
  active_members: group.activeMembers,
  merkle_tree_root: group.root,
  merkle_tree_depth: group.depth,
  anonymity_warning: anonymityWarning(group.activeMembers),
});

/** The group as a key reads it: its challengers only to its owner (other tenants' key ids are theirs). */
export const groupView = (group: GroupRecord, viewer: string) => ({
  ...treeView(group),
  mandate: group.mandate === null ? null : (JSON.parse(group.mandate) as Mandate),
  ...(viewer === group.keyId ? { challengers: group.challengers } : {}),
  budget: group.budget,
  created_at: new Date(group.createdAt).toISOString(),
});

const limitOf = (deps: GroupDeps) => ({
  maxPerKey: deps.limits?.groupMaxPerKey ?? SETTINGS.groupMaxPerKey.default,
  maxMembers: deps.limits?.groupMaxMembers ?? SETTINGS.groupMaxMembers.default,
  inFlight: deps.limits?.groupAdditionsInFlight ?? SETTINGS.groupAdditionsInFlight.default,
  inFlightTotal: deps.limits?.groupAdditionsInFlightTotal ?? SETTINGS.groupAdditionsInFlightTotal.default,
});

/** Key ids, each once, in the order given: duplicates say nothing more. */
const distinct = (ids: string[]): string[] => [...new Set(ids)];

export async function createGroup(deps: GroupDeps, key: ApiKeyRecord, input: GroupRequest) {
  const { store, clock } = deps;
  const mandate = input.mandate ? storedMandate(input.mandate as Mandate).mandate : null;
  const group = newGroupRecord({
    groupId: input.group_id,
    keyId: key.id,
    createdAt: clock.now(),
    mandate,
    challengers: input.challengers ? distinct(input.challengers) : null,
    budget: input.budget === true,
  });
  const { maxPerKey } = limitOf(deps);
  const created = await store.createGroup(group, maxPerKey);
  if (created === "exists") throw new ApiError("group_exists");
  if (created === "too_many")
    throw new ApiError("too_many_groups", { message: `This key owns ${maxPerKey} groups, the most one key may own (GROUP_MAX_PER_KEY = ${maxPerKey}).` });
  // A budgeted group's notes have a checkpoint from the start (the genesis leaf's tree); a node's checkpointer writes it too if this write was lost.
  if (group.budget) await store.recordCheckpoint(group.groupId, genesisCheckpoint(group.createdAt));
  return groupView(group, key.id);
}

export async function readGroup({ store }: GroupDeps, key: ApiKeyRecord, groupId: string | null) {
  const group = groupId === null ? null : await store.getGroup(groupId);
  if (!group) throw new ApiError("group_not_found");
  return groupView(group, key.id);
}

export async function setChallengers({ store }: GroupDeps, key: ApiKeyRecord, groupId: string | null, challengers: string[] | null) {
  if (groupId === null) throw new ApiError("group_not_found");
  const result = await store.setGroupChallengers(groupId, key.id, challengers === null ? null : distinct(challengers));
  if (result.outcome === "set") return groupView(result.group, key.id);
  throw new ApiError(result.outcome === "forbidden" ? "group_forbidden" : "group_not_found");
}

export function changed(result: ChangeGroupResult) {
  switch (result.outcome) {
    case "changed":
      return treeView(result.group);
    case "not_found":
      throw new ApiError("group_not_found");
    case "forbidden":
      throw new ApiError("group_forbidden");
    case "not_member":
      throw new ApiError("member_not_found");
    case "invalid":
      throw invalidField("identity_commitments", `[${result.index}] ${result.problem}`);
    case "removed_before":
      throw new ApiError("member_removed_before", {
        message: `identity_commitments[${result.index}] was removed from this group and cannot be added back to it: enrol a new identity (a new commitment).`,
      });
    case "full":
      throw new ApiError("group_full", {
        message: `The group holds ${result.size} leaves; this batch would take it past GROUP_MAX_MEMBERS = ${result.maxSize}.`,
      });
    case "contended":
      throw new ApiError("group_contended", {}, { retryAfterSeconds: RETRY_AFTER_BUSY_SECONDS });
    case "budget_mismatch":
      throw new ApiError(result.budget ? "group_budgeted" : "group_not_budgeted");
  }
}

/**
 * Additions in this process: a key's run one at a time (its batches queue
 * behind each other, never in front of another key's); at most `perKey` of
 * one key and `total` of all keys together are read, wait or run (each holds
 * a body of up to 1 MiB and its tree work); past either the caller is told
 * to come back, before its body is read.
 */
export class AdditionQueues {
  private readonly queues = new Queues();
  private readonly counts = new Map<string, number>();
  private total = 0;

  async run<I, T>(keyId: string, bounds: { perKey: number; total: number }, read: () => Promise<I>, work: (input: I) => Promise<T>): Promise<T> {
    const count = this.counts.get(keyId) ?? 0;
    if (count >= bounds.perKey)
      throw busy(
        `This key has ${count} member additions running or queued, the most one key may have (GROUP_ADDITIONS_IN_FLIGHT = ${bounds.perKey}); retry after one finishes.`,
      );
    if (this.total >= bounds.total)
      throw busy(
        `This server has ${this.total} member additions running or queued, the most it takes at once (GROUP_ADDITIONS_IN_FLIGHT_TOTAL = ${bounds.total}); retry after one finishes.`,
      );
    this.counts.set(keyId, count + 1);
    this.total++;
    try {
      // Read (and checked) while earlier batches of the key run: only the change itself waits its turn.
      const input = await read();
      return await this.queues.run(keyId, () => work(input));
    } finally {
      this.total--;
      const left = (this.counts.get(keyId) ?? 1) - 1;
      if (left === 0) this.counts.delete(keyId);
      else this.counts.set(keyId, left);
    }
  }

  /** Additions read, waiting or running now (tests). */
  get inFlight(): number {
    return this.total;
  }
}

const busy = (message: string) => new ApiError("group_additions_busy", { message }, { retryAfterSeconds: RETRY_AFTER_BUSY_SECONDS });

/**
 * The client a read is counted against: an IPv4 address, or the /64 an IPv6
 * address is in (one host usually holds a whole /64, and picks any address
 * of it at will); an IPv4-mapped IPv6 address is its IPv4 address.
 */
export function readerOf(address: string): string {
  if (!address.includes(":")) return address;
  const mapped = /^(?:::|(?:0{1,4}:){5})ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  const [head = "", tail] = address.toLowerCase().split("%")[0]!.split("::") as [string, string | undefined];
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group || "0", 16).toString(16))
    .join(":")}::/64`;
}

/**
 * Reads of the keyless members route per client (readerOf: an IPv4 address
 * or an IPv6 /64) in this process, over a sliding minute
 * (src/sliding-window.ts): anonymous readers cannot keep the event loop from
 * other keys. Every request counts, before anything is read, 304s included.
 * Behind a proxy every client has the proxy's address: raise the limit or
 * rate-limit at the proxy (docs/operations.md).
 */
export class ReaderWindows {
  private readonly windows: SlidingWindows | null;

  constructor(
    private readonly perMinute: number = SETTINGS.membersReadsPerMinute.default,
    now: () => number = Date.now,
  ) {
    this.windows = perMinute > 0 ? new SlidingWindows(perMinute, now) : null;
  }

  admit(address: string): void {
    const wait = this.windows?.hit(readerOf(address)) ?? null;
    if (wait !== null)
      throw new ApiError(
        "members_rate_limited",
        {
          message: `This client (an IPv4 address, or an IPv6 /64) read group members more than ${this.perMinute} times in the last minute, the most allowed (GROUP_MEMBERS_READS_PER_MINUTE = ${this.perMinute}); every request counts, 304 answers too.`,
        },
        { retryAfterSeconds: wait },
      );
  }
}

/**
 * The members route's answers by (group, version, query), as sent (JSON
 * text), least recently used dropped first past `budgetBytes` (32 MiB: the
 * 20 pages of a 200,000-member group fit, so readers paging through it in
 * turn do not evict each other's next page): readers of one version of a
 * group read the same pages, and a page of 10,000 leaves
 * costs milliseconds of the event loop to read and encode. An entry is never
 * stale: its key holds the version, and the version is read first.
 */
export class PageCache {
  private readonly pages = new Map<string, string>();
  private bytes = 0;

  constructor(private readonly budgetBytes = 32 * 2 ** 20) {}

  static key(group: GroupRecord, request: ReturnType<typeof membersRequestOf>): string {
    return `${group.groupId}\u0000${group.version}\u0000${request.since ?? "-"}\u0000${request.offset}\u0000${request.limit}`;
  }

  get(key: string): string | undefined {
    const text = this.pages.get(key);
    if (text !== undefined) {
      this.pages.delete(key);
      this.pages.set(key, text);
    }
    return text;
  }

  set(key: string, text: string): void {
    // The pages are ASCII JSON, which the engine holds at one byte a character.
    const size = text.length;
    if (size > this.budgetBytes || this.pages.has(key)) return;
    this.pages.set(key, text);
    this.bytes += size;
    for (const [old, value] of this.pages) {
      if (this.bytes <= this.budgetBytes) break;
      this.pages.delete(old);
      this.bytes -= value.length;
    }
  }
}

/** A batch of 10,000 is hashed in about 1.3 s here (docs/performance.md): a retry in 2 s finds the queue moved. */
const RETRY_AFTER_BUSY_SECONDS = 2;

/** `read`: the batch's commitments, checked (the route reads the body off the event loop, within the bounds of `queues`). */
export async function addMembers(
  deps: GroupDeps,
  queues: AdditionQueues,
  key: ApiKeyRecord,
  groupId: string | null,
  read: () => Promise<string[]>,
  requestId: string | null = null,
) {
  const { maxMembers, inFlight, inFlightTotal } = limitOf(deps);
  return queues.run(key.id, { perKey: inFlight, total: inFlightTotal }, read, async (commitments) => {
    if (groupId === null) throw new ApiError("group_not_found");
    return changed(
      await deps.store.changeGroup(groupId, key.id, { kind: "add", commitments, maxSize: maxMembers, at: deps.clock.now(), requestId }, deps.groups),
    );
  });
}

export async function removeMember(deps: GroupDeps, key: ApiKeyRecord, groupId: string | null, commitment: string | null, requestId: string | null = null) {
  if (groupId === null) throw new ApiError("group_not_found");
  // A path segment that is no commitment names no member.
  if (commitment === null || !/^[1-9][0-9]{0,77}$/.test(commitment)) {
    const group = await deps.store.getGroup(groupId);
    if (!group) throw new ApiError("group_not_found");
    if (group.keyId !== key.id) throw new ApiError("group_forbidden");
    throw new ApiError("member_not_found");
  }
  return changed(await deps.store.changeGroup(groupId, key.id, { kind: "remove", commitment, at: deps.clock.now(), requestId }, deps.groups));
}

/** A query parameter as a whole number in [min, max], or the default when absent. */
function queryInt(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(value) || Number(value) < min || Number(value) > max)
    throw invalidField(name, `must be a whole number from ${min} to ${max}`);
  return Number(value);
}

/** The members route's strong validator: one per group version (and its root), the same for every page of that version. */
export const membersEtag = (group: GroupRecord): string => `"${group.version}-${group.root}"`;

/** Whether an If-None-Match header names `etag` (a list, or *). */
export function matchesEtag(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}

export type MembersQuery = { offset?: string; limit?: string; since?: string };

/** The page a members query asks for, checked: a leaves page, or the changes since a version. */
export function membersRequestOf(query: MembersQuery) {
  const since = query.since === undefined ? null : queryInt("since", query.since, 0, 0, Number.MAX_SAFE_INTEGER);
  const max = since === null ? MAX_MEMBERS_PAGE : MAX_CHANGES_PAGE;
  return { since, offset: queryInt("offset", query.offset, 0, 0, Number.MAX_SAFE_INTEGER), limit: queryInt("limit", query.limit, max, 1, max) };
}

/** The group, or 404: what the members route reads first (its version decides the ETag). */
export async function membersGroup({ store }: { store: GroupsStore }, groupId: string | null): Promise<GroupRecord> {
  const group = groupId === null ? null : await store.getGroup(groupId);
  if (!group) throw new ApiError("group_not_found");
  return group;
}

/** How many times a page is read again when the group changed while it was read. */
const PAGE_ATTEMPTS = 3;

/**
 * The members page (leaves) or the changes since a version, with the group
 * it belongs to: read between two reads of the group row that agree on its
 * version, so that the page is the group at `version` (its root and ETag)
 * and not a mix of two versions.
 */
export async function readMembersPage(deps: { store: GroupsStore }, first: GroupRecord, request: ReturnType<typeof membersRequestOf>) {
  let group = first;
  for (let attempt = 1; ; attempt++) {
    const page = await membersPage(deps, group, request);
    const after = await membersGroup(deps, group.groupId);
    // Still moving after the last attempt: the page is served as read (a reader's root check catches a mix) but marked, so no cache keeps it.
    if (after.version === group.version || attempt >= PAGE_ATTEMPTS) return { group, page, consistent: after.version === group.version };
    group = after;
  }
}

/** The members page (leaves) or the changes since a version, of `group` as read. */
async function membersPage({ store }: { store: GroupsStore }, group: GroupRecord, request: ReturnType<typeof membersRequestOf>) {
  const { since, offset, limit } = request;
  const head = { group_id: group.groupId, version: group.version, size: group.size, merkle_tree_root: group.root, merkle_tree_depth: group.depth };
  if (since === null) {
    const members = await store.groupMembers(group.groupId, offset, limit);
    const end = offset + members.length;
    return { ...head, offset, members, next_offset: members.length === limit && end < group.size ? end : null };
  }
  if (since > group.version) throw invalidField("since", `must not be above the group's version ${group.version}`);
  // Paged by key: offset is the leaf index the page starts at, and the next page starts after this one's last leaf.
  const leaves = await store.groupChanges(group.groupId, since, offset, limit);
  const end = leaves.length === 0 ? offset : leaves[leaves.length - 1]!.index + 1;
  const more = leaves.length === limit && end < group.size;
  return { ...head, since, offset, count: leaves.length, changes: encodeChanges(leaves), next_offset: more ? end : null };
}

export async function putGroupMandate({ store }: GroupDeps, key: ApiKeyRecord, groupId: string | null, body: unknown) {
  if (groupId === null) throw new ApiError("group_not_found");
  const parsed = parseMandate(body);
  if (!parsed.ok) throw invalidField("mandate", parsed.error);
  return mandateResult(await store.setGroupMandate(groupId, key.id, storedMandate(body as Mandate).mandate), key);
}

export async function deleteGroupMandate({ store }: GroupDeps, key: ApiKeyRecord, groupId: string | null) {
  if (groupId === null) throw new ApiError("group_not_found");
  return mandateResult(await store.setGroupMandate(groupId, key.id, null), key);
}

function mandateResult(result: Awaited<ReturnType<GroupsStore["setGroupMandate"]>>, key: ApiKeyRecord) {
  if (result.outcome === "set") return groupView(result.group, key.id);
  throw new ApiError(result.outcome === "forbidden" ? "group_forbidden" : "group_not_found");
}
