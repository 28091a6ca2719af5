import { t } from "elysia";

const hex64 = (description: string) => t.String({ pattern: "^[0-9a-f]{64}$", description });

export const ceremonySummary = t.Object({
  contributions: t.Array(
    t.Object({ name: t.String(), hash: t.String({ description: "BLAKE2b-512 contribution hash, hex (what the contributor published)" }) }),
  ),
  beacon: t.Union([
    t.Object({
      value: t.String({ description: "The public beacon value, hex" }),
      iterations_exp: t.Number({ description: "2^n hash rounds" }),
      name: t.String(),
      hash: t.String(),
    }),
    t.Null(),
  ]),
  ptau: t.Object({ name: t.String(), blake2b512: t.String({ description: "The phase-1 file the ceremony started from" }) }),
});

export const circuitView = t.Object({
  id: t.String({ examples: ["agent_identity-b3acd33b3b99ce90"] }),
  state: t.Union([t.Literal("active"), t.Literal("accepted"), t.Literal("retired")], {
    description: "active: new challenges use it; accepted: verifies the challenges that name it; retired: verifies nothing",
  }),
  setup: t.Union([t.Literal("development"), t.Literal("operator")], {
    description: "development: the shipped circuit, whose phase 2 the zkagent project made; operator: added from a verified ceremony (docs/trust.md)",
  }),
  vk_hash: t.String({ description: '"sha256:<hex>" of the RFC 8785 canonical verification key: what receipts name' }),
  zkey_sha256: hex64("SHA-256 of GET …/zkey"),
  wasm_sha256: hex64("SHA-256 of GET …/wasm"),
  transcript_sha256: hex64("SHA-256 of GET …/transcript"),
  created_at: t.String(),
  activated_at: t.Union([t.String(), t.Null()]),
  retired_at: t.Union([t.String(), t.Null()]),
  ceremony: ceremonySummary,
});

export const circuitList = t.Object({
  active: t.String({ description: "The circuit new challenges are issued with" }),
  circuits: t.Array(circuitView),
});

export type CircuitView = typeof circuitView.static;
export type CeremonySummary = typeof ceremonySummary.static;
