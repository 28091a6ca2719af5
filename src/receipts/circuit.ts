// Which verification key a receipt attests: "sha256:<hex>" of the RFC 8785
// canonical JSON of the snarkjs verification key. The service verifier loads
// the same key (src/verifier/service.ts imports it from src/verifier/circuit-key.ts), so
// a merchant can compare the hash with circuits/artifacts/verification_key.json.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { verificationKey } from "../verifier/circuit-key";

export const vkHash = (key: unknown): string =>
  `sha256:${createHash("sha256")
    .update(canonicalize(key) as string)
    .digest("hex")}`;

/** The hash of the key the service verifies proofs with. */
export const SERVICE_VK_HASH = vkHash(verificationKey);
