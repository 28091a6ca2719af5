// The budget spend circuit as the service lists and serves it
// (src/circuits/budget.ts): its pins are the shipped files' SHA-256, its id
// the zkey's, its listing the shipped transcript's, and the files it serves
// are the pinned bytes.
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { BUDGET_CIRCUIT_ID, BUDGET_PINS, BUDGET_VK, BUDGET_VK_HASH, budgetCircuit, budgetFile } from "../../src/circuits/budget";

const DIR = "circuits/artifacts/budget_spend";
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

describe("the budget spend circuit", () => {
  test("the pins are the shipped files' SHA-256, the id names the zkey's first 16 hex digits, and the transcript ends with that zkey", () => {
    const zkey = readFileSync(`${DIR}/budget_spend.zkey`);
    expect(BUDGET_PINS.zkey).toBe(sha256(zkey));
    expect(BUDGET_PINS.wasm).toBe(sha256(readFileSync(`${DIR}/budget_spend.wasm`)));
    expect(BUDGET_CIRCUIT_ID).toBe(`budget_spend-${sha256(zkey).slice(0, 16)}`);
    const transcript = JSON.parse(readFileSync(`${DIR}/transcript.json`, "utf8"));
    expect(transcript.steps.at(-1).zkey_sha256).toBe(BUDGET_PINS.zkey);
    expect(transcript.wasm_sha256).toBe(BUDGET_PINS.wasm);
  });

  test("its record: accepted, the shipped vk and its hash, the transcript's contributions and beacon", () => {
    const record = budgetCircuit();
    expect(record).toMatchObject({ id: BUDGET_CIRCUIT_ID, state: "accepted", vkHash: BUDGET_VK_HASH, zkeySha256: BUDGET_PINS.zkey });
    expect(JSON.parse(record.vk)).toEqual(JSON.parse(readFileSync(`${DIR}/verification_key.json`, "utf8")));
    expect(BUDGET_VK.nPublic).toBe(13);
    expect(record.ceremony!.contributions.map((c) => c.name)).toEqual(["zkagent budgets phase 2, contribution 1", "zkagent budgets phase 2, contribution 2"]);
    expect(record.ceremony!.beacon).not.toBeNull();
  });

  test("the files served are the pinned bytes", async () => {
    expect(sha256(await budgetFile("zkey"))).toBe(BUDGET_PINS.zkey);
    expect(sha256(await budgetFile("wasm"))).toBe(BUDGET_PINS.wasm);
  });
});
