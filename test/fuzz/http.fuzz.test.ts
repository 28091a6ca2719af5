// Property-based fuzzing of every endpoint through app.handle (issue 5,
// "Hardening"). Each property draws whole requests — API key header, method,
// Content-Type, body bytes, path — and checks them against an oracle written
// from the contract (docs/api.md: errors and processing order):
//   auth (401/403) → content type (415) → size (413) → JSON (400) → fields (400) → …
// Invariants on every answer: no 5xx; status is the oracle's; `error` is one
// of the documented texts; no internals in the body; a request id header;
// nothing stored for a rejected request; Object.prototype untouched.
//
// Size: FUZZ_RUNS (default 150 per property), seed: FUZZ_SEED (printed);
// store: FUZZ_STORE=postgres (default SQLite).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import fc from "fast-check";
import { generateKeyPairSync, randomBytes, sign } from "node:crypto";
import { createPrincipal } from "../../src/agent";
import { COMMITMENT_OF_ZERO } from "../../src/identity/commitment";
import { privateKeyFromSeed } from "../../src/identity/signature";
import { createKey } from "../../src/modules/keys/service";
import { openPostgres } from "../../src/store/postgres";
import { BASE, createHarness, type Harness } from "../support/harness";
import { createTestDatabase, postgresTestUrl } from "../support/postgres";
import { announce, expectNoInternals, expectPrototypeClean, fuzzParams, FUZZ_RUNS, isDocumentedError, prototypeSnapshot, REASONS } from "./support";

// A property runs FUZZ_RUNS cases; at 1000 (the long setting) on PostgreSQL that
// outlasts bun's 5 s default, and a timed-out property keeps running into the next.
setDefaultTimeout(Math.max(5_000, FUZZ_RUNS * 50));

const LIMIT = 64 * 1024;
const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const enc = new TextEncoder();

let h: Harness;
let keyA: string; // the caller
let keyB: string; // another customer
let revokedKey: string;
let wrongSecret: string; // keyA's id with another secret
let unknownId: string; // well-formed, no such key
let protoBefore: string;
const runsPerEndpoint: Record<string, number> = {};
const count = (endpoint: string) => (runsPerEndpoint[endpoint] = (runsPerEndpoint[endpoint] ?? 0) + 1);

beforeAll(async () => {
  announce("http.fuzz");
  protoBefore = prototypeSnapshot();
  h = await createHarness(await fuzzStore());
  keyA = await h.newKey("a", 0);
  keyB = await h.newKey("b", 0);
  const revoked = await createKey(h.store, h.clock, "revoked", 0);
  await h.store.revokeKey(revoked.record.id, h.clock.now());
  revokedKey = revoked.key;
  wrongSecret = `${keyA.slice(0, 21)}${randomBytes(32).toString("base64url")}`;
  unknownId = `zka_0000000000000000_${randomBytes(32).toString("base64url")}`;
  for (const key of [keyA, keyB]) {
    const r = await h.call("POST", "/v1/agents", { key, body: { agent_id: "agent-1", identity_commitment: "12345" } });
    expect(r.status).toBe(201);
  }
});

/**
 * FUZZ_STORE=postgres runs the suite on PostgreSQL (a private database on the
 * run's server, see test/support/postgres.ts), where NUL and encoding errors
 * used to be 500s.
 */
let dropFuzzDatabase: (() => Promise<void>) | undefined;
afterAll(async () => {
  await h?.store.close();
  await dropFuzzDatabase?.();
});

async function fuzzStore() {
  if (process.env.FUZZ_STORE !== "postgres") return undefined;
  const db = await createTestDatabase(await postgresTestUrl());
  dropFuzzDatabase = () => db.drop();
  console.log("[http.fuzz] store: postgres");
  return openPostgres(db.url, { poolSize: 4 });
}

// ---------------------------------------------------------------- transport

interface Reply {
  status: number;
  text: string;
  json: any;
  headers: Headers;
}

async function send(
  method: string,
  path: string,
  opts: { keys?: string[]; contentType?: string | null; body?: Uint8Array | ReadableStream | null; extra?: Record<string, string> } = {},
): Promise<Reply> {
  const headers = new Headers(opts.extra);
  for (const k of opts.keys ?? []) headers.append("x-api-key", k);
  if (opts.contentType !== undefined && opts.contentType !== null) headers.set("content-type", opts.contentType);
  const init: RequestInit & { duplex?: string } = { method, headers };
  if (opts.body) {
    init.body = opts.body as any;
    if (opts.body instanceof ReadableStream) init.duplex = "half";
  }
  const response = await h.app.handle(new Request(BASE + path, init));
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json, headers: response.headers };
}

/** The invariants every answer satisfies, whatever was sent. */
function expectWellFormed(r: Reply, echoed: string[] = [], method = "GET") {
  expect(r.status).toBeLessThan(500);
  expect([200, 201, 400, 401, 403, 404, 409, 413, 415, 429]).toContain(r.status);
  expect(r.headers.get("x-request-id")).toBeTruthy();
  if (method === "HEAD") return; // no body by definition
  expect(r.json).toBeObject();
  if (r.status >= 400) expect(isDocumentedError(r.json.error)).toBe(true);
  expectNoInternals(r.text, echoed);
}

// --------------------------------------------------------------- generators

type KeyCase = { kind: "valid" | "missing" | "invalid" | "foreign"; headers: string[] };

const latin1 = (min: number, max: number) =>
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    minLength: min,
    maxLength: max,
  });

const keyArb = (): fc.Arbitrary<KeyCase> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(null).map(() => ({ kind: "valid" as const, headers: [keyA] })) },
    fc.constant(null).map(() => ({ kind: "valid" as const, headers: [` ${keyA}\t`] })), // HTTP trims optional whitespace
    fc.constant<KeyCase>({ kind: "missing", headers: [] }),
    fc.constantFrom<KeyCase>({ kind: "missing", headers: [""] }, { kind: "missing", headers: ["   "] }),
    latin1(1, 200)
      .filter((s) => s.trim() !== "")
      .map((s) => ({ kind: "invalid" as const, headers: [s] })),
    fc.constant(null).map(() => ({ kind: "foreign" as const, headers: [keyB] })),
    fc
      .constantFrom("dup", "suffix", "truncated", "upper", "revoked", "wrongSecret", "unknownId", "long", "innerSpace", "latin1", "nul-escaped", "dupOther")
      .map((v) => {
        const header = {
          dup: [keyA, keyA],
          dupOther: [keyA, keyB],
          suffix: [`${keyA}x`],
          truncated: [keyA.slice(0, -1)],
          upper: [keyA.toUpperCase()],
          revoked: [revokedKey],
          wrongSecret: [wrongSecret],
          unknownId: [unknownId],
          long: [keyA.repeat(200)],
          innerSpace: [`${keyA.slice(0, 10)} ${keyA.slice(10)}`],
          latin1: [`${keyA}é`],
          "nul-escaped": [`${keyA}%00`],
        }[v]!;
        return { kind: "invalid" as const, headers: header };
      }),
  );

