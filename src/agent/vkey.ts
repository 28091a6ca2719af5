// The verification key of circuits/agent_identity.circom, produced by
// circuits/build.sh together with the zkey the prover uses.
import verificationKeyJson from "../../circuits/artifacts/verification_key.json";
import type { SnarkjsVerificationKey } from "../verifier/types";

export const verificationKey = verificationKeyJson as unknown as SnarkjsVerificationKey;
