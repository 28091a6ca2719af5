// The SDK's pins (src/circuits/pins.ts) are what the shipped artifacts are: a
// rebuilt circuit cannot keep a stale pin, and a pin cannot name a circuit
// the SDK does not ship.
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { PINNED_CIRCUITS } from "../../src/circuits/pins";
import { parseZkey } from "../../src/prover/zkey";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

test("the agent_identity pin is recomputed from circuits/artifacts", () => {
  const wasm = new Uint8Array(readFileSync("circuits/artifacts/agent_identity.wasm"));
  const zkey = parseZkey(new Uint8Array(readFileSync("circuits/artifacts/agent_identity.zkey")));
  expect(PINNED_CIRCUITS.find((pin) => pin.name === "agent_identity")).toEqual({
    name: "agent_identity",
    wasmSha256: sha256(wasm),
    wasmBytes: wasm.length,
    zkey: { nVars: zkey.nVars, nPublic: zkey.nPublic, domainSize: zkey.domainSize, nCoef: zkey.nCoef, coefsSha256: sha256(zkey.coefs) },
  });
});
