// `zkagent verify --vk vk.json --proof proof.json --public public.json`
// Verifies one Groth16 proof like `snarkjs groth16 verify`, with the
// project's strict verifier. Exit codes: 0 valid (prints "OK!"), 1 invalid
// (prints the reason), 2 usage or file error.
//
// --proof accepts snarkjs proof JSON or a file holding the compact base64url form.

import { readFileSync } from "node:fs";
import { Groth16Verifier } from "../verifier/index.ts";
import { parse, printJson, requireString, say, shown } from "./args";

export const verifyHelp = `zkagent verify --vk <verification_key.json> --proof <proof.json|compact> --public <public.json> [--json]
  Verifies one Groth16 BN254 proof for any snarkjs verification key, like
  \`snarkjs groth16 verify\` but strict (canonical coordinates, G2 subgroup,
  no points at infinity). --proof: a snarkjs proof JSON file, or a file with
  the compact base64url form. Exit 0 valid ("OK!"), 1 invalid (the reason),
  2 usage or file error.
  --json: one JSON object on stdout instead: {"valid": true},
  {"valid": false, "reason": "..."}, or {"error": "..."} (exit 2).`;

type Outcome = { valid: true } | { valid: false; reason: string } | { error: string };

export async function verifyCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, { vk: { type: "string" }, proof: { type: "string" }, public: { type: "string" }, json: { type: "boolean" } });
  if (values.help) return (say(verifyHelp), 0);
  const args = { vk: requireString(values, "vk"), proof: requireString(values, "proof"), pub: requireString(values, "public") };
  const outcome = await verifyFiles(args);
  if (values.json) await printJson(outcome);
  else if ("error" in outcome) console.error(outcome.error);
  else if (outcome.valid) console.log("OK!");
  else console.error(outcome.reason.startsWith("invalid_public_input") ? outcome.reason : `Invalid proof: ${outcome.reason}`);
  return "error" in outcome ? 2 : outcome.valid ? 0 : 1;
}

async function verifyFiles(args: { vk: string; proof: string; pub: string }): Promise<Outcome> {
  let vkText: string, proofText: string, publicJson: unknown;
  try {
    vkText = readFileSync(args.vk, "utf8");
    proofText = readFileSync(args.proof, "utf8").trim();
    publicJson = JSON.parse(readFileSync(args.pub, "utf8"));
  } catch (e) {
    return { error: `cannot read input: ${shown((e as Error).message)}` };
  }
  let verifier: Groth16Verifier;
  try {
    verifier = await Groth16Verifier.fromVerificationKey(vkText);
  } catch (e) {
    return { error: shown((e as Error).message) };
  }
  if (!Array.isArray(publicJson)) return { valid: false, reason: "invalid_public_input: public signals must be a JSON array" };
  const result = verifier.verify(proofText, publicJson as string[]);
  return result.ok ? { valid: true } : { valid: false, reason: result.reason };
}
