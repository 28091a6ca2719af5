// The generated sources of the verifier are committed; each generator's
// --check mode regenerates in memory and exits non-zero when the committed
// file differs (a hand edit, or a generator change that was not re-run).
import { describe, expect, test } from "bun:test";
import { join } from "node:path";

const root = join(import.meta.dir, "../..");
const GENERATORS = ["asc-constants.ts", "asc-fp2mul.ts", "asc-fp2lin.ts", "asc-layout.ts", "asc-poseidon.ts", "asc-wide.ts"];

describe("generated assembly sources match their generators", () => {
  for (const g of GENERATORS) {
    test(g, () => {
      const r = Bun.spawnSync([process.execPath, join(root, "scripts", g), "--check"], { cwd: root, stdout: "pipe", stderr: "pipe" });
      expect(r.stderr.toString()).toBe("");
      expect(r.exitCode).toBe(0);
    });
  }
});
