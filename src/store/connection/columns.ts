// Integer columns as numbers: PostgreSQL's int8 arrives as a string (bigint: false), SQLite's as a number.
export const int = (value: unknown): number => Number(value);
export const intOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));
