// A member's budget membership: what the group's owner hands it after the
// enrolment (the 201 of POST /v1/groups/{id}/enrolments: leaf, leaf_index,
// salt, terms, statement) and the member's own secret s, whose identity is
// H1(s) (docs/protocol.md, "Terms and the leaf"). Nothing is taken on trust:
// the leaf must be H3(H1(s), H4(TA, TM, H8(payees), τ), salt), and the terms
// in words must be the ones the packed statement holds, so the agent never
// relies on terms its proofs would contradict.
//
// Kept under the agent's cache directory (the rules of src/cache-file.ts:
// 0700 directory, 0600 files written under a name of their own and renamed
// into place, no link followed), one file per (service, group):
//   $XDG_CACHE_HOME/zkagent/budgets/<SHA-256 of service ‖ "\n" ‖ group>.membership.json
// What it hides: the secret, the salt and the terms, from everyone but the
// machine's user. What it reveals, to whoever reads the directory: which
// budgeted groups of which services this user spends from, and its terms.
import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { cacheDir, readCacheFile, writeCacheFile } from "../../cache-file";
import { currencyField, payeeField, serializeOrigin } from "../../budgets/encoding";
import { H1, H4, H8 } from "../../budgets/hash";
import { type BudgetTerms, budgetLeaf, KINDS, type Kind, type PackedTerms, PAYEE_SLOTS } from "../../budgets/terms";
import { parseFieldElement } from "../../identity/field";
import { BudgetSpendError } from "./error";

const FORMAT = "zkagent-budget-membership/1";
const MAX_FILE_BYTES = 64 << 10;

/** A membership as kept on disk (decimal strings throughout). */
export interface MembershipFile {
  format: typeof FORMAT;
  /** The zkagent service's base URL (no trailing slash). */
  service: string;
  group_id: string;
  /** s: never leaves the agent. */
  secret: string;
  identity_commitment: string;
  leaf: string;
  leaf_index: number;
  salt: string;
  terms: EnrolmentTerms;
  statement: { ta: string; tm: string; payees: string[]; mandate: string };
}

/** The enrolment answer's terms in words. */
export interface EnrolmentTerms {
  currency: string;
  min_amount: string;
  max_amount: string;
  budget: string;
  period: "day" | "week" | "month" | null;
  one_time: boolean;
  payees: string[] | null;
  expires_at: string;
}

/** A checked membership: the file, and what the agent proves with. */
export interface Membership {
  file: MembershipFile;
  secret: bigint;
  salt: bigint;
  leaf: bigint;
  terms: BudgetTerms;
  packed: PackedTerms;
}

const MASK64 = (1n << 64n) - 1n;
const wrong = (what: string) => new BudgetSpendError("membership", `the membership ${what}`);

function field(value: unknown, name: string): bigint {
  const parsed = typeof value === "string" ? parseFieldElement(value) : null;
  if (parsed === null) throw wrong(`'s ${name} is not a decimal field element`);
  return parsed;
}

