// The mandate: what an agent may do. One TypeBox schema is both the
// validation and the type. Every member is optional, and members the schema
// does not know are refused by name: a misspelt `max_totl` must never leave
// a mandate silently wider than its author meant.
import { type Static, Type } from "@sinclair/typebox";
import { Value, ValueErrorType } from "@sinclair/typebox/value";
import { storedTextProblem } from "../identity/identifiers";
import { AMOUNT_PATTERN, MAX_FRACTION_DIGITS, MAX_INTEGER_DIGITS } from "./decimal";
import { PERIODS } from "./period";

const Text = Type.String({ minLength: 1, maxLength: 256 });
const Amount = Type.String({ pattern: AMOUNT_PATTERN, description: 'Decimal string, e.g. "50.00"; no sign, no exponent' });
const Currency = Type.String({ pattern: "^[A-Z]{3}$", description: "ISO 4217 code" });
const Timestamp = Type.String({ description: "RFC 3339 date-time, e.g. 2026-11-21T00:00:00Z" });

export const mandateLimitSchema = Type.Object(
  {
    action: Type.Optional(Text),
    currency: Type.Optional(Currency),
    max_amount: Type.Optional(Amount),
    max_total: Type.Optional(Amount),
    max_count: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
    period: Type.Optional(Type.Union(PERIODS.map((period) => Type.Literal(period)))),
  },
  { additionalProperties: false },
);

export const mandateSchema = Type.Object(
  {
    actions: Type.Optional(Type.Array(Text, { maxItems: 256 })),
    merchants: Type.Optional(Type.Array(Text, { maxItems: 1024 })),
    valid_from: Type.Optional(Timestamp),
    valid_until: Type.Optional(Timestamp),
    limits: Type.Optional(Type.Array(mandateLimitSchema, { maxItems: 64 })),
  },
  { additionalProperties: false },
);

export type Mandate = Static<typeof mandateSchema>;
export type MandateLimit = Static<typeof mandateLimitSchema>;

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/;

/** Unix ms of an RFC 3339 date-time with at most millisecond precision, or null. */
export function parseTimestamp(text: string): number | null {
  const match = RFC3339.exec(text);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  // Date.parse would roll 2026-02-30 over into March; a typo must not move a validity bound.
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) return null;
  const offset = match[8]!;
  if (offset !== "Z" && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(4, 6)) > 59)) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

/** "limits[0].max_total" from a JSON pointer "/limits/0/max_total". */
const memberName = (pointer: string): string =>
  pointer
    .split("/")
    .slice(1)
    .map((part, index) => (/^\d+$/.test(part) ? `[${part}]` : `${index === 0 ? "" : "."}${part}`))
    .join("");

/** A mandate, checked against the schema and the rules between its members. */
export function parseMandate(value: unknown): Parsed<Mandate> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, error: "must be a JSON object" };
  const errors = [...Value.Errors(mandateSchema, value)];
  // TypeBox reports each unexpected member with its own path.
  const unexpected = errors.filter((error) => error.type === ValueErrorType.ObjectAdditionalProperties).map((error) => memberName(error.path));
  if (unexpected.length > 0) return { ok: false, error: `unknown members ${[...new Set(unexpected)].join(", ")}` };
  const first = errors[0];
  if (first) return { ok: false, error: `${memberName(first.path) || "mandate"} ${explain(first.path, first.message)}` };
  // Every string it holds is stored and read back (a limit's action and currency become column values): no NUL (issue 18).
  const text = storedTextProblem(value);
  if (text) return { ok: false, error: text };
  const mandate = value as Mandate;

  const from = mandate.valid_from === undefined ? undefined : parseTimestamp(mandate.valid_from);
  const until = mandate.valid_until === undefined ? undefined : parseTimestamp(mandate.valid_until);
  if (from === null) return { ok: false, error: "valid_from must be an RFC 3339 date-time, e.g. 2026-11-21T00:00:00Z" };
  if (until === null) return { ok: false, error: "valid_until must be an RFC 3339 date-time, e.g. 2026-12-21T00:00:00Z" };
  if (from !== undefined && until !== undefined && from >= until) return { ok: false, error: "valid_from must be before valid_until" };

  for (const [index, limit] of (mandate.limits ?? []).entries()) {
    const name = `limits[${index}]`;
    const monetary = limit.max_amount !== undefined || limit.max_total !== undefined;
    const accumulating = limit.max_total !== undefined || limit.max_count !== undefined;
    if (!monetary && limit.max_count === undefined) return { ok: false, error: `${name} needs max_amount, max_total or max_count` };
    if (monetary && limit.currency === undefined) return { ok: false, error: `${name} needs currency with max_amount or max_total` };
    if (accumulating && limit.period === undefined) return { ok: false, error: `${name} needs period (day, week or month) with max_total or max_count` };
    if (!accumulating && limit.period !== undefined) return { ok: false, error: `${name}.period applies only to max_total and max_count` };
  }
  return { ok: true, value: mandate };
}

const EXPLANATIONS: Record<string, string> = {
  max_amount: `must be a decimal string such as "50.00": no sign, no exponent, no leading zeros, at most ${MAX_INTEGER_DIGITS} digits before the point and ${MAX_FRACTION_DIGITS} after`,
  max_total: `must be a decimal string such as "100.00": no sign, no exponent, no leading zeros, at most ${MAX_INTEGER_DIGITS} digits before the point and ${MAX_FRACTION_DIGITS} after`,
  currency: "must be an ISO 4217 code: three capital letters such as EUR",
  period: "must be day, week or month",
  max_count: "must be an integer from 0 to 1000000000",
};

/** The schema's own message, or a plainer one for the members people get wrong. */
function explain(pointer: string, message: string): string {
  const member = pointer.split("/").pop() ?? "";
  return EXPLANATIONS[member] ?? message.charAt(0).toLowerCase() + message.slice(1);
}
