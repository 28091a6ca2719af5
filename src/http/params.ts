// Path parameters are not validated by Elysia schemas: a schema would reject
// a segment that does not percent-decode ("%", "%E0%A4") before the route's
// authentication ran. Without one, Elysia hands such a segment over as null;
// it names nothing, so the service answers as for an unknown id, after
// authentication, in the interface's order.

/** The decoded segment, or null when it did not percent-decode. */
export const pathParam = (value: string | null | undefined): string | null => (typeof value === "string" ? value : null);
