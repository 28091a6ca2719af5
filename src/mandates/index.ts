// Mandates: what an agent may do (actions, merchants, validity, amounts and
// per-period totals), enforced at verification. Pure domain; the store runs
// the check inside its decide transaction (enforce.ts).
export * from "./decimal";
export * from "./enforce";
export * from "./evaluate";
export * from "./period";
export * from "./principal";
export * from "./schema";
