// circuits/budget_spend.circom at boundary values: the witness the compiled
// circuit computes (circuits/artifacts/budget_spend/budget_spend.wasm, through the
// project's witness calculator) against the outputs computed off the circuit
// (src/budgets/), and the inputs it must refuse — a refusal here is a
// constraint that no assignment satisfies for these public values, since
// every intermediate signal is determined by the inputs.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { MAX_AMOUNT } from "../../src/budgets/encoding";
import { FIELD_ORDER_R as R } from "../../src/identity/field";
import { createWitnessCalculator } from "../../src/prover/witness";
import { baseTerms, scenario, secret } from "../support/budget-spend";

const calculator = await createWitnessCalculator(new Uint8Array(readFileSync("circuits/artifacts/budget_spend/budget_spend.wasm")));
const element = (w: Uint8Array, i: number) => {
  let x = 0n;
  for (let b = 31; b >= 0; b--) x = (x << 8n) | BigInt(w[32 * i + b]!);
  return x;
};

async function outputs(input: Record<string, unknown>): Promise<[bigint, bigint]> {
  const w = await calculator.calculate(input as never);
  return [element(w, 1), element(w, 2)];
}
const SOURCE = readFileSync("circuits/budget_spend.circom", "utf8").split("\n");
/** The line of circuits/budget_spend.circom holding `text`: where a refusal must come from. */
function lineOf(text: string): number {
  const lines = SOURCE.flatMap((line, i) => (line.includes(text) ? [i + 1] : []));
  if (lines.length !== 1) throw new Error(`${JSON.stringify(text)} is on ${lines.length} lines of the circuit`);
  return lines[0]!;
}
/**
 * The witness calculator refuses, at the constraint named. circom_runtime
 * appends each failure to one message per calculator and prints it, so the
 * refusal is read off the message's last line and the print is silenced.
 */
async function refusedAt(input: Record<string, unknown>, constraint: string, template = "BudgetSpend"): Promise<void> {
  const print = console.error;
  console.error = () => {};
  try {
    await outputs(input);
  } catch (error) {
    const last = String((error as Error).message)
      .trim()
      .split("\n")
      .at(-1)!;
    if (template === "BudgetSpend") expect(last).toMatch(new RegExp(`Error in template BudgetSpend_\\d+ line: ${lineOf(constraint)}$`));
    else expect(last).toMatch(new RegExp(`Error in template ${template}_\\d+ line: \\d+$`));
    return;
  } finally {
    console.error = print;
  }
  throw new Error(`accepted; expected a refusal at ${constraint}`);
}
const accepted = async (s: ReturnType<typeof scenario>) => expect(await outputs(s.input)).toEqual([s.nullifier, s.commitment]);

describe("accepted spends compute the off-circuit nullifier and commitment", () => {
  test("a first spend, the member's leaf first or last among the group's", async () => {
    await accepted(scenario({ position: 0 }));
    await accepted(scenario({ position: 5 }));
  });
  test("a later spend opening a note in the notes tree", async () => {
    await accepted(scenario({ spent: 2000n }));
  });
  test("at the bounds: amount = min, amount = max, spent + amount = budget, the last minute before expiry", async () => {
    await accepted(scenario({ amount: 1n }));
    await accepted(scenario({ amount: 3000n }));
    await accepted(scenario({ spent: 7000n, amount: 3000n }));
    await accepted(scenario({ at: (baseTerms.expiresAt - 60) * 1000 }));
  });
  test("any payee when the terms name none; a lifetime and a one-time budget", async () => {
    await accepted(scenario({ terms: { ...baseTerms, payees: null }, payee: "https://elsewhere.example" }));
    await accepted(scenario({ terms: { ...baseTerms, kind: "lifetime" }, spent: 5000n }));
    await accepted(scenario({ terms: { ...baseTerms, kind: "lifetime", once: true } }));
  });
  test("the 64-bit edge: max = budget = 2^64 − 1, spending all of it at once", async () => {
    await accepted(scenario({ terms: { ...baseTerms, max: MAX_AMOUNT, budget: MAX_AMOUNT }, amount: MAX_AMOUNT }));
  });
});

describe("a period starts once", () => {
  test("two first spends in one day reveal the same nullifier (the service admits one); the next day's differs", async () => {
    const morning = await outputs(scenario({ at: Date.UTC(2026, 10, 28, 0, 1) }).input);
    const evening = await outputs(scenario({ at: Date.UTC(2026, 10, 28, 23, 59), amount: 1000n }).input);
    const tomorrow = await outputs(scenario({ at: Date.UTC(2026, 10, 29, 0, 0) }).input);
    expect(evening[0]).toBe(morning[0]);
    expect(tomorrow[0]).not.toBe(morning[0]);
  });
});

