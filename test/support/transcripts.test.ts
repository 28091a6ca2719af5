// The token scan of the unlinkability tests (transcripts.ts) finds a value
// however it is carried: plain, in a header's parameter, inside base64url
// JSON, in a compact JWS's payload, in JSON text inside a string; and it
// reads values, never field names.
import { describe, expect, test } from "bun:test";
import { addValue, explained, isClockReading, isWord } from "./transcripts";

const SECRET = "1234567890123456789";
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
const tokens = (value: unknown) => addValue(value, new Set());

describe("addValue", () => {
  test.each([
    ["a plain string", { id: SECRET }],
    ["a number", { id: Number(SECRET.slice(0, 15)) }],
    ["a header parameter", { authorization: `ZKAgent budget="grp", challenge_id="ch_x", proof="${b64({ nullifier: SECRET })}"` }],
    ["a JWS payload", { receipt: `${b64({ alg: "EdDSA" })}.${b64({ spend: { nullifier: SECRET } })}.c2lnbmF0dXJlLWJ5dGVz` }],
    ["JSON text in a string", { body: JSON.stringify({ deep: [{ nullifier: SECRET }] }) }],
    ["a URL's path", { path: `/v1/verify/status/${SECRET}?x=1` }],
  ])("finds a value in %s", (_, value) => {
    const found = tokens(value);
    expect([...found].some((token) => token === SECRET || token === SECRET.slice(0, 15))).toBe(true);
  });
  test("reads values, not field names; short values are not tokens", () => {
    const found = tokens({ merkle_tree_root: "7", challenge_identifier: "short" });
    expect(found.size).toBe(0);
  });
});

describe("isClockReading", () => {
  const window = { from: Date.UTC(2026, 10, 27), to: Date.UTC(2026, 10, 30) };
  test("ISO times, times of day and Unix times in s, ms and minutes of the window are clock readings", () => {
    for (const token of [
      "2026-11-28T12:00:01.123Z",
      "2026-11-28",
      "12:00:01",
      String(Date.UTC(2026, 10, 28) / 1000),
      String(Date.UTC(2026, 10, 28)),
      String(Date.UTC(2026, 10, 28) / 60_000),
    ])
      expect(isClockReading(token, window)).toBe(true);
  });
  test("other numbers and text are not", () => {
    for (const token of [SECRET, "12345678", String(Date.UTC(2020, 0, 1)), "ch_abcdefgh"]) expect(isClockReading(token, window)).toBe(false);
  });
});

describe("explained", () => {
  const allowed = {
    isPublic: (t: string) => t === "household-budget-7",
    vocabulary: new Set(["Bun/1.4.5"]),
    window: { from: Date.UTC(2026, 10, 27), to: Date.UTC(2026, 10, 30) },
  };
  test("public values, words, vocabulary, clock readings, and text made of them", () => {
    for (const token of [
      "household-budget-7",
      "proof_required",
      "keep-alive",
      "Bun/1.4.5",
      "Sat, 28 Nov 2026 04:45:03 GMT",
      'ZKAgent realm="example-shop", budget="household-budget-7"',
      "application/json;charset=utf-8",
    ])
      expect({ token, explained: explained(token, allowed) }).toEqual({ token, explained: true });
    expect(isWord("challenge_id")).toBe(true);
  });
  test("a value, alone or inside text, is not", () => {
    for (const token of [
      SECRET,
      "ch_VQvEIoIIz-ZONhqjVn79uw",
      `ZKAgent budget="household-budget-7", proof="${SECRET}"`,
      `/v1/verify/status/${SECRET}`,
      b64({ alg: "EdDSA", kid: SECRET }),
    ])
      expect({ token, explained: explained(token, allowed) }).toEqual({ token, explained: false });
  });
});
