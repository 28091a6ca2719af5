// Which verification key a receipt attests: "sha256:<hex>" of the RFC 8785
// canonical JSON of the snarkjs verification key. Each circuit version's key
// has one (src/circuits/registry.ts); a merchant compares it with the
// `vk_hash` GET /v1/circuits lists, or with the hash of a ceremony's
// verification_key.json (zkagent ceremony verify prints it).
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

/** SHA-256, hex: what every circuit artifact hash (zkey_sha256, wasm_sha256, transcript_sha256, the ceremony's) is. */
export const sha256Hex = (bytes: Uint8Array | string): string => createHash("sha256").update(bytes).digest("hex");

export const vkHash = (key: unknown): string => `sha256:${sha256Hex(canonicalize(key) as string)}`;
