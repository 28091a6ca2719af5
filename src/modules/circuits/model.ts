// What GET /v1/circuits and its artifacts answer, as TypeBox schemas: the
// OpenAPI document names them (src/http/openapi.ts COMPONENT_SCHEMAS) and
// every HTTP test's answer is held to them (test/support/contract.ts).
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { CIRCUIT_NAME } from "../../circuits/shipped";
import { SHIPPED_CIRCUIT_ID } from "../../circuits/version";

const hex64 = (description: string) => t.String({ pattern: "^[0-9a-f]{64}$", description });
const hex128 = (description: string) => t.String({ pattern: "^[0-9a-f]{128}$", description });

/** A circuit version's id: the circuit's name and the first 16 hex digits of its vk hash (src/circuits/version.ts). */
export const circuitId = (description: string) =>
  t.String({ pattern: `^(${CIRCUIT_NAME}|budget_spend|semaphore_v4_d([1-9]|[12][0-9]|3[0-2]))-[0-9a-f]{16}$`, description, examples: [SHIPPED_CIRCUIT_ID] });

export const ceremonySummary = t.Object(
  {
    contributions: t.Array(
      t.Object(
        {
          name: t.String(),
          hash: hex128("BLAKE2b-512 contribution hash, hex (what the contributor published)"),
        },
        { additionalProperties: false },
      ),
    ),
    beacon: t.Union([
      t.Object(
        {
          value: t.String({ description: "The public beacon value, hex" }),
          // Type.Integer: Elysia's t.Integer also admits numeric strings (for query strings).
          iterations_exp: Type.Integer({ minimum: 0, description: "2^n hash rounds" }),
          name: t.String(),
          hash: hex128("BLAKE2b-512 hash of the beacon's contribution, hex"),
        },
        { additionalProperties: false },
      ),
      t.Null(),
    ]),
    ptau: t.Object(
      {
        name: t.String(),
        blake2b512: t.String({ description: "The phase-1 file the ceremony started from, as its transcript names it" }),
      },
      { additionalProperties: false },
    ),
  },
  {
    additionalProperties: false,
    description: "The phase-2 contributions and beacon the circuit's transcript lists (checked against the zkey when it was added)",
  },
);

export const circuitView = t.Object(
  {
    id: circuitId("The circuit version: its name and the first 16 hex digits of its vk hash"),
    state: t.Union([t.Literal("active"), t.Literal("accepted"), t.Literal("retired")], {
      description: "active: new challenges use it; accepted: verifies the challenges that name it; retired: verifies nothing",
    }),
    setup: t.Union([t.Literal("development"), t.Literal("operator"), t.Literal("semaphore")], {
      description:
        "development: the shipped circuit, whose phase 2 the zkagent project made; operator: added from a verified ceremony; semaphore: a Semaphore v4 circuit from its public ceremony, for group challenges (docs/trust.md)",
    }),
    vk_hash: t.String({
      pattern: "^sha256:[0-9a-f]{64}$",
      description: '"sha256:<hex>" of the RFC 8785 canonical verification key: what receipts name',
    }),
    zkey_sha256: hex64("SHA-256 of GET …/zkey"),
    wasm_sha256: hex64("SHA-256 of GET …/wasm"),
    transcript_sha256: hex64("SHA-256 of GET …/transcript"),
    created_at: t.String({ format: "date-time" }),
    activated_at: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "When it was last made active; null if never" }),
    retired_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    ceremony: ceremonySummary,
    artifacts_package: t.Optional(
      t.String({
        description:
          "Semaphore circuits only: the npm package (name@version) that publishes their zkey and wasm. A service installed without it (the compiled binary) verifies with the vk but answers 404 for …/zkey and …/wasm; check the files against zkey_sha256 and wasm_sha256.",
        examples: ["@zk-kit/semaphore-artifacts@4.13.0"],
      }),
    ),
  },
  { additionalProperties: false },
);