type CtCase = { json: boolean; value: string | null };
const ctArb: fc.Arbitrary<CtCase> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ json: true, value: "application/json" }) },
  fc.constantFrom<CtCase>(
    { json: true, value: "application/json; charset=utf-8" },
    { json: true, value: "APPLICATION/JSON" },
    { json: true, value: 'application/json; charset="UTF-8"' },
    { json: true, value: " application/json " },
    { json: true, value: "application/problem+json" },
    { json: false, value: null },
    { json: false, value: "" },
    { json: false, value: "text/plain" },
    { json: false, value: "text/plain; charset=utf-8" },
    { json: false, value: "application/jsonx" },
    { json: false, value: "application/json5" },
    { json: false, value: "text/json" },
    { json: false, value: "json" },
    { json: false, value: "application/x-www-form-urlencoded" },
    { json: false, value: "multipart/form-data; boundary=xyz" },
    { json: false, value: "application/xml" },
    // Issue 11: a charset other than UTF-8 is named and refused, never decoded as UTF-8.
    { json: false, value: "application/json; charset=latin1" },
    { json: false, value: "application/json; charset=utf-16" },
    { json: false, value: "*/*" },
  ),
  latin1(1, 60)
    .filter((s) => !/json/i.test(s) && s.trim() !== "")
    .map((value) => ({ json: false, value })),
);

const ABSENT = Symbol("absent");
type Val = unknown | typeof ABSENT;

