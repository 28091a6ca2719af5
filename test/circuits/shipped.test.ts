// The shipped circuit's files as the service and the binary read them
// (src/circuits/shipped.ts): the same bytes as circuits/artifacts/, the
// inlined JSON files included, so a hash of one is a hash of the other.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CEREMONY_FILES, type CeremonyFile, shippedFile } from "../../src/circuits/shipped";

const ART = join(import.meta.dir, "../../circuits/artifacts");

describe("shippedFile", () => {
  for (const file of Object.keys(CEREMONY_FILES) as CeremonyFile[]) {
    test(`${CEREMONY_FILES[file]} is the repository's file byte for byte`, async () => {
      const bytes = await shippedFile(file);
      expect(bytes.byteLength).toBeGreaterThan(0);
      expect(Buffer.from(bytes).equals(readFileSync(join(ART, CEREMONY_FILES[file])))).toBe(true);
    });
  }
});
