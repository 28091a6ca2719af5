// The production module carries only the verifier's entry points; the test
// and benchmark operations exist in build/verifier-test.wasm alone.
import { describe, expect, test } from "bun:test";
import { verifierModule } from "../../src/verifier/wasm.ts";
import { newWasm } from "./support.ts";

const PRODUCTION = ["batchCheck", "batchPrepare", "io", "loadKey", "maxBatch", "memory", "nPublic", "verify"];

describe("entry points", () => {
  test("build/verifier.wasm exports exactly the production ABI", async () => {
    const names = WebAssembly.Module.exports(await verifierModule())
      .map((e) => e.name)
      .sort();
    expect(names).toEqual(PRODUCTION);
  });

  test("build/verifier-test.wasm adds the test operations to the same ABI", async () => {
    const w = await newWasm();
    for (const name of PRODUCTION) expect(name in w).toBe(true);
    for (const name of ["fpOp", "fp2Op", "fp2MulRaw", "fp12Op", "pairingCheck", "benchOp", "benchStage"]) {
      expect(typeof (w as unknown as Record<string, unknown>)[name]).toBe("function");
    }
  });
});
