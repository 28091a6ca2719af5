// Groups (issue 24): create, change and read Semaphore v4 groups. The tree
// arithmetic is the domain's (src/groups/); the store applies each change in
// one transaction (Store.changeGroup) with this process's cached trees.
import type { Clock } from "../../clock";
import { ApiError, invalidField } from "../../errors";
import { anonymityWarning } from "../../groups/roots";
import type { GroupTrees } from "../../groups/tree";
import { storedMandate } from "../../mandates/enforce";
import { type Mandate, parseMandate } from "../../mandates/schema";
import type { ApiKeyRecord, ChangeGroupResult, GroupRecord, Store } from "../../store/interface";
import { MAX_MEMBERS_PAGE, type GroupRequest } from "./model";

export interface GroupDeps {
  store: Store;
  clock: Clock;
  groups: GroupTrees;
}

export const treeView = (group: GroupRecord) => ({
  group_id: group.groupId,
  size: group.size,
  active_members: group.activeMembers,
  merkle_tree_root: group.root,
  merkle_tree_depth: group.depth,
  anonymity_warning: anonymityWarning(group.activeMembers),
});

export const groupView = (group: GroupRecord) => ({
  ...treeView(group),
  mandate: group.mandate === null ? null : (JSON.parse(group.mandate) as Mandate),
  created_at: new Date(group.createdAt).toISOString(),
});

export async function createGroup({ store, clock }: GroupDeps, key: ApiKeyRecord, input: GroupRequest) {
  const mandate = input.mandate ? storedMandate(input.mandate as Mandate).mandate : null;
  const group: GroupRecord = {
    groupId: input.group_id,
    keyId: key.id,
    createdAt: clock.now(),
    version: 0,
    size: 0,
    activeMembers: 0,
    depth: 0,
    root: "0",
    removedVersion: 0,
    mandate,
  };
  if (!(await store.createGroup(group))) throw new ApiError("group_exists");
  return groupView(group);
}

export async function readGroup({ store }: GroupDeps, groupId: string | null) {
  const group = groupId === null ? null : await store.getGroup(groupId);
  if (!group) throw new ApiError("group_not_found");
  return groupView(group);
}

function changed(result: ChangeGroupResult) {
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
  }
}

export async function addMembers(deps: GroupDeps, key: ApiKeyRecord, groupId: string | null, commitments: string[]) {
  if (groupId === null) throw new ApiError("group_not_found");
  return changed(await deps.store.changeGroup(groupId, key.id, { kind: "add", commitments }, deps.groups));
}

export async function removeMember(deps: GroupDeps, key: ApiKeyRecord, groupId: string | null, commitment: string | null) {
  if (groupId === null) throw new ApiError("group_not_found");
  // A path segment that is no commitment names no member.
  if (commitment === null || !/^[1-9][0-9]{0,77}$/.test(commitment)) {
    const group = await deps.store.getGroup(groupId);
    if (!group) throw new ApiError("group_not_found");
    if (group.keyId !== key.id) throw new ApiError("group_forbidden");
    throw new ApiError("member_not_found");
  }
  return changed(await deps.store.changeGroup(groupId, key.id, { kind: "remove", commitment }, deps.groups));
}

/** A query parameter as a whole number in [min, max], or the default when absent. */
function queryInt(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^(0|[1-9][0-9]{0,15})$/.test(value) || Number(value) < min || Number(value) > max)
    throw invalidField(name, `must be a whole number from ${min} to ${max}`);
  return Number(value);
}

export async function listMembers({ store }: GroupDeps, groupId: string | null, query: { offset?: string; limit?: string }) {
  const offset = queryInt("offset", query.offset, 0, 0, Number.MAX_SAFE_INTEGER);
  const limit = queryInt("limit", query.limit, MAX_MEMBERS_PAGE, 1, MAX_MEMBERS_PAGE);
  const group = groupId === null ? null : await store.getGroup(groupId);
  if (!group) throw new ApiError("group_not_found");
  const members = await store.groupMembers(group.groupId, offset, limit);
  const end = offset + members.length;
  return {
    group_id: group.groupId,
    size: group.size,
    merkle_tree_root: group.root,
    merkle_tree_depth: group.depth,
    offset,
    members,
    next_offset: members.length === limit && end < group.size ? end : null,
  };
}

export async function putGroupMandate({ store }: GroupDeps, key: ApiKeyRecord, groupId: string | null, body: unknown) {
  if (groupId === null) throw new ApiError("group_not_found");
  const parsed = parseMandate(body);
  if (!parsed.ok) throw invalidField("mandate", parsed.error);
  return mandateResult(await store.setGroupMandate(groupId, key.id, storedMandate(body as Mandate).mandate));
}

export async function deleteGroupMandate({ store }: GroupDeps, key: ApiKeyRecord, groupId: string | null) {
  if (groupId === null) throw new ApiError("group_not_found");
  return mandateResult(await store.setGroupMandate(groupId, key.id, null));
}

function mandateResult(result: Awaited<ReturnType<Store["setGroupMandate"]>>) {
  if (result.outcome === "set") return groupView(result.group);
  throw new ApiError(result.outcome === "forbidden" ? "group_forbidden" : "group_not_found");
}
