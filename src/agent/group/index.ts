// Private verification, the agent's side (issue 24): a Semaphore v4 identity
// and a proof that it is one of a group's members, without saying which.
// Split as Semaphore splits it: identity.ts (the member's keys), challenge.ts
// (what a challenge asks and what the agent checks of it), sync.ts and
// cache.ts (the group's tree as the service serves it, kept between
// processes), tree.ts (the tree's first build on threads), artifacts.ts (the
// pinned circuits), proof.ts (the proof).
export { loadSemaphoreArtifacts, defaultSemaphoreCacheDir, SemaphoreArtifactError, type SemaphoreArtifactSource, type SemaphoreArtifacts } from "./artifacts";
export { defaultTreeCacheDir } from "./cache";
export { checkGroupIntent, type GroupChallenge, type GroupIntent, parseGroupChallenge } from "./challenge";
export { GroupProofError, type GroupProofErrorCode } from "./error";
export { createSemaphoreIdentity, importSemaphoreIdentity, type SemaphoreIdentity, type SemaphoreIdentityKeys } from "./identity";
export {
  DEFAULT_MIN_ANONYMITY,
  type GroupChallengeRequest,
  type GroupProveOptions,
  type GroupProveRequest,
  type PackedGroth16Proof,
  proveGroupChallenge,
  proveGroupMembership,
  type SemaphoreProof,
} from "./proof";
export { type FetchMembersOptions, fetchGroupMembers, type SyncedGroup, type SyncOptions, syncGroupTree } from "./sync";