export const circuitList = t.Object(
  {
    active: circuitId("The circuit new challenges are issued with"),
    circuits: t.Array(circuitView, { description: "Every circuit version, oldest first" }),
  },
  { additionalProperties: false },
);

/** A base-10 coordinate of a BN254 point. */
const coordinate = t.String({ pattern: "^[0-9]+$" });
const g1 = t.Array(coordinate, { minItems: 3, maxItems: 3, description: "A G1 point, projective: x, y, z" });
const g2 = t.Array(t.Array(coordinate, { minItems: 2, maxItems: 2 }), { minItems: 3, maxItems: 3, description: "A G2 point, projective over Fp2" });

/** GET /v1/circuits/{id}/vk: the Groth16 verification key as snarkjs exports it (`zkey export verificationkey`). */
export const verificationKey = t.Object(
  {
    protocol: t.Literal("groth16"),
    curve: t.Literal("bn128"),
    nPublic: Type.Integer({ minimum: 0, description: "Public signals; IC has nPublic + 1 points" }),
    vk_alpha_1: g1,
    vk_beta_2: g2,
    vk_gamma_2: g2,
    vk_delta_2: g2,
    vk_alphabeta_12: t.Array(t.Array(t.Array(coordinate, { minItems: 2, maxItems: 2 }), { minItems: 3, maxItems: 3 }), {
      minItems: 2,
      maxItems: 2,
      description: "e(alpha, beta), an element of Fp12",
    }),
    IC: t.Array(g1, { minItems: 1 }),
  },
  {
    additionalProperties: false,
    description: "The circuit's Groth16 verification key, as snarkjs exports it; its RFC 8785 canonical form hashes to the circuit's vk_hash",
  },
);

/** GET /v1/circuits/{id}/transcript: the ceremony's transcript.json (src/ceremony/ceremony.ts Transcript), as the operator added it. */
export const ceremonyTranscript = t.Object(
  {
    format: t.Literal("zkagent-ceremony/1"),
    circuit: t.String({ examples: [CIRCUIT_NAME] }),
    r1cs_sha256: hex64("SHA-256 of the circuit's r1cs: the one the service ships"),
    wasm_sha256: hex64("SHA-256 of the witness generator: GET …/wasm"),
    ptau: t.Object(
      {
        name: t.String(),
        blake2b512: hex128("BLAKE2b-512 of the phase-1 file"),
        source: t.String(),
      },
      { additionalProperties: false },
    ),
    steps: t.Array(
      t.Object(
        {
          step: t.Union([t.Literal("init"), t.Literal("contribution"), t.Literal("beacon")]),
          at: t.String({ format: "date-time", description: "When the step was made, by the participant's clock (ISO 8601, UTC)" }),
          name: t.Optional(t.String({ description: "The contributor's name as stored in the zkey (contribution and beacon)" })),
          hash: t.Optional(hex128("BLAKE2b-512 contribution hash (contribution and beacon)")),
          beacon: t.Optional(t.String({ description: "The beacon value, hex (beacon only)" })),
          iterations_exp: t.Optional(Type.Integer({ minimum: 0, description: "2^n hash rounds (beacon only)" })),
          zkey_sha256: hex64("SHA-256 of the zkey this step wrote; the last one's is the circuit's zkey_sha256"),
        },
        { additionalProperties: false },
      ),
      { minItems: 1 },
    ),
  },
  {
    description:
      "The phase-2 ceremony's transcript (docs/trust.md): every step and the zkey it wrote, as rebuilt from what `circuits add` verified (its known fields only); hashes to transcript_sha256. `zkagent ceremony verify` checks it against the zkey.",
    additionalProperties: false,
  },
);

/** The zkey and wasm downloads: bytes, hashed by zkey_sha256 and wasm_sha256. */
export const binaryArtifact = (description: string, mediaType: string) => Type.String({ contentMediaType: mediaType, description });

export type CircuitView = typeof circuitView.static;
export type CeremonySummary = typeof ceremonySummary.static;
