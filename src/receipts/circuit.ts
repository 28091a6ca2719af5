// Which verification key a receipt attests: "sha256:<hex>" of the RFC 8785
// canonical JSON of the snarkjs verification key. Each circuit version's key
// has one (src/circuits/registry.ts); a merchant compares it with the
// `vk_hash` GET /v1/circuits lists, or with the hash of a ceremony's
// verification_key.json (zkagent ceremony verify prints it).
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

export const vkHash = (key: unknown): string =>
  `sha256:${createHash("sha256")
    .update(canonicalize(key) as string)
    .digest("hex")}`;
