// The I-JSON scanner against JSON.parse (the independent reference for
// syntax and values) and against the rules written out by hand.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { memberPath, parseIJson, type IJsonRule } from "../../src/identity/ijson";

const rule = (text: string): IJsonRule | "ok" => {
  const result = parseIJson(text);
  return result.ok ? "ok" : result.rule;
};
const violation = (text: string) => {
  const result = parseIJson(text);
  if (result.ok) throw new Error(`accepted ${text}`);
  return { rule: result.rule, path: result.path };
};

describe("the rules, case by case", () => {
  test("plain JSON is accepted with JSON.parse's value", () => {
    for (const text of [
      '{"a":1,"b":[true,false,null,"x"],"c":{"d":-2.5e-3}}',
      "[]",
      "{}",
      '""',
      "0",
      " [ 1 , 2 ] ",
      '{"__proto__":{"x":1}}',
      '"\\ud83d\\ude00"',
      '"😀"',
    ]) {
      const result = parseIJson(text);
      expect(result).toEqual({ ok: true, value: JSON.parse(text) });
    }
  });

  test("__proto__ stays an own member; the prototype is untouched", () => {
    const result = parseIJson('{"__proto__":{"polluted":true}}');
    expect(result.ok).toBe(true);
    const value = (result as { value: Record<string, unknown> }).value;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("duplicate member names, at any depth, are named by path", () => {
    expect(violation('{"amount":20,"amount":2000}')).toEqual({ rule: "duplicate_member", path: "amount" });
    expect(violation('{"context":{"amount":20,"amount":20}}')).toEqual({ rule: "duplicate_member", path: "context.amount" });
    expect(violation('{"a":[{"x":1},{"y":1,"y":2}]}')).toEqual({ rule: "duplicate_member", path: "a[1].y" });
    expect(violation('{"a b":1,"a b":2}')).toEqual({ rule: "duplicate_member", path: '["a b"]' });
    // The same name in sibling objects is not a duplicate; an escaped spelling of the same name is.
    expect(rule('{"a":{"x":1},"b":{"x":1}}')).toBe("ok");
    expect(violation('{"ab":1,"a\\u0062":2}')).toEqual({ rule: "duplicate_member", path: "ab" });
  });

  test("lone surrogates in values and names, escaped or raw", () => {
    expect(violation('{"action":"refund\\ud800"}')).toEqual({ rule: "lone_surrogate", path: "action" });
    expect(violation('{"action":"refund\\udc00"}')).toEqual({ rule: "lone_surrogate", path: "action" });
    expect(violation('{"context":{"k":["ok","\\udbff x"]}}')).toEqual({ rule: "lone_surrogate", path: "context.k[1]" });
    expect(violation('{"context":{"\\ud800":1}}')).toEqual({ rule: "lone_surrogate", path: 'context["\\ud800"]' });
    expect(violation(`{"raw":"a\ud800b"}`)).toEqual({ rule: "lone_surrogate", path: "raw" });
    expect(violation('"\\ude00\\ud83d"')).toEqual({ rule: "lone_surrogate", path: "" }); // reversed pair
    expect(rule('{"ok":"refund\\ufffd"}')).toBe("ok"); // U+FFFD is a character like any other
  });

  test("numbers: finite, within ±(2^53−1), and bound as written", () => {
    expect(violation('{"n":1e400}')).toEqual({ rule: "non_finite_number", path: "n" });
    expect(violation(`{"n":${"9".repeat(400)}}`)).toEqual({ rule: "non_finite_number", path: "n" });
    expect(violation('{"n":-1e309}')).toEqual({ rule: "non_finite_number", path: "n" });
    expect(violation('{"order_id":1234567890123456768}')).toEqual({ rule: "unsafe_number", path: "order_id" });
    expect(violation('{"x":9007199254740992}')).toEqual({ rule: "unsafe_number", path: "x" }); // 2^53
    expect(violation('{"x":-9007199254740992}')).toEqual({ rule: "unsafe_number", path: "x" });
    expect(violation('{"x":1e300}')).toEqual({ rule: "unsafe_number", path: "x" });
    expect(rule('{"x":9007199254740991}')).toBe("ok"); // 2^53 − 1
    expect(rule('{"x":-9007199254740991}')).toBe("ok");
    expect(violation('{"x":0.1000000000000000000001}')).toEqual({ rule: "inexact_number", path: "x" });
    expect(violation('{"x":1e-400}')).toEqual({ rule: "inexact_number", path: "x" }); // underflows to 0
    expect(violation('{"x":9007199254740990.5}')).toEqual({ rule: "inexact_number", path: "x" });
    for (const ok of ["0.1", "20.00", "2e1", "2.0E+1", "-0", "0e99999", "1e-7", "123.456", "5e-324", "1.7976931348623157e-300"]) expect(rule(ok)).toBe("ok");
  });

  test("the first violation in text order wins", () => {
    expect(violation('{"a":1e400,"a":2}')).toEqual({ rule: "non_finite_number", path: "a" });
    expect(violation('{"a":1,"a":1e400}')).toEqual({ rule: "duplicate_member", path: "a" });
  });

  test("syntax errors JSON.parse rejects are syntax here too", () => {
    for (const text of [
      "",
      "{",
      "}",
      "{}}",
      '{"a":1,}',
      "{'a':1}",
      "\ufeff{}",
      "[1,2",
      '{"a":"\\x"}',
      "NaN",
      "01",
      "1.",
      ".5",
      "+1",
      '"\t"',
      '{"a" 1}',
      "tru",
      "nul",
      '["a",]',
      '{"a":1}x',
    ]) {
      expect(() => JSON.parse(text)).toThrow();
      expect(rule(text)).toBe("syntax");
    }
  });

  test("30 000 levels of nesting do not overflow the stack", () => {
    const deep = `${"[".repeat(30000)}${"]".repeat(30000)}`;
    expect(rule(deep)).toBe("ok");
    const objects = `${'{"a":'.repeat(20000)}1${"}".repeat(20000)}`;
    expect(rule(objects)).toBe("ok");
  });

  test("long member names are shortened in the path, never split inside a character", () => {
    const name = "😀".repeat(100);
    const path = memberPath("context", name);
    expect(path.startsWith('context["😀')).toBe(true);
    expect(path.isWellFormed()).toBe(true);
    expect(Array.from(JSON.parse(path.slice("context[".length, -1)) as string).length).toBe(41);
  });
});

// ----------------------------------------------------------------- properties

const RULES = new Set<IJsonRule>(["duplicate_member", "lone_surrogate", "non_finite_number", "unsafe_number", "inexact_number"]);

/** Whether JSON.parse's value itself shows the violation (all but duplicates and inexact numbers, which it hides). */
function visibleViolation(value: unknown): boolean {
  if (typeof value === "string") return !value.isWellFormed();
  if (typeof value === "number") return !Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER;
  if (Array.isArray(value)) return value.some(visibleViolation);
  if (value !== null && typeof value === "object") return Object.entries(value).some(([k, v]) => !k.isWellFormed() || visibleViolation(v));
  return false;
}

/** JSON text in many spellings: escapes, spaces, number forms, duplicates, lone surrogates, huge numbers. */
const jsonText: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom("true", "false", "null"),
    fc
      .oneof(fc.integer(), fc.double(), fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }))
      .map((x) => String(x).replace("Infinity", "1e400").replace("NaN", "0")),
    fc.tuple(fc.integer({ min: -20, max: 20 }), fc.nat(99), fc.integer({ min: -400, max: 400 })).map(([m, f, e]) => `${m}.${f}e${e}`),
    fc.string({ unit: "binary", maxLength: 8 }).map((s) => JSON.stringify(s)),
    fc.constantFrom('"\\ud800"', '"\\udc00x"', '"\\ud83d\\ude00"', '"\\u0000"', '"a\\"b\\\\"'),
    fc.array(tie("value"), { maxLength: 4 }).map((items) => `[${items.join(" , ")}]`),
    fc
      .array(fc.tuple(fc.oneof(fc.constantFrom("a", "b", "__proto__"), fc.string({ unit: "binary", maxLength: 4 })), tie("value")), { maxLength: 4 })
      .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`),
  ),
})).value;

describe("properties against JSON.parse", () => {
  test("every text JSON.parse accepts is accepted with an equal value or refused under a named rule", () => {
    fc.assert(
      fc.property(fc.oneof(jsonText, fc.string({ unit: "binary", maxLength: 30 })), (text) => {
        let reference: unknown;
        try {
          reference = JSON.parse(text);
        } catch {
          expect(rule(text)).toBe("syntax");
          return;
        }
        const result = parseIJson(text);
        if (result.ok) {
          expect(result.value).toEqual(reference as any);
          expect(visibleViolation(reference)).toBe(false);
        } else {
          expect(RULES.has(result.rule)).toBe(true);
          expect(result.message.length).toBeGreaterThan(0);
        }
        // What JSON.parse's own value shows to be wrong is never accepted.
        if (visibleViolation(reference)) expect(result.ok).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });

  test("JSON.stringify of a value within the rules is always accepted, with the same value", () => {
    const safeJson = fc.jsonValue().filter((v) => !visibleViolation(v));
    fc.assert(
      fc.property(safeJson, (value) => {
        const text = JSON.stringify(value);
        expect(parseIJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
      }),
      { numRuns: 2000 },
    );
  });

  test("a member repeated anywhere is found, at its path", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom("x", "y", "z"), { minLength: 0, maxLength: 5 }), fc.constantFrom("amount", "id"), (nesting, name) => {
        const inner = `{"${name}":1,"other":2,"${name}":3}`;
        const text = nesting.reduceRight((acc, key) => `{"${key}":${acc}}`, inner);
        expect(violation(text)).toEqual({ rule: "duplicate_member", path: [...nesting, name].join(".") });
      }),
    );
  });

  test("integers are accepted exactly within ±(2^53−1) and refused beyond", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }), (n) => {
        const safe = n >= -(2n ** 53n - 1n) && n <= 2n ** 53n - 1n;
        const result = parseIJson(`{"n":${n}}`);
        if (safe) expect(result).toEqual({ ok: true, value: { n: Number(n) } });
        else expect(result.ok ? "ok" : result.rule).toBe("unsafe_number");
      }),
      { numRuns: 2000 },
    );
  });
});