/** The service's base URL as memberships name it: its origin and path, without a trailing slash. */
export function serviceKey(service: string): string {
  let url: URL;
  try {
    url = new URL(service);
  } catch {
    throw new BudgetSpendError("membership", `${JSON.stringify(service)} is not a service URL`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}

/**
 * The membership from the owner's enrolment answer and the member's secret:
 * the leaf recomputed and compared, the words held to the packed statement.
 * BudgetSpendError "membership" naming the first thing wrong.
 */
export function membershipOf(service: string, enrolment: unknown, secretText: string): Membership {
  if (typeof enrolment !== "object" || enrolment === null || Array.isArray(enrolment)) throw wrong(" is not the enrolment's JSON object");
  const e = enrolment as Record<string, unknown>;
  const secret = field(secretText, "secret");
  if (secret === 0n) throw wrong("'s secret is 0, which is public");
  if (typeof e.group_id !== "string" || e.group_id === "") throw wrong(" names no group_id");
  if (!Number.isSafeInteger(e.leaf_index) || (e.leaf_index as number) < 0) throw wrong("'s leaf_index is not a leaf index");
  const statement = e.statement as Record<string, unknown> | undefined;
  if (typeof statement !== "object" || statement === null) throw wrong(" has no statement (ta, tm, payees, mandate)");
  if (!Array.isArray(statement.payees) || statement.payees.length !== PAYEE_SLOTS) throw wrong(`'s statement.payees is not ${PAYEE_SLOTS} slots`);
  const TA = field(statement.ta, "statement.ta");
  const TM = field(statement.tm, "statement.tm");
  const slots = statement.payees.map((slot, i) => field(slot, `statement.payees[${i}]`));
  const mandate = field(statement.mandate, "statement.mandate");
  const salt = field(e.salt, "salt");
  const leaf = field(e.leaf, "leaf");
  const idc = H1(secret);
  if (e.identity_commitment !== undefined && e.identity_commitment !== idc.toString())
    throw wrong(`'s identity_commitment ${String(e.identity_commitment)} is not H1 of this secret (${idc}): the enrolment is for another identity`);
  const TQ = H8(slots);
  const hash = H4(TA, TM, TQ, mandate);
  if (budgetLeaf(idc, hash, salt) !== leaf)
    throw wrong(
      `'s leaf ${leaf} is not H3(idc, H4(ta, tm, H8(payees), mandate), salt) of this secret and statement: refused (a wrong secret, or terms other than the leaf holds)`,
    );
  const terms = termsOfStatement(TA, TM, slots, mandate, e.terms);
  const file: MembershipFile = {
    format: FORMAT,
    service: serviceKey(service),
    group_id: e.group_id,
    secret: secret.toString(),
    identity_commitment: idc.toString(),
    leaf: leaf.toString(),
    leaf_index: e.leaf_index as number,
    salt: salt.toString(),
    terms: e.terms as EnrolmentTerms,
    statement: { ta: TA.toString(), tm: TM.toString(), payees: slots.map(String), mandate: mandate.toString() },
  };
  return { file, secret, salt, leaf, terms, packed: { TA, TM, payees: slots, TQ, mandate, hash } };
}

/** The terms the packed statement holds (what the circuit enforces), held to the words the enrolment gave. */
function termsOfStatement(TA: bigint, TM: bigint, slots: bigint[], mandate: bigint, words: unknown): BudgetTerms {
  if (TA >= 1n << 192n) throw wrong("'s statement.ta is wider than 192 bits");
  if (TM >= 1n << 68n) throw wrong("'s statement.tm is wider than 68 bits");
  const code = Number(TM & 0xff_ffffn);
  const currency = String.fromCharCode((code >> 16) & 0xff, (code >> 8) & 0xff, code & 0xff);
  if (!/^[A-Z]{3}$/.test(currency) || currencyField(currency) !== BigInt(code)) throw wrong("'s statement.tm holds no currency code");
  const kind: Kind = KINDS[Number((TM >> 24n) & 3n)]!;
  const once = ((TM >> 26n) & 1n) === 1n;
  const any = ((TM >> 27n) & 1n) === 1n;
  const expiresAt = Number(TM >> 28n) * 60;
  const max = TA & MASK64;
  const budget = (TA >> 64n) & MASK64;
  const min = TA >> 128n;
  if (typeof words !== "object" || words === null) throw wrong(" has no terms");
  const w = words as Record<string, unknown>;
  let payees: string[] | null = null;
  if (any) {
    if (slots.some((slot) => slot !== 0n)) throw wrong("'s statement allows any payee yet names some");
    if (w.payees !== null) throw wrong("'s terms name payees the statement does not hold");
  } else {
    if (!Array.isArray(w.payees) || w.payees.some((p) => typeof p !== "string" || !serializeOrigin(p).ok)) throw wrong("'s terms.payees are not origins");
    payees = w.payees as string[];
    const mine = payees.map(payeeField).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    while (mine.length < PAYEE_SLOTS) mine.push(0n);
    if (mine.some((slot, i) => slot !== slots[i])) throw wrong("'s terms.payees are not the payees the statement holds");
  }
  const said = {
    currency: w.currency,
    min_amount: w.min_amount,
    max_amount: w.max_amount,
    budget: w.budget,
    period: w.period,
    one_time: w.one_time,
  };
  const held = {
    currency,
    min_amount: min.toString(),
    max_amount: max.toString(),
    budget: budget.toString(),
    period: kind === "lifetime" ? null : kind,
    one_time: once,
  };
  for (const [name, value] of Object.entries(held))
    if (said[name as keyof typeof said] !== value)
      throw wrong(`'s terms.${name} is ${JSON.stringify(said[name as keyof typeof said])}, the statement holds ${JSON.stringify(value)}`);
  return { currency, min, max, budget, kind, once, payees, expiresAt, mandate };
}

/** A membership read back from its file's JSON, checked as a new one is. */
export function parseMembershipFile(value: unknown): Membership {
  if (typeof value !== "object" || value === null || (value as MembershipFile).format !== FORMAT) throw wrong(` file is not ${FORMAT}`);
  const file = value as MembershipFile;
  if (typeof file.service !== "string") throw wrong(" file names no service");
  return membershipOf(file.service, file, file.secret);
}

/** $XDG_CACHE_HOME/zkagent/budgets, or ~/.cache/zkagent/budgets. */
export const defaultBudgetDir = (env: Record<string, string | undefined> = process.env): string => cacheDir("budgets", env);

/** The files of one membership: the membership, its wallet and the wallet's lock. */
export function membershipPaths(dir: string, service: string, groupId: string): { membership: string; wallet: string; lock: string } {
  const name = createHash("sha256")
    .update(`${serviceKey(service)}\n${groupId}`)
    .digest("hex");
  return { membership: join(dir, `${name}.membership.json`), wallet: join(dir, `${name}.wallet.json`), lock: join(dir, `${name}.lock`) };
}

/** Keeps a membership (replacing one of the same service and group). False when it could not be written. */
export function saveMembership(dir: string, membership: Membership): boolean {
  const { membership: path } = membershipPaths(dir, membership.file.service, membership.file.group_id);
  return writeCacheFile(dir, path, [new TextEncoder().encode(`${JSON.stringify(membership.file, null, 1)}\n`)]);
}

/** The groups of every membership kept in `dir` (whatever their service): what a 401's budget offer is matched against. */
export function heldGroups(dir: string): Set<string> {
  const groups = new Set<string>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return groups;
  }
  for (const name of names) {
    if (!name.endsWith(".membership.json")) continue;
    const bytes = readCacheFile(join(dir, name), MAX_FILE_BYTES);
    if (typeof bytes === "string") continue;
    try {
      const file = JSON.parse(new TextDecoder().decode(bytes)) as MembershipFile;
      if (file.format === FORMAT && typeof file.group_id === "string") groups.add(file.group_id);
    } catch {
      // not a membership: ignored
    }
  }
  return groups;
}

/** The kept membership of (service, group), or null when there is none; BudgetSpendError "membership" when its file is not one. */
export function loadMembership(dir: string, service: string, groupId: string): Membership | null {
  const { membership: path } = membershipPaths(dir, service, groupId);
  const bytes = readCacheFile(path, MAX_FILE_BYTES);
  if (bytes === "none") return null;
  if (typeof bytes === "string") throw wrong(` file ${path} ${bytes}`);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw wrong(` file ${path} is not JSON`);
  }
  const membership = parseMembershipFile(json);
  if (membership.file.service !== serviceKey(service) || membership.file.group_id !== groupId) throw wrong(` file ${path} is another service's or group's`);
  return membership;
}