describe("refused, each at its constraint", () => {
  const AMOUNT_BITS = "signal amount_bits[64] <== Num2Bits(64)(amount);";
  const SPENT_BITS = "signal spent_bits[64] <== Num2Bits(64)(spent);";
  const ENROLMENT = "root_enrolment === enrol_root;";
  const NOTES = "(1 - first) * (notes_root - root_notes) === 0;";
  test("amount over max, under min, or 0", async () => {
    await refusedAt(scenario({ amount: 3001n }).input, "below_max === 1;");
    await refusedAt(scenario({ terms: { ...baseTerms, min: 500n }, amount: 499n }).input, "above_min === 1;");
    await refusedAt(scenario({ terms: { ...baseTerms, min: 0n }, amount: 0n }).input, "amount_zero === 0;");
  });
  test("over budget by one minor unit", async () => {
    await refusedAt(scenario({ spent: 7001n, amount: 3000n }).input, "within_budget === 1;");
  });
  test("a payee not in the terms", async () => {
    await refusedAt(scenario({ payee: "https://shop-c.example" }).input, "(1 - any) * product[7] === 0;");
  });
  test("another currency than the terms'", async () => {
    await refusedAt(scenario({ currency: "USD" }).input, "terms_currency === currency;");
  });
  test("at the expiry minute", async () => {
    await refusedAt(scenario({ at: baseTerms.expiresAt * 1000 }).input, "unexpired === 1;");
  });
  test("a second start of the period: f = 1 carrying a total, or f not a bit", async () => {
    await refusedAt({ ...scenario({ spent: 2000n }).input, first: 1n }, "first * spent === 0;");
    const s = scenario();
    await refusedAt({ ...s.input, spent: 100n }, "first * spent === 0;");
    await refusedAt({ ...s.input, first: 2n }, "first * (first - 1) === 0;");
  });
  test("a one-time mandate spent again from its note; one-time terms with a period", async () => {
    await refusedAt(scenario({ terms: { ...baseTerms, kind: "lifetime", once: true }, spent: 2000n }).input, "once * (1 - first) === 0;");
    await refusedAt(scenario({ repack: (p) => ({ TM: p.TM | (1n << 26n) }) }).input, "once * (1 - life) === 0;");
  });
  test("overflow and wrap-around: amount 2^64, r − 1, r − 5 (a negative amount); a total of 2^64; spent ≥ 2^64 or r − 1", async () => {
    const wide = { ...baseTerms, max: MAX_AMOUNT, budget: MAX_AMOUNT };
    await refusedAt(scenario({ terms: wide, amount: MAX_AMOUNT + 1n }).input, AMOUNT_BITS);
    await refusedAt(scenario({ terms: wide, amount: R - 1n }).input, AMOUNT_BITS);
    await refusedAt(scenario({ terms: wide, amount: R - 5n }).input, AMOUNT_BITS);
    await refusedAt(scenario({ terms: wide, spent: 1n, amount: MAX_AMOUNT }).input, "within_budget === 1;");
    await refusedAt(scenario({ terms: wide, spent: MAX_AMOUNT + 1n, amount: 1n }).input, SPENT_BITS);
    // spent = r − 1 would wrap the total to amount − 1.
    await refusedAt(scenario({ terms: wide, spent: R - 1n, amount: 2n }).input, SPENT_BITS);
  });
  test("a leaf not under the enrolment root; a note not under the notes root; a proof longer than the circuit's depth", async () => {
    const s = scenario({ spent: 2000n });
    await refusedAt({ ...s.input, root_enrolment: s.pub.rootEnrolment + 1n }, ENROLMENT);
    await refusedAt({ ...s.input, root_notes: s.pub.rootNotes + 1n }, NOTES);
    // The note's total is not what it committed to.
    await refusedAt({ ...s.input, spent: 1000n }, NOTES);
    // Another secret for the same leaf.
    await refusedAt({ ...s.input, secret: secret + 1n }, ENROLMENT);
    await refusedAt({ ...s.input, enrol_length: 21 }, ENROLMENT);
  });
  test("packed terms that do not decompose at their widths, even in a leaf made from them", async () => {
    await refusedAt(scenario({ repack: (p) => ({ TA: p.TA + (1n << 192n) }) }).input, "signal ta[192] <== Num2Bits(192)(terms_amounts);");
    await refusedAt(scenario({ repack: (p) => ({ TM: p.TM + (1n << 68n) }) }).input, "signal tm[68] <== Num2Bits(68)(terms_meta);");
  });
});
