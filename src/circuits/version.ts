// A circuit version's identity: the same ceremony output has the same id on
// every node and every agent, because the id is derived from its key.
import { vkHash } from "../receipts/circuit";
import { verificationKey } from "../verifier/circuit-key";
import { CIRCUIT_NAME } from "./shipped";

/** A circuit's id: the circuit's name and the first 16 hex digits of its vk hash, the same for the same key everywhere. */
export const circuitIdOf = (hash: string): string => `${CIRCUIT_NAME}-${hash.replace(/^sha256:/, "").slice(0, 16)}`;

/** The circuit this build ships (circuits/artifacts/): its vk hash and id. */
export const SHIPPED_VK_HASH = vkHash(verificationKey);
export const SHIPPED_CIRCUIT_ID = circuitIdOf(SHIPPED_VK_HASH);
