// `zkagent verify --vk vk.json --proof proof.json --public public.json`
// Verifies one Groth16 proof like `snarkjs groth16 verify`, with the
// project's strict verifier. Exit codes: 0 valid (prints "OK!"), 1 invalid
// (prints the reason), 2 usage or file error.
//
// --proof accepts snarkjs proof JSON or a file holding the compact base64url form.

import { readFileSync } from "node:fs";
import { Groth16Verifier } from "../verifier/index.ts";
import { parse, requireString, say, shown } from "./args";

export const verifyHelp = `zkagent verify --vk <verification_key.json> --proof <proof.json|compact> --public <public.json>
  Verifies one Groth16 BN254 proof for any snarkjs verification key, like
  \`snarkjs groth16 verify\` but strict (canonical coordinates, G2 subgroup,
  no points at infinity). --proof: a snarkjs proof JSON file, or a file with
  the compact base64url form. Exit 0 valid ("OK!"), 1 invalid (the reason),
  2 usage or file error.`;

export async function verifyCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, { vk: { type: "string" }, proof: { type: "string" }, public: { type: "string" } });
  if (values.help) return (say(verifyHelp), 0);
  const args = { vk: requireString(values, "vk"), proof: requireString(values, "proof"), pub: requireString(values, "public") };
  let vkText: string, proofText: string, publicJson: unknown;
  try {
    vkText = readFileSync(args.vk, "utf8");
    proofText = readFileSync(args.proof, "utf8").trim();
    publicJson = JSON.parse(readFileSync(args.pub, "utf8"));
  } catch (e) {
    console.error(`cannot read input: ${shown((e as Error).message)}`);
    return 2;
  }
  let verifier: Groth16Verifier;
  try {
    verifier = await Groth16Verifier.fromVerificationKey(vkText);
  } catch (e) {
    console.error(shown((e as Error).message));
    return 2;
  }
  if (!Array.isArray(publicJson)) {
    console.error("invalid_public_input: public signals must be a JSON array");
    return 1;
  }
  const result = verifier.verify(proofText, publicJson as string[]);
  if (result.ok) {
    console.log("OK!");
    return 0;
  }
  console.error(`Invalid proof: ${result.reason}`);
  return 1;
}
