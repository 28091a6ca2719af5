// The confidence function of docs/protocol.md, as a table.
import { expect, test } from "bun:test";
import { confidence, CONFIDENCE_PROOF, CONFIDENCE_PROOF_AND_SIGNATURE } from "../../src/identity/confidence";

test.each([
  [true, false, 0.99],
  [true, true, 0.999],
  [false, false, null],
  [false, true, null],
])("proofValid=%p signatureValid=%p → %p", (proofValid, signatureValid, expected) => {
  expect(confidence({ proofValid, signatureValid })).toBe(expected);
});

test("scores lie in (0, 1] and a signature raises the score", () => {
  expect(CONFIDENCE_PROOF).toBe(0.99);
  expect(CONFIDENCE_PROOF_AND_SIGNATURE).toBe(0.999);
  expect(CONFIDENCE_PROOF_AND_SIGNATURE).toBeGreaterThan(CONFIDENCE_PROOF);
  expect(CONFIDENCE_PROOF_AND_SIGNATURE).toBeLessThanOrEqual(1);
});
