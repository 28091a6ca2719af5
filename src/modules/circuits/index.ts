// GET /v1/circuits, /v1/circuits/{id} and /v1/circuits/{id}/{vk,zkey,wasm,transcript}.
// Public (no API key): agents fetch what they prove with, anyone audits the
// setup. The list is cached for as long as a node caches the circuits
// (CIRCUIT_REFRESH_MS); artifacts are immutable: ETag = their hash,
// If-None-Match → 304, Cache-Control immutable.
import type { TSchema } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { CIRCUIT_REFRESH_MS } from "../../circuits/registry";
import type { ModuleDeps } from "../../deps";
import { describe } from "../../http/docs";
import { pathParam } from "../../http/params";
import { binaryArtifact, ceremonyTranscript, circuitList, circuitView, verificationKey } from "./model";
import { ARTIFACT_MEDIA_TYPES, type ArtifactKind, listCircuits, readArtifact, readCircuit } from "./service";

const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * Whether an If-None-Match header names this ETag (weak comparison) or is
 * exactly "*" (RFC 9110 §13.1.2: "*" is the whole field or nothing; "W/*"
 * and a "*" inside a list are not entity tags and match nothing).
 */
function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === "*") return true;
  return ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
}

/** Each artifact route: its operation, what it is, and how it is described in the document. */
const ARTIFACTS: Record<ArtifactKind, { operationId: string; description: string; schema: TSchema }> = {
  vk: {
    operationId: "getCircuitVerificationKey",
    description: "The verification key (snarkjs JSON). Its RFC 8785 canonical form hashes to vk_hash.",
    schema: verificationKey,
  },
  zkey: {
    operationId: "getCircuitZkey",
    description: "The proving key (snarkjs zkey). Hashes to zkey_sha256.",
    schema: binaryArtifact("The zkey's bytes", ARTIFACT_MEDIA_TYPES.zkey),
  },
  wasm: {
    operationId: "getCircuitWasm",
    description: "The witness generator (circom wasm). Hashes to wasm_sha256.",
    schema: binaryArtifact("The WebAssembly module's bytes", ARTIFACT_MEDIA_TYPES.wasm),
  },
  transcript: {
    operationId: "getCircuitTranscript",
    description: "The ceremony's transcript.json: every step and its hash. Hashes to transcript_sha256.",
    schema: ceremonyTranscript,
  },
};

const ID = "The circuit version's id (GET /v1/circuits lists them; a challenge names its own in circuit_id)";

export const circuits = (deps: ModuleDeps) => {
  let app = new Elysia({ name: "circuits" })
    .get(
      "/v1/circuits",
      async ({ set }) => {
        const list = await listCircuits(deps.circuits);
        // Only the list is cacheable: an error (a lost database) must not be.
        set.headers["cache-control"] = `public, max-age=${CIRCUIT_REFRESH_MS / 1000}`;
        return list;
      },
      {
        detail: describe({
          operationId: "listCircuits",
          tag: "Circuits",
          summary: "Circuit versions",
          description:
            "Every circuit version: its state, the hashes of its artifacts and a summary of its phase-2 ceremony. No API key. Every node follows an activation or a retirement within 5 s. See docs/trust.md.",
          public: true,
          ok: { status: 200, schema: circuitList, description: "The circuits", headers: { "Cache-Control": true } },
          errors: [],
        }),
      },
    )
    .get("/v1/circuits/:id", ({ params }) => readCircuit(deps.circuits, pathParam(params.id)), {
      detail: describe({
        operationId: "getCircuit",
        tag: "Circuits",
        summary: "One circuit version",
        public: true,
        params: { id: ID },
        ok: { status: 200, schema: circuitView, description: "The circuit" },
        errors: ["circuit_not_found", "circuit_not_served"],
      }),
    });
  for (const [kind, doc] of Object.entries(ARTIFACTS) as [ArtifactKind, (typeof ARTIFACTS)[ArtifactKind]][]) {
    app = app.get(
      `/v1/circuits/:id/${kind}`,
      async ({ params, request }) => {
        const artifact = await readArtifact(deps.circuits, pathParam(params.id), kind);
        const etag = `"${artifact.hash}"`;
        const headers = { etag, "cache-control": IMMUTABLE };
        if (matches(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
        return new Response(artifact.body as BodyInit, { headers: { ...headers, "content-type": artifact.contentType } });
      },
      {
        detail: describe({
          operationId: doc.operationId,
          tag: "Circuits",
          summary: `A circuit's ${kind}`,
          description: `${doc.description} Immutable: ETag is the hash; If-None-Match answers 304.`,
          public: true,
          params: { id: ID },
          ok: {
            status: 200,
            schema: doc.schema,
            description: doc.description,
            mediaType: ARTIFACT_MEDIA_TYPES[kind],
            headers: { ETag: true, "Cache-Control": true },
          },
          errors:
            kind === "zkey" || kind === "wasm"
              ? ["circuit_not_found", "circuit_not_served", "artifact_not_served"]
              : ["circuit_not_found", "circuit_not_served"],
        }),
      },
    ) as unknown as typeof app;
  }
  return app;
};
