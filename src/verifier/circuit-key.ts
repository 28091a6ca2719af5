// The verification key of circuits/agent_identity.circom, produced by
// circuits/build.sh together with the zkey the prover uses. One module for
// both sides: main.ts builds the service's verifier from it, and the agent
// SDK re-exports it for agents that check their own proofs.
import verificationKeyJson from "../../circuits/artifacts/verification_key.json";
import type { SnarkjsVerificationKey } from "./types";

export const verificationKey = verificationKeyJson as unknown as SnarkjsVerificationKey;
