// GET /v1/circuits, /v1/circuits/{id} and /v1/circuits/{id}/{vk,zkey,wasm,transcript}.
// Public (no API key): agents fetch what they prove with, anyone audits the
// setup. The list is cached for as long as a node caches the circuits
// (CIRCUIT_REFRESH_MS); artifacts are immutable: ETag = their hash,
// If-None-Match → 304, Cache-Control immutable.
import { Elysia, t } from "elysia";
import { CIRCUIT_REFRESH_MS } from "../../circuits/registry";
import type { ModuleDeps } from "../../deps";
import { describe } from "../../http/docs";
import { pathParam } from "../../http/params";
import { circuitList, circuitView } from "./model";
import { type ArtifactKind, listCircuits, readArtifact, readCircuit } from "./service";

const IMMUTABLE = "public, max-age=31536000, immutable";

/** Whether an If-None-Match header names this ETag (or is "*"). */
function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(",").some((tag) => {
    const value = tag.trim().replace(/^W\//, "");
    return value === "*" || value === etag;
  });
}

const ARTIFACTS: Record<ArtifactKind, string> = {
  vk: "The verification key (snarkjs JSON). Its RFC 8785 canonical form hashes to vk_hash.",
  zkey: "The proving key (snarkjs zkey). Hashes to zkey_sha256.",
  wasm: "The witness generator (circom wasm). Hashes to wasm_sha256.",
  transcript: "The ceremony's transcript.json: every step and its hash. Hashes to transcript_sha256.",
};

export const circuits = (deps: ModuleDeps) => {
  let app = new Elysia({ name: "circuits" })
    .get(
      "/v1/circuits",
      async ({ set }) => {
        set.headers["cache-control"] = `public, max-age=${CIRCUIT_REFRESH_MS / 1000}`;
        return listCircuits(deps.circuits);
      },
      {
        detail: describe({
          tag: "Circuits",
          summary: "Circuit versions",
          description:
            "Every circuit version: its state, the hashes of its artifacts and a summary of its phase-2 ceremony. No API key. Every node follows an activation or a retirement within 5 s. See docs/trust.md.",
          ok: { status: 200, schema: circuitList, description: "The circuits" },
          errors: {},
          public: true,
        }),
      },
    )
    .get("/v1/circuits/:id", ({ params }) => readCircuit(deps.circuits, pathParam(params.id)), {
      detail: describe({
        tag: "Circuits",
        summary: "One circuit version",
        ok: { status: 200, schema: circuitView, description: "The circuit" },
        errors: { 404: "Circuit not found" },
        public: true,
      }),
    });
  for (const kind of Object.keys(ARTIFACTS) as ArtifactKind[]) {
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
          tag: "Circuits",
          summary: `A circuit's ${kind}`,
          description: `${ARTIFACTS[kind]} Immutable: ETag is the hash; If-None-Match answers 304.`,
          ok: { status: 200, schema: t.Any(), description: ARTIFACTS[kind] },
          errors: { 404: "Circuit not found" },
          public: true,
        }),
      },
    ) as unknown as typeof app;
  }
  return app;
};
