// Shared pieces of the fuzz suites: the seed and size (printed, so a failure
// can be replayed), the closed set of error texts the service may answer
// with, and the "no internals in a body" check.
import { expect } from "bun:test";

/** Runs per property. CI default is small; FUZZ_RUNS=5000 is the long setting (docs/reliability.md). */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 150);
/** Fixed by default so CI is reproducible; FUZZ_SEED=random draws a new one (printed). */
export const FUZZ_SEED = process.env.FUZZ_SEED === "random" ? (Math.random() * 2 ** 31) | 0 : Number(process.env.FUZZ_SEED ?? 20250605);

export const fuzzParams = (runs = FUZZ_RUNS) => ({ seed: FUZZ_SEED, numRuns: runs, endOnFailure: true });

let announced = false;
export function announce(suite: string) {
  if (announced) return;
  announced = true;
  console.log(`[${suite}] fast-check seed=${FUZZ_SEED} runs/property=${FUZZ_RUNS} (replay: FUZZ_SEED=${FUZZ_SEED} FUZZ_RUNS=${FUZZ_RUNS})`);
}

/** The `error` texts of src/errors.ts (docs/api.md, "Errors") and the route-level 404. */
export const DOCUMENTED_ERRORS = new Set([
  "Missing API key",
  "Invalid API key",
  "Unsupported Media Type",
  "Payload too large",
  "Malformed JSON body",
  "Challenge not found",
  "Circuit not found",
  "Circuit not served",
  "Session not found",
  "Unauthorized access to session",
  "Challenge expired",
  "Challenge already used",
  "Proof verification failed",
  "Rate limit exceeded",
  "Agent not found",
  "Agent already registered",
  "Not found",
  // Issue 11.
  "Too many pending challenges",
  "Too many agents",
]);
export const MISSING_FIELDS = /^Missing required fields: [a-z_]+(, [a-z_]+)*$/;
/** The field is a path since issue 11 (I-JSON): `context.items[2].qty`, `context["a b"]`, `Idempotency-Key`. */
export const INVALID_FIELD = /^Invalid field \S.*?: \S/;

export const isDocumentedError = (text: unknown): boolean =>
  typeof text === "string" && (DOCUMENTED_ERRORS.has(text) || MISSING_FIELDS.test(text) || INVALID_FIELD.test(text));

export { REASONS } from "../support/reasons";

const INTERNALS =
  /\bat [^\s]+ \(|\bat .+:\d+:\d+|\.(ts|js):\d+|node_modules|\/work\/|\/src\/|\bError:|TypeError|RangeError|SyntaxError|SQLITE|sqlite|\bSELECT\b|\bINSERT\b|\bUPDATE\b.*\bSET\b|constraint failed|bun:|undefined is not|Cannot read/;

/**
 * A body must not leak internals. `echoed` is user input the service is
 * allowed to reflect (the route-level 404 names the requested path); it is
 * removed before the check so a random path containing "SELECT" is no finding.
 */
export function expectNoInternals(text: string, echoed: string[] = []) {
  let scrubbed = text;
  for (const e of echoed) if (e) scrubbed = scrubbed.split(e).join("");
  expect(scrubbed).not.toMatch(INTERNALS);
}

/** Object.prototype as it is before any request: compared after each property. */
export const prototypeSnapshot = () => Object.getOwnPropertyNames(Object.prototype).sort().join(",");
export function expectPrototypeClean(snapshot: string) {
  expect(prototypeSnapshot()).toBe(snapshot);
  const probe: any = {};
  for (const name of ["polluted", "isAdmin", "x", "p", "a"]) expect(probe[name]).toBeUndefined();
}