/** JSON text that keeps `__proto__` as an own key (JSON.parse does the same on the server). */
function ser(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(ser).join(",")}]`;
  return `{${Object.keys(value)
    .map((k) => `${JSON.stringify(k)}:${ser((value as any)[k])}`)
    .join(",")}}`;
}
function objectText(entries: [string, Val][]): string {
  return `{${entries
    .filter(([, v]) => v !== ABSENT)
    .map(([k, v]) => `${JSON.stringify(k)}:${typeof v === "string" && v.startsWith("\u0000RAW:") ? v.slice(5) : ser(v)}`)
    .join(",")}}`;
}
const raw = (text: string) => `\u0000RAW:${text}`;

const NASTY_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf", "__defineGetter__", "agent_id", "polluted"];
const nastyKey = fc.oneof(fc.constantFrom(...NASTY_KEYS), fc.string({ maxLength: 12 }));
const jsonLeaf = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null));

/** A JSON object as an entries tree, so `__proto__` survives into the text. */
const nastyObject: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  obj: fc
    .array(fc.tuple(nastyKey, fc.oneof({ depthSize: "small" }, jsonLeaf, tie("obj"), fc.array(jsonLeaf, { maxLength: 4 }))), { maxLength: 6 })
    .map((entries) => {
      const o = Object.create(null);
      for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
      return o;
    }),
})).obj;

const wrongType = fc.oneof(fc.integer(), fc.boolean(), fc.array(jsonLeaf, { maxLength: 3 }), nastyObject, fc.double({ noNaN: true, noDefaultInfinity: true }));

/** A string field bounded at `max` characters: absent, null, valid, empty, too long, huge, wrong type. */
const textField = (max: number): fc.Arbitrary<Val> =>
  fc.oneof(
    { weight: 5, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 40 }) },
    fc.string({ unit: "grapheme", minLength: 1, maxLength: max }),
    fc.constant(ABSENT),
    fc.constant(null),
    fc.constant(""),
    fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 20 }), // control characters, NUL among them
    fc.constantFrom("a\u0000", "\u0000", "\ud800", "x\udc00y", "\ufffd", ".", ".."), // issue 11: NUL, lone surrogates, dot segments
    fc.integer({ min: max + 1, max: max + 50 }).map((n) => "x".repeat(n)),
    fc.integer({ min: 2000, max: 20000 }).map((n) => "é".repeat(n)),
    fc.constant("x".repeat(max)),
    wrongType,
  );

function depthOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  let d = 0;
  for (const k of Object.keys(value)) d = Math.max(d, depthOf((value as any)[k]));
  return d + 1;
}
const nestedObject = (levels: number) => raw(`${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`);
const nestedArrayInObject = (levels: number) => raw(`{"a":${"[".repeat(levels)}${"]".repeat(levels)}}`);

/**
 * Issue 18: U+0000 somewhere inside an otherwise plain value — a nested
 * string, an array item, a member name — where PostgreSQL used to fail after
 * the write (mandates) or store what the other store would not.
 */
const withNul = (leaf: fc.Arbitrary<string>) => fc.tuple(leaf, fc.nat(8)).map(([text, at]) => `${text.slice(0, at)}\u0000${text.slice(at)}`);
const nulValue: fc.Arbitrary<unknown> = fc.oneof(
  withNul(fc.string({ maxLength: 10 })),
  fc.tuple(withNul(fc.string({ maxLength: 6 })), fc.string({ maxLength: 6 })).map(([bad, ok]) => [ok, { deep: [bad] }]),
  fc.tuple(withNul(fc.string({ minLength: 1, maxLength: 6 })), jsonLeaf).map(([name, value]) => ({ inner: { [name]: value } })),
);
const nulContext: fc.Arbitrary<Val> = fc.tuple(fc.string({ maxLength: 8 }), nulValue).map(([name, value]) => ({ merchant: "shop-a", [name || "k"]: value }));

/** Whether a string or member name anywhere in the value holds U+0000 (iterative: contexts nest 30 000 deep). */
function holdsNul(root: unknown): boolean {
  const stack = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string" && value.includes("\u0000")) return true;
    if (Array.isArray(value)) stack.push(...value);
    else if (value !== null && typeof value === "object") {
      for (const k of Object.keys(value)) {
        if (k.includes("\u0000")) return true;
        stack.push((value as any)[k]);
      }
    }
  }
  return false;
}

const contextField: fc.Arbitrary<Val> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(ABSENT) },
  { weight: 4, arbitrary: nastyObject },
  fc.constant(null),
  fc.array(jsonLeaf, { maxLength: 4 }),
  jsonLeaf,
  fc.integer({ min: 1, max: 40 }).map(nestedObject),
  fc.integer({ min: 1, max: 20000 }).map(nestedObject),
  fc.integer({ min: 1, max: 30000 }).map(nestedArrayInObject),
  fc.integer({ min: 16000, max: 17000 }).map((n) => ({ big: "y".repeat(n) })),
  fc.constant(raw('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}')),
  nulContext,
);

const extraFields = fc.array(
  fc.tuple(
    fc.oneof(fc.constantFrom("__proto__", "constructor", "prototype", "extra", "toString"), fc.string({ maxLength: 10 })),
    fc.oneof(jsonLeaf, nastyObject),
  ),
  { maxLength: 4 },
);

/** Body: structured fields, or junk of several kinds. `parsed` is what JSON.parse gives the server. */
type BodyCase = { kind: string; bytes: Uint8Array };
const junkBody: fc.Arbitrary<BodyCase> = fc.oneof(
  fc
    .jsonValue({ maxDepth: 3 })
    .filter((v) => typeof v !== "object" || v === null || Array.isArray(v))
    .map((v) => ({ kind: "json-non-object", bytes: enc.encode(JSON.stringify(v)) })),
  fc.string({ unit: "binary", maxLength: 200 }).map((s) => ({ kind: "text", bytes: enc.encode(s) })),
  fc.uint8Array({ maxLength: 300 }).map((b) => ({ kind: "bytes", bytes: b })),
  fc
    .tuple(fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82], [0xfe, 0xff]), fc.nat(20))
    .map(([bad, at]) => {
      const text = enc.encode(`{"agent_id":"${"a".repeat(at)}","action":"buy"}`);
      const pos = 13 + Math.min(at, 20);
      const out = new Uint8Array(text.length + bad.length);
      out.set(text.subarray(0, pos));
      out.set(bad, pos);
      out.set(text.subarray(pos), pos + bad.length);
      return { kind: "invalid-utf8", bytes: out };
    }),
  fc
    .constantFrom("", "{", "}", "{}}", '{"a":1,}', "{'a':1}", "nul\u0000", "\ufeff{}", "[1,2", '{"a":"\\x"}', "NaN", "undefined", '{"a":1}garbage')
    .map((s) => ({ kind: "syntax", bytes: enc.encode(s) })),
  fc.integer({ min: LIMIT + 1, max: LIMIT * 3 }).map((n) => ({ kind: "oversized", bytes: enc.encode(`{"agent_id":"${"a".repeat(n - 30)}","action":"b"}`) })),
);

/**
 * Issue 11: bodies that break I-JSON (RFC 7493) somewhere — huge or
 * non-finite numbers, numbers without an exact double, lone surrogates in
 * values and names, duplicate names — spliced into an otherwise valid body
 * for the endpoint (`base`: its opening without the closing brace). Each is
 * refused with 400 `Invalid field <path>: …` before anything is stored.
 */
const BAD_NUMBERS = [
  "1e400",
  "-1e400",
  "9".repeat(400),
  "9007199254740993",
  "-9007199254740992",
  "1234567890123456768",
  "1e300",
  "0.1000000000000000000001",
  "1e-400",
];
const BAD_STRINGS = ['"\\ud800"', '"a\\udc00"', '"\\udbff\\udbff"', '"\\ude00\\ud83d"'];
const ijsonBody = (base: string): fc.Arbitrary<BodyCase> =>
  fc.tuple(fc.constantFrom(...BAD_NUMBERS, ...BAD_STRINGS), fc.constantFrom(...BAD_STRINGS), fc.nat(5)).map(([value, badName, where]) => {
    const text = [
      `${base},"x":${value}}`,
      `${base},"context":{"k":[1,{"deep":${value}}]}}`,
      `${base},"context":{${badName}:1}}`,
      `${base},"d":1,"d":1}`,
      `${base},"context":{"amount":20,"amount":2000}}`,
      `{"x":${value},${base.slice(1)}}`,
    ][where]!;
    return { kind: "ijson", bytes: enc.encode(text) };
  });

/** Whether the drawn top-level members (those objectText writes) name one member twice: an I-JSON breach JSON.parse hides. */
const duplicateNames = (entries: [string, Val][]) => {
  const names = entries.filter(([, v]) => v !== ABSENT).map(([k]) => k);
  return new Set(names).size !== names.length;
};

/** What JSON.parse's own value shows to break I-JSON (duplicates and inexact numbers it hides). */
function visibleIJsonBreach(root: unknown): boolean {
  // Iterative: the fuzzer nests arrays 30 000 deep.
  const stack = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === "string" && !value.isWellFormed()) return true;
    if (typeof value === "number" && (!Number.isFinite(value) || Math.abs(value) > Number.MAX_SAFE_INTEGER)) return true;
    if (Array.isArray(value)) stack.push(...value);
    else if (value !== null && typeof value === "object") {
      for (const k of Object.keys(value)) {
        if (!k.isWellFormed()) return true;
        stack.push((value as any)[k]);
      }
    }
  }
  return false;
}

function parsedObject(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    // ignoreBOM: a byte order mark stays in the text, where JSON.parse refuses it, as the service does.
    const v = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes));
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

const IJSON_REFUSED = /^Invalid field [^\s].*: /;

/** The answer the contract demands before the route's own fields are looked at, or null to go on. */
function frontOracle(key: KeyCase, ct: CtCase, bytes: Uint8Array | null, checkBody: boolean, kind = ""): { status: number; error: string | RegExp } | null {
  if (key.kind === "missing") return { status: 401, error: "Missing API key" };
  if (key.kind === "invalid") return { status: 403, error: "Invalid API key" };
  if (!checkBody) return null;
  if (!ct.json) return { status: 415, error: "Unsupported Media Type" };
  if (bytes && bytes.length > LIMIT) return { status: 413, error: "Payload too large" };
  const parsed = bytes ? parsedObject(bytes) : null;
  if (!bytes || parsed === null) return { status: 400, error: "Malformed JSON body" };
  // I-JSON is checked on the whole body before any field (issue 11).
  if (kind === "ijson" || visibleIJsonBreach(parsed)) return { status: 400, error: IJSON_REFUSED };
  return null;
}

const own = (o: Record<string, unknown>, f: string) => (Object.hasOwn(o, f) ? o[f] : undefined);
const missingOf = (o: Record<string, unknown>, fields: string[]) => fields.filter((f) => own(o, f) === undefined || own(o, f) === null);
const boundedOk = (v: unknown, max = 256) => typeof v === "string" && v.length > 0 && v.length <= max;
/** agent_id and action: bounded, no NUL; an agent_id is not a URL dot segment (issue 11). */
const identifierOk = (v: unknown, agentId = false) => boundedOk(v) && !(v as string).includes("\u0000") && !(agentId && (v === "." || v === ".."));

function expectOracle(r: Reply, want: { status: number; error?: string | RegExp }) {
  const got = { status: r.status, error: r.json?.error };
  if (want.error instanceof RegExp) {
    expect(got.status).toBe(want.status);
    expect(String(got.error)).toMatch(want.error);
  } else if (want.error !== undefined) expect(got).toEqual({ status: want.status, error: want.error });
  else expect(got.status).toBe(want.status);
}

// ------------------------------------------------------------------ suites

describe("POST /v1/verify/challenge", () => {
  const structured = fc.tuple(textField(256), textField(256), contextField, extraFields, fc.boolean()).map(([agent_id, action, context, extra, extraFirst]) => {
    const fields: [string, Val][] = [
      ["agent_id", agent_id],
      ["action", action],
      ["context", context],
    ];
    const entries = extraFirst
      ? [...extra.filter(([k]) => !["agent_id", "action", "context"].includes(k)), ...fields]
      : [...fields, ...extra.filter(([k]) => !["agent_id", "action", "context"].includes(k))];
    return { kind: duplicateNames(entries as [string, Val][]) ? "ijson" : "fields", bytes: enc.encode(objectText(entries as [string, Val][])) };
  });

  test("random requests: the oracle's answer, nothing stored unless 200, no pollution", async () => {
    await fc.assert(
      fc.asyncProperty(
        keyArb(),
        ctArb,
        fc.oneof({ weight: 3, arbitrary: structured }, junkBody, ijsonBody('{"agent_id":"agent-1","action":"buy"')),
        async (key, ct, body) => {
          count("POST /v1/verify/challenge");
          const usageBefore = (await h.store.usage(keyA.split("_")[1]!))!;
          const pendingBefore = await h.store.countPending(h.clock.now());
          const r = await send("POST", "/v1/verify/challenge", { keys: key.headers, contentType: ct.value, body: body.bytes });
          expectWellFormed(r);

          let want = frontOracle(key, ct, body.bytes, true, body.kind);
          const o = want ? null : parsedObject(body.bytes)!;
          if (o) {
            const missing = missingOf(o, ["agent_id", "action"]);
            const context = own(o, "context");
            if (missing.length) want = { status: 400, error: `Missing required fields: ${missing.join(", ")}` };
            else if (!identifierOk(o.agent_id, true)) want = { status: 400, error: "Invalid field agent_id" };
            else if (!identifierOk(o.action)) want = { status: 400, error: "Invalid field action" };
            else if (context !== undefined && (typeof context !== "object" || context === null || Array.isArray(context)))
              want = { status: 400, error: "Invalid field context" };
            else if (context !== undefined && (enc.encode(JSON.stringify(context)).length > 16384 || depthOf(context) > 16))
              want = { status: 400, error: "Invalid field context" };
            else if (context !== undefined && holdsNul(context)) want = { status: 400, error: "Invalid field context" }; // issue 18
          }
          if (typeof want?.error === "string" && want.error.startsWith("Invalid field"))
            expectOracle(r, { status: 400, error: new RegExp(`^${want.error}: `) });
          else if (want) expectOracle(r, want);
          else if (key.kind === "foreign")
            expect(r.status).toBe(200); // any valid key may ask for a challenge
          else expect(r.status).toBe(200);

          const usageAfter = (await h.store.usage(keyA.split("_")[1]!))!;
          const pendingAfter = await h.store.countPending(h.clock.now());
          if (r.status === 200) {
            expect(pendingAfter).toBe(pendingBefore + 1);
            expect(usageAfter.challenges).toBe(usageBefore.challenges + (key.kind === "valid" ? 1 : 0));
            const stored = await h.store.getChallenge(r.json.challenge_id);
            expect(stored?.agentId).toBe(o!.agent_id as string);
            expect(stored?.action).toBe(o!.action as string);
            expect(stored?.nonce).toBe(r.json.nonce);
            expect(r.json.expires_in).toBe(300);
          } else {
            expect(pendingAfter).toBe(pendingBefore);
            expect(usageAfter).toEqual(usageBefore);
          }
          expectPrototypeClean(protoBefore);
        },
      ),
      fuzzParams(),
    );
  });

  test("a body of exactly 64 KiB is read (then judged on its fields); one byte more is 413", async () => {
    const at = (n: number) => enc.encode(`{"agent_id":"${"a".repeat(n - 28)}","action":"b"}`);
    expect(at(LIMIT).length).toBe(LIMIT);
    const exact = await send("POST", "/v1/verify/challenge", { keys: [keyA], contentType: "application/json", body: at(LIMIT) });
    expect(exact.status).toBe(400);
    expect(exact.json.error).toMatch(/^Invalid field agent_id: /);
    const over = await send("POST", "/v1/verify/challenge", { keys: [keyA], contentType: "application/json", body: at(LIMIT + 1) });
    expect(over.status).toBe(413);
    expect(over.json.error).toBe("Payload too large");
  });

  test("a lying or odd Content-Length never breaks the size check", async () => {
    for (const cl of ["999999999", "-1", "abc", "1e9", "0"]) {
      const small = await send("POST", "/v1/verify/challenge", {
        keys: [keyA],
        contentType: "application/json",
        body: enc.encode('{"agent_id":"a","action":"b"}'),
        extra: { "content-length": cl },
      });
      expectWellFormed(small);
      expect([200, 413]).toContain(small.status);
    }
  });

  test("a chunked body without Content-Length is cut off after 64 KiB, not buffered whole", async () => {
    // 64 chunks of 64 KiB (4 MiB) offered; a bounded reader stops pulling soon after the limit.
    let pulled = 0;
    const chunk = enc.encode("a".repeat(LIMIT));
    const stream = new ReadableStream<Uint8Array>(
      {
        start(c) {
          c.enqueue(enc.encode('{"agent_id":"'));
        },
        pull(c) {
          if (pulled >= 64) return c.close();
          pulled++;
          c.enqueue(chunk);
        },
      },
      { highWaterMark: 0 },
    );
    const r = await send("POST", "/v1/verify/challenge", { keys: [keyA], contentType: "application/json", body: stream });
    expect(r.status).toBe(413);
    expect(r.json.error).toBe("Payload too large");
    // Read ≤ limit + a chunk or two, then stop. Today the whole 4 MiB is pulled
    // (request.arrayBuffer() before the size check): BUG, see docs/reliability.md.
    expect({ chunksPulled: pulled }).toEqual({ chunksPulled: Math.min(pulled, 3) });
  });
});

describe("POST /v1/verify/proof", () => {
  let challengeId = "";

  const cidField: fc.Arbitrary<Val | "CURRENT"> = fc.oneof(
    { weight: 6, arbitrary: fc.constant("CURRENT" as const) },
    fc.constant(ABSENT),
    fc.constant(null),
    fc.constant(""),
    fc.string({ maxLength: 40 }),
    fc.string({ maxLength: 22 }).map((s) => `ch_${s}`),
    fc.constantFrom("CURRENT+x", "CURRENT-upper", "CURRENT-trunc", "CURRENT-ws"),
    fc.constant("c".repeat(257)),
    fc.constantFrom("' OR 1=1 --", "%00", "../../etc/passwd", "ch_\u0000", "\u202e"),
    wrongType,
  );
  const proofText = fc.oneof(
    fc.string({ unit: "binary", minLength: 1, maxLength: 200 }),
    fc.base64String({ minLength: 4, maxLength: 400 }).map((s) => s.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") || "AA"),
    fc.uint8Array({ minLength: 256, maxLength: 256 }).map((b) => Buffer.from(b).toString("base64url")),
    fc.tuple(fc.array(fc.bigInt({ min: 0n, max: 2n ** 256n }), { minLength: 8, maxLength: 8 }), fc.boolean()).map(([n, withMeta]) =>
      JSON.stringify({
        pi_a: [String(n[0]), String(n[1]), "1"],
        pi_b: [
          [String(n[2]), String(n[3])],
          [String(n[4]), String(n[5])],
          ["1", "0"],
        ],
        pi_c: [String(n[6]), String(n[7]), "1"],
        ...(withMeta ? { protocol: "groth16", curve: "bn128" } : {}),
      }),
    ),
    nastyObject.map((o) => ser(o)),
  );
  const proofField: fc.Arbitrary<Val> = fc.oneof(
    { weight: 5, arbitrary: proofText },
    fc.constant(ABSENT),
    fc.constant(null),
    fc.constant(""),
    fc.integer({ min: 8193, max: 30000 }).map((n) => "p".repeat(n)),
    wrongType,
  );
  const sigField: fc.Arbitrary<Val> = fc.oneof(
    { weight: 4, arbitrary: fc.constant(ABSENT) },
    fc.constant(null),
    fc.string({ maxLength: 256 }),
    fc.integer({ min: 257, max: 2000 }).map((n) => "s".repeat(n)),
    wrongType,
  );

  test("random requests: the oracle's answer; the challenge stays pending unless the proof is judged", async () => {
    await fc.assert(
      fc.asyncProperty(
        keyArb(),
        ctArb,
        fc.oneof({ weight: 4, arbitrary: fc.tuple(cidField, proofField, sigField, extraFields) }, junkBody, ijsonBody('{"challenge_id":"CURRENT","proof":"p"')),
        async (key, ct, bodyDraw) => {
          count("POST /v1/verify/proof");
          const created = await h.call("POST", "/v1/verify/challenge", { key: keyA, body: { agent_id: "agent-1", action: "buy" } });
          expect(created.status).toBe(200);
          challengeId = created.body.challenge_id;
          const usageBefore = (await h.store.usage(keyA.split("_")[1]!))!;

          let bytes: Uint8Array;
          let duplicated = false;
          if (Array.isArray(bodyDraw)) {
            const [cid, proof, sig, extra] = bodyDraw;
            const cidValue =
              cid === "CURRENT"
                ? challengeId
                : cid === "CURRENT+x"
                  ? `${challengeId}x`
                  : cid === "CURRENT-upper"
                    ? challengeId.toUpperCase()
                    : cid === "CURRENT-trunc"
                      ? challengeId.slice(0, -1)
                      : cid === "CURRENT-ws"
                        ? ` ${challengeId}`
                        : cid;
            const names = ["challenge_id", "proof", "agent_signature"];
            const entries: [string, Val][] = [
              ["challenge_id", cidValue],
              ["proof", proof],
              ["agent_signature", sig],
              ...(extra.filter(([k]) => !names.includes(k)) as [string, Val][]),
            ];
            duplicated = duplicateNames(entries);
            bytes = enc.encode(objectText(entries));
          } else if (bodyDraw.kind === "ijson") bytes = enc.encode(new TextDecoder().decode(bodyDraw.bytes).replace('"CURRENT"', JSON.stringify(challengeId)));
          else bytes = bodyDraw.bytes;
          const kind = Array.isArray(bodyDraw) ? (duplicated ? "ijson" : "fields") : bodyDraw.kind;

          const r = await send("POST", "/v1/verify/proof", { keys: key.headers, contentType: ct.value, body: bytes });
          expectWellFormed(r);

          let want: { status: number; error: string | RegExp } | null = frontOracle(key, ct, bytes, true, kind);
          let judged = false;
          if (!want) {
            const o = parsedObject(bytes)!;
            const missing = missingOf(o, ["challenge_id", "proof"]);
            const sig = own(o, "agent_signature");
            if (missing.length) want = { status: 400, error: `Missing required fields: ${missing.join(", ")}` };
            else if (!boundedOk(o.challenge_id)) want = { status: 400, error: /^Invalid field challenge_id: / };
            else if (!boundedOk(o.proof, 8192)) want = { status: 400, error: /^Invalid field proof: / };
            else if (sig !== undefined && sig !== null && (typeof sig !== "string" || sig.length > 256))
              want = { status: 400, error: /^Invalid field agent_signature: / };
            else if (o.challenge_id !== challengeId) want = { status: 404, error: "Challenge not found" };
            else if (key.kind === "foreign") want = { status: 403, error: "Unauthorized access to session" };
            else {
              want = { status: 400, error: "Proof verification failed" };
              judged = true;
            }
          }
          expectOracle(r, want);

          const after = await h.store.getChallenge(challengeId);
          const usageAfter = (await h.store.usage(keyA.split("_")[1]!))!;
          if (judged) {
            expect(r.json.verified).toBe(false);
            expect(REASONS.has(r.json.reason)).toBe(true);
            expect(after?.status).toBe("failed");
            expect(usageAfter.failed).toBe(usageBefore.failed + 1);
          } else {
            expect(after?.status).toBe("pending");
            expect(usageAfter).toEqual(usageBefore);
          }
          expectPrototypeClean(protoBefore);
        },
      ),
      fuzzParams(),
    );
  });
});

describe("GET /v1/verify/status/:sessionId", () => {
  const NASTY_SEGMENTS = [
    "..",
    ".",
    "%2e%2e",
    "%2E%2E%2F%2E%2E%2Fusage",
    "..%2F..%2Fusage",
    "%00",
    "ch_%00",
    "%0a",
    "%0d%0a",
    "%20",
    "a%2Fb",
    "%C3%A9",
    "%F0%9F%98%80",
    "'%20OR%201=1--",
    "%22",
    "%3Cscript%3E",
    "%25",
    "%25%32%65",
    "ch_",
    "a".repeat(257),
    "a".repeat(20000),
    "%E2%80%AE",
    "null",
    "undefined",
    "__proto__",
    "constructor",
  ];
  test("random and hostile ids: own → 200, foreign → 403, else 404; auth first", async () => {
    const own = (await h.call("POST", "/v1/verify/challenge", { key: keyA, body: { agent_id: "agent-1", action: "look" } })).body.challenge_id as string;
    const foreign = (await h.call("POST", "/v1/verify/challenge", { key: keyB, body: { agent_id: "agent-1", action: "look" } })).body.challenge_id as string;
    const segment = fc.oneof(
      {
        weight: 3,
        arbitrary: fc
          .string({ unit: "grapheme", maxLength: 60 })
          .filter((s) => s !== "" && s !== "." && s !== "..")
          .map((s) => ({ path: encodeURIComponent(s), id: s as string | null })),
      },
      fc.constant({ path: "OWN", id: "OWN" as string | null }),
      fc.constant({ path: "FOREIGN", id: "FOREIGN" as string | null }),
      fc.constantFrom(...NASTY_SEGMENTS).map((s) => ({ path: s, id: null as string | null })),
      fc.string({ unit: "grapheme-ascii", maxLength: 30 }).map((q) => ({ path: `OWN?${encodeURIComponent(q)}#frag`, id: "OWN" as string | null })),
    );
    await fc.assert(
      fc.asyncProperty(keyArb(), segment, async (key, seg) => {
        count("GET /v1/verify/status/:id");
        const path = seg.path.replace("OWN", own).replace("FOREIGN", foreign);
        const id = seg.id === "OWN" ? own : seg.id === "FOREIGN" ? foreign : seg.id;
        const r = await send("GET", `/v1/verify/status/${path}`, { keys: key.headers });
        expectWellFormed(r, [path, decodeURIComponentSafe(path)]);
        const pathname = new URL(`${BASE}/v1/verify/status/${path}`).pathname;
        if (!/^\/v1\/verify\/status\/[^/]+$/.test(pathname)) {
          // The URL resolved elsewhere (dot segments): whatever route it names, answered like any request to it.
          expect([200, 401, 403, 404]).toContain(r.status);
          return;
        }
        const want = frontOracle(key, { json: true, value: null }, null, false);
        if (want) return expectOracle(r, want);
        if (id === own && key.kind === "valid") {
          expect(r.status).toBe(200);
          expect(r.json.session_id).toBe(own);
          expect(r.json.status).toBe("pending");
        } else if ((id === own && key.kind === "foreign") || (id === foreign && key.kind === "valid"))
          expectOracle(r, { status: 403, error: "Unauthorized access to session" });
        else if (id === foreign && key.kind === "foreign") expect(r.status).toBe(200);
        else expectOracle(r, { status: 404, error: "Session not found" });
        expectPrototypeClean(protoBefore);
      }),
      fuzzParams(),
    );
  });

  // Found by the fuzzer (raw percent signs in the path): Elysia fails to
  // decode the parameter and app.ts answers 400 "Invalid request" — a text
  // outside the closed set, and before authentication.
  test.each(["%", "%E0%A4%A", "%ff%fe", "a%zz", "%C0%AF"])("a malformed percent-escape %p: auth first, then a documented 404", async (segment) => {
    for (const path of [`/v1/verify/status/${segment}`, `/v1/agents/${segment}`]) {
      const anonymous = await send("GET", path);
      expectOracle(anonymous, { status: 401, error: "Missing API key" });
      const bad = await send("GET", path, { keys: [wrongSecret] });
      expectOracle(bad, { status: 403, error: "Invalid API key" });
      const ok = await send("GET", path, { keys: [keyA] });
      expectWellFormed(ok, [path]);
      expect(ok.status).toBe(404);
    }
  });
});

