// Enrolling a member of a budgeted group (docs/protocol.md, "Terms and the
// leaf"): the terms come from a verified AP2 mandate or the owner's mandate
// JSON, the service computes the leaf itself, and two claims stop budget
// multiplication: a mandate once service-wide, an identity once per group.
import type { JWK } from "jose";
import { importOpenPaymentMandate } from "../../budgets/ap2";
import { termsFromMandate } from "../../budgets/terms-json";
import { type BudgetTerms, budgetLeaf, packTerms, randomSalt } from "../../budgets/terms";
import type { Clock } from "../../clock";
import { SETTINGS } from "../../config";
import type { TreeCache } from "../../groups/cache";
import { ApiError, invalidField, missingFields } from "../../errors";
import type { BudgetsStore } from "../../store/budgets/records";
import { MAX_NOTES_PAGE, type NotesPage } from "./model";
import type { GroupsStore } from "../../store/groups/records";
import type { ApiKeyRecord } from "../../store/keys/records";
import { changed, matchesEtag } from "../groups/service";
import type { EnrolmentRequest } from "./model";

export interface EnrolmentDeps {
  store: GroupsStore & BudgetsStore;
  clock: Clock;
  groups: TreeCache;
  limits?: { groupMaxMembers?: number };
}

/** The terms the request states, verified; otherwise the 400 naming why. */
async function termsOf(input: EnrolmentRequest, groupId: string, identityCommitment: bigint, now: number): Promise<BudgetTerms> {
  const given = [input.ap2_mandate, input.mandate].filter((x) => x !== undefined).length;
  if (given === 0) throw missingFields(["ap2_mandate"]);
  if (given > 1) throw invalidField("mandate", "give exactly one of ap2_mandate and mandate");
  if (input.ap2_mandate !== undefined) {
    if (input.principal_keys === undefined) throw missingFields(["principal_keys"]);
    const imported = await importOpenPaymentMandate(input.ap2_mandate, {
      principalKeys: input.principal_keys as JWK[],
      groupId,
      identityCommitment,
      now,
    });
    if (!imported.ok) throw invalidField("ap2_mandate", imported.error);
    return imported.value.terms;
  }
  if (input.principal_keys !== undefined) throw invalidField("principal_keys", "only with ap2_mandate");
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex");
  const terms = termsFromMandate(input.mandate, { now, nonce });
  if (!terms.ok) throw invalidField("mandate", terms.error);
  return terms.value;
}

export async function enrolMember(deps: EnrolmentDeps, key: ApiKeyRecord, groupId: string | null, input: EnrolmentRequest, requestId: string | null) {
  if (groupId === null) throw new ApiError("group_not_found");
  // Checked before the mandate is read: a key learns nothing of another's group, and a plain group is told so before any cryptography.
  const group = await deps.store.getGroup(groupId);
  if (!group) throw new ApiError("group_not_found");
  if (group.keyId !== key.id) throw new ApiError("group_forbidden");
  if (!group.budget) throw new ApiError("group_not_budgeted");

  const now = deps.clock.now();
  const idc = BigInt(input.identity_commitment);
  const terms = await termsOf(input, groupId, idc, now);
  const packed = packTerms(terms);
  const salt = randomSalt();
  const leaf = budgetLeaf(idc, packed.hash, salt).toString();
  const mandate = terms.mandate.toString();

  const claim = await deps.store.claimEnrolment({ mandate, groupId, identityCommitment: input.identity_commitment, leaf, enrolledAt: now });
  if (claim === "mandate") throw new ApiError("mandate_enrolled");
  if (claim === "identity") throw new ApiError("identity_enrolled");
  // The claim comes first so that two enrolments of one mandate never both append; a leaf refused releases it.
  // A crash between the two leaves the mandate claimed without a leaf: spent, never doubled.
  let result: Awaited<ReturnType<GroupsStore["changeGroup"]>>;
  try {
    result = await deps.store.changeGroup(
      groupId,
      key.id,
      { kind: "add", commitments: [leaf], enrolment: true, maxSize: deps.limits?.groupMaxMembers ?? SETTINGS.groupMaxMembers.default, at: now, requestId },
      deps.groups,
    );
  } catch (error) {
    await deps.store.releaseEnrolment(mandate).catch(() => {});
    throw error;
  }
  if (result.outcome !== "changed") {
    await deps.store.releaseEnrolment(mandate);
    changed(result);
    throw new Error("unreachable: a refused change throws");
  }
  return {
    group_id: groupId,
    identity_commitment: input.identity_commitment,
    leaf,
    leaf_index: result.group.size - 1,
    salt: salt.toString(),
    terms: {
      currency: terms.currency,
      min_amount: terms.min.toString(),
      max_amount: terms.max.toString(),
      budget: terms.budget.toString(),
      period: terms.kind === "lifetime" ? null : terms.kind,
      one_time: terms.once,
      payees: terms.payees === null ? null : [...terms.payees],
      expires_at: new Date(terms.expiresAt * 1000).toISOString(),
    },
    statement: { ta: packed.TA.toString(), tm: packed.TM.toString(), payees: packed.payees.map(String), mandate },
    merkle_tree_root: result.group.root,
    size: result.group.size,
  };
}

/**
 * The keyless notes feed of a budgeted group (docs/api.md, "Budget spends"):
 * its note commitments from `offset` (leaf 0, the genesis leaf, is never
 * listed), read up to the size read first, and the newest checkpoints. A
 * member downloads the whole feed, so it never says which note is its own.
 */
export async function readNotes(
  deps: { store: GroupsStore & BudgetsStore; limits?: { budgetCheckpointWindow?: number } },
  groupId: string | null,
  offsetText: string | undefined,
  ifNoneMatch: string | null = null,
): Promise<{ etag: string; page: NotesPage | null }> {
  const group = groupId === null ? null : await deps.store.getGroup(groupId);
  if (!group) throw new ApiError("group_not_found");
  if (!group.budget) throw new ApiError("group_not_budgeted", { message: "Only a group created with budget: true has notes." });
  let offset = 1;
  if (offsetText !== undefined) {
    if (!/^[1-9][0-9]{0,15}$/.test(offsetText) || !Number.isSafeInteger(Number(offsetText)))
      throw invalidField("offset", "must be a whole number from 1 (leaf 0 is the genesis leaf, never listed)");
    offset = Number(offsetText);
  }
  const window = deps.limits?.budgetCheckpointWindow ?? SETTINGS.budgetCheckpointWindow.default;
  // The size first: notes past it may be committing now, and are left to the next read.
  const [size, checkpoints] = await Promise.all([deps.store.notesSize(groupId!), deps.store.checkpoints(groupId!, window)]);
  // One validator per (size, newest checkpoint), the same for every page of that state: a member polling an unchanged feed gets 304.
  const etag = `"${size}-${checkpoints.at(-1)?.sequence ?? -1}"`;
  if (matchesEtag(ifNoneMatch, etag)) return { etag, page: null };
  const wanted = Math.max(0, Math.min(MAX_NOTES_PAGE, size - offset));
  const notes = wanted === 0 ? [] : await deps.store.budgetNotes(groupId!, offset, wanted);
  const end = offset + notes.length;
  return {
    etag,
    page: {
      group_id: groupId!,
      size,
      offset,
      notes: notes.map((note) => note.commitment),
      next_offset: end < size ? end : null,
      checkpoints: checkpoints.map((c) => ({ sequence: c.sequence, size: c.size, root: c.root, at: new Date(c.at).toISOString() })),
    },
  };
}