function decodeURIComponentSafe(s: string) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

describe("/v1/agents", () => {
  const registered = new Set<string>(["agent-1"]);
  const goodCommitment = fc.bigInt({ min: 0n, max: R - 1n }).map(String);
  const commitmentField: fc.Arbitrary<Val> = fc.oneof(
    { weight: 4, arbitrary: goodCommitment },
    fc.constant(ABSENT),
    fc.constant(null),
    fc.constant(""),
    fc.bigInt({ min: R, max: 2n ** 300n }).map(String),
    fc.bigInt({ min: 1n, max: R - 1n }).map((n) => `-${n}`),
    fc.bigInt({ min: 0n, max: R - 1n }).map((n) => `0${n}`),
    fc.bigInt({ min: 0n, max: R - 1n }).map((n) => `0x${n.toString(16)}`),
    fc.bigInt({ min: 0n, max: R - 1n }).map((n) => ` ${n}`),
    fc.constantFrom("1e3", "1.0", "+1", "١٢٣", "NaN", "Infinity"),
    fc.constant(COMMITMENT_OF_ZERO), // issue 11: Poseidon(0), a public constant
    fc.integer({ min: 0, max: 1000 }),
    wrongType,
  );
  const signingKey = () => (generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" }) as { x: string }).x;
  const sigKeyField: fc.Arbitrary<Val | "REAL"> = fc.oneof(
    { weight: 4, arbitrary: fc.constant(ABSENT) },
    fc.constant("REAL" as const),
    fc.constant(null),
    fc.constant(""),
    fc.string({ maxLength: 42 }),
    fc.uint8Array({ minLength: 33, maxLength: 64 }).map((b) => Buffer.from(b).toString("base64url")),
    fc
      .uint8Array({ minLength: 32, maxLength: 32 })
      .map((b) => `${Buffer.from(b).toString("base64")}`)
      .filter((s) => /[+/=]/.test(s)),
    wrongType,
  );
  const agentIdField = fc.oneof(
    { weight: 5, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 30 }) },
    fc.constantFrom("agent-1", "__proto__", "constructor"),
    textField(256),
  );

  // Issue 18: mandates with U+0000 nested in them, and principals' JWSs with
  // out-of-range iats and duplicate members in header or payload.
  const principal = createPrincipal();
  const b64 = (text: string) => Buffer.from(text).toString("base64url");
  const jwsOf = (header: string, payload: string) => {
    const input = `${b64(header)}.${b64(payload)}`;
    return `${input}.${sign(null, Buffer.from(input), privateKeyFromSeed(principal.principal_secret)).toString("base64url")}`;
  };
  const mandateText = fc.oneof(fc.string({ unit: "binary", minLength: 1, maxLength: 10 }), withNul(fc.string({ maxLength: 8 })));
  const plainMandate = fc
    .tuple(mandateText, mandateText, fc.constantFrom("EUR", "USD"))
    .map(([action, limitAction, currency]) => ({ actions: [action], limits: [{ action: limitAction, currency, max_amount: "10.00" }] }));
  type IatCase = { kind: "ok" | "ahead" | "huge" | "negative"; text: (now: number) => string };
  const iatArb: fc.Arbitrary<IatCase> = fc.oneof(
    fc.nat(1_000_000).map((back) => ({ kind: "ok" as const, text: (now: number) => String(now + 300 - back) })),
    fc.integer({ min: 301, max: 1_000_000_000 }).map((ahead) => ({ kind: "ahead" as const, text: (now: number) => String(now + ahead) })),
    fc
      .constantFrom("9223372036854775808", "9223372036854775807", "1e300", "18446744073709551616", "9007199254740993")
      .map((t) => ({ kind: "huge" as const, text: () => t })),
    fc.constant({ kind: "negative" as const, text: () => "-1" }),
  );
  const signedDraw = fc.record({ iat: iatArb, dup: fc.constantFrom("none", "none", "header", "payload", "deep"), mandate: plainMandate });
  const mandateDraw = fc.oneof(
    plainMandate.map((mandate) => ({ form: "plain" as const, mandate })),
    signedDraw.map((signed) => ({ form: "signed" as const, ...signed })),
  );
  let mandateAgents = 0;

  test("issue 18: registrations with nested NUL in mandates, out-of-range iats and duplicate JWS members: 400 naming them, never 5xx; a 201 reads back", async () => {
    await fc.assert(
      fc.asyncProperty(mandateDraw, async (draw) => {
        count("POST /v1/agents (mandates)");
        const agentId = `mandate-${mandateAgents++}`;
        const keyId = keyA.split("_")[1]!;
        let body: Record<string, unknown>;
        let want: { status: number; error?: RegExp };
        if (draw.form === "plain") {
          body = { agent_id: agentId, identity_commitment: "5", mandate: draw.mandate };
          want = holdsNul(draw.mandate) ? { status: 400, error: /^Invalid field mandate: .* must not contain U\+0000 \(NUL\)$/ } : { status: 201 };
        } else {
          const now = Math.floor(h.clock.now() / 1000);
          const header = draw.dup === "header" ? '{"alg":"EdDSA","typ":"zkagent-mandate+jwt","alg":"EdDSA"}' : '{"alg":"EdDSA","typ":"zkagent-mandate+jwt"}';
          let mandate = JSON.stringify(draw.mandate);
          if (draw.dup === "deep") mandate = mandate.replace('"max_amount":"10.00"', '"max_amount":"1.00","max_amount":"10.00"');
          if (draw.dup === "payload") mandate = `{"actions":["anything"]},"mandate":${mandate}`;
          const payload = `{"key_id":"${keyId}","agent_id":"${agentId}","identity_commitment":"5","mandate":${mandate},"iat":${draw.iat.text(now)}}`;
          body = { agent_id: agentId, identity_commitment: "5", principal_key: principal.principal_key, mandate: { mandate_jws: jwsOf(header, payload) } };
          if (draw.dup !== "none") want = { status: 400, error: /^Invalid field mandate_jws: (protected header|payload) is not I-JSON at .*more than once/ };
          else if (draw.iat.kind === "huge") want = { status: 400, error: /^Invalid field mandate_jws: payload is not I-JSON at iat: / };
          else if (draw.iat.kind === "negative") want = { status: 400, error: /^Invalid field mandate_jws: payload must be exactly/ };
          else if (draw.iat.kind === "ahead") want = { status: 400, error: /^Invalid field mandate_jws: iat must be whole Unix seconds/ };
          else if (holdsNul(draw.mandate)) want = { status: 400, error: /^Invalid field mandate_jws: mandate .* must not contain U\+0000 \(NUL\)$/ };
          else want = { status: 201 };
        }
        const r = await send("POST", "/v1/agents", { keys: [keyA], contentType: "application/json", body: enc.encode(JSON.stringify(body)) });
        expectWellFormed(r);
        expectOracle(r, want);
        const back = await send("GET", `/v1/agents/${agentId}`, { keys: [keyA] });
        expect(back.status).toBe(want.status === 201 ? 200 : 404);
        if (want.status === 201) {
          registered.add(agentId);
          expect(back.json.mandate).toEqual(draw.mandate);
        }
      }),
      fuzzParams(),
    );
  });

  test("POST random registrations: the oracle's answer; a 201 is readable back", async () => {
    await fc.assert(
      fc.asyncProperty(
        keyArb(),
        ctArb,
        fc.oneof(
          { weight: 3, arbitrary: fc.tuple(agentIdField, commitmentField, sigKeyField, extraFields) },
          junkBody,
          ijsonBody('{"agent_id":"fz","identity_commitment":"5"'),
        ),
        async (key, ct, draw) => {
          count("POST /v1/agents");
          let bytes: Uint8Array;
          let agentsDuplicated = false;
          if (Array.isArray(draw)) {
            const [agentId, commitment, sig, extra] = draw;
            const names = ["agent_id", "identity_commitment", "signing_key"];
            const entries: [string, Val][] = [
              ["agent_id", agentId],
              ["identity_commitment", commitment],
              ["signing_key", sig === "REAL" ? signingKey() : sig],
              ...(extra.filter(([k]) => !names.includes(k)) as [string, Val][]),
            ];
            agentsDuplicated = duplicateNames(entries);
            bytes = enc.encode(objectText(entries));
          } else bytes = draw.bytes;
          const r = await send("POST", "/v1/agents", { keys: key.headers, contentType: ct.value, body: bytes });
          expectWellFormed(r);
          let want: { status: number; error?: string | RegExp } | null = frontOracle(
            key,
            ct,
            bytes,
            true,
            Array.isArray(draw) ? (agentsDuplicated ? "ijson" : "fields") : draw.kind,
          );
          if (!want && key.kind === "valid") {
            const o = parsedObject(bytes)!;
            const missing = missingOf(o, ["agent_id", "identity_commitment"]);
            const c = o.identity_commitment;
            const s = own(o, "signing_key");
            if (missing.length) want = { status: 400, error: `Missing required fields: ${missing.join(", ")}` };
            else if (!identifierOk(o.agent_id, true)) want = { status: 400, error: /^Invalid field agent_id: / };
            else if (typeof c !== "string" || !/^(0|[1-9][0-9]*)$/.test(c) || BigInt(c) >= R || c === COMMITMENT_OF_ZERO)
              want = { status: 400, error: /^Invalid field identity_commitment: / };
            else if (s !== undefined && s !== null && (typeof s !== "string" || !/^[A-Za-z0-9_-]{43}$/.test(s)))
              want = { status: 400, error: /^Invalid field signing_key: / };
            else if (registered.has(o.agent_id as string)) want = { status: 409, error: "Agent already registered" };
            else {
              want = { status: 201 };
              registered.add(o.agent_id as string);
            }
            if (want.status === 201) {
              expectOracle(r, want);
              const back = await send("GET", `/v1/agents/${encodeURIComponent(o.agent_id as string)}`, { keys: [keyA] });
              expect(back.status).toBe(200);
              expect(back.json.identity_commitment).toBe(c as string);
            } else if (r.status === 400 && want.status === 400 && String(want.error).includes("signing_key")) {
              expect(r.json.error).toMatch(/^Invalid field signing_key: /);
            } else expectOracle(r, want);
          } else if (want) expectOracle(r, want);
          else expect([201, 400, 409]).toContain(r.status); // key B: its own namespace
          expectPrototypeClean(protoBefore);
        },
      ),
      fuzzParams(),
    );
  });

  test("GET and DELETE random agent ids: 200 for a registered one, documented 404 otherwise", async () => {
    await fc.assert(
      fc.asyncProperty(
        keyArb(),
        fc.constantFrom("GET", "DELETE"),
        fc.oneof(
          fc.string({ unit: "grapheme", minLength: 1, maxLength: 60 }),
          fc.constantFrom("agent-1", "__proto__", "constructor", "%00", "..", "a".repeat(5000)),
        ),
        async (key, method, id) => {
          count(`${method} /v1/agents/:id`);
          const path = `/v1/agents/${encodeURIComponent(id)}`;
          const r = await send(method === "DELETE" && id === "agent-1" ? "GET" : method, path, { keys: key.headers }); // keep agent-1 alive for the other suites
          expectWellFormed(r, [path, id]);
          if (!/^\/v1\/agents\/[^/]+$/.test(new URL(BASE + path).pathname)) return void expect([200, 401, 403, 404]).toContain(r.status); // dot segments resolved elsewhere
          const want = frontOracle(key, { json: true, value: null }, null, false);
          if (want) return expectOracle(r, want);
          if (registered.has(id) && key.kind === "valid") expect(r.status).toBe(200);
          else if (id === "agent-1")
            expect(r.status).toBe(200); // key B registered its own agent-1
          else if (!registered.has(id)) expectOracle(r, { status: 404, error: "Agent not found" });
        },
      ),
      fuzzParams(),
    );
  });
});

describe("GET /v1/usage", () => {
  test("random keys and query strings: 200 with the caller's counters, or 401/403", async () => {
    await fc.assert(
      fc.asyncProperty(keyArb(), fc.string({ maxLength: 40 }), async (key, query) => {
        count("GET /v1/usage");
        const r = await send("GET", `/v1/usage?${encodeURIComponent(query)}=${encodeURIComponent(query)}`, { keys: key.headers });
        expectWellFormed(r);
        const want = frontOracle(key, { json: true, value: null }, null, false);
        if (want) return expectOracle(r, want);
        expect(r.status).toBe(200);
        const expected = key.kind === "valid" ? keyA : keyB;
        expect(r.json.key_id).toBe(expected.split("_")[1]);
        expect(r.json.challenges).toBe((await h.store.usage(expected.split("_")[1]!))!.challenges);
      }),
      fuzzParams(),
    );
  });
});

describe("odd methods on every route", () => {
  const ROUTES: [string, string[]][] = [
    ["/v1/verify/challenge", ["POST"]],
    ["/v1/verify/proof", ["POST"]],
    ["/v1/verify/status/ch_x", ["GET"]],
    ["/v1/agents", ["POST"]],
    ["/v1/agents/agent-1", ["GET", "DELETE"]],
    ["/v1/usage", ["GET"]],
  ];
  test("undeclared methods: route-level 404 (HEAD of a GET route may answer as GET), nothing changes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.constantFrom("PUT", "PATCH", "OPTIONS", "HEAD", "DELETE", "GET", "POST"),
        keyArb(),
        async ([path, declared], method, key) => {
          if (declared.includes(method)) return;
          count(`${method} (undeclared)`);
          const pending = await h.store.countPending(h.clock.now());
          const agent = await h.store.getAgent(keyA.split("_")[1]!, "agent-1");
          const r = await send(method, path, {
            keys: key.headers,
            contentType: "application/json",
            body: method === "GET" || method === "HEAD" ? null : enc.encode('{"agent_id":"agent-1","action":"x"}'),
          });
          expectWellFormed(r, [path], method);
          if (method === "HEAD" && declared.includes("GET")) expect([200, 401, 403, 404]).toContain(r.status);
          else {
            expect(r.status).toBe(404);
            if (method !== "HEAD") expect(r.json.error).toBe("Not found");
          }
          expect(await h.store.countPending(h.clock.now())).toBe(pending);
          expect(await h.store.getAgent(keyA.split("_")[1]!, "agent-1")).toEqual(agent);
        },
      ),
      fuzzParams(Math.max(60, Math.round(FUZZ_RUNS / 2))),
    );
  });

  test("Object.prototype is untouched after every suite; figures", () => {
    expectPrototypeClean(protoBefore);
    console.log(`[http.fuzz] cases per endpoint: ${JSON.stringify(runsPerEndpoint)}`);
    expect(Object.keys(runsPerEndpoint).length).toBeGreaterThanOrEqual(7);
  });
});
