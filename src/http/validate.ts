// Request bodies are validated by their TypeBox schemas (modules/*/model.ts):
// the schema that documents a route in OpenAPI is the one that decides. The
// answers are the API's exact texts (docs/api.md, "Errors"):
//
//   - every required field that is absent or null, in schema order:
//     400 "Missing required fields: agent_id, action";
//   - else the first field, in schema order, whose value the schema (or the
//     field's refinement) rejects: 400 "Invalid field X: <requirement>".
//
// The requirement is read off the schema's keywords, so the text follows the
// bounds; where the keywords cannot word it (a pattern's meaning), the
// feature's model.ts gives an explanation beside the schema, never a keyword
// inside it: the schemas are published as they are (OpenAPI), and must stay
// standard JSON Schema.
import type { Static, TObject, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { invalidField, missingFields } from "../errors";

/**
 * What JSON Schema cannot say about a field (a bound on a serialized size, a
 * number below r): checked after the schema accepted the value, returning why
 * the value fails, or null. Kept beside the schema in the feature's model.ts.
 */
export type Refinements<T extends TObject> = { [K in keyof Static<T>]?: (value: NonNullable<Static<T>[K]>) => string | null };

/** How the API words what a schema asks of a value. */
export function requirement(schema: TSchema): string {
  if (Array.isArray(schema.anyOf)) {
    const [first] = (schema.anyOf as TSchema[]).filter((member) => member.type !== "null");
    return first ? requirement(first) : "must be null";
  }
  if (schema.type === "string") {
    const nonEmpty = typeof schema.minLength === "number" && schema.minLength >= 1 ? "non-empty " : "";
    const bound = typeof schema.maxLength === "number" ? ` of at most ${schema.maxLength} characters` : "";
    return `must be a ${nonEmpty}string${bound}`;
  }
  if (schema.type === "object") return "must be a JSON object";
  return `must be of type ${String(schema.type ?? "unknown")}`;
}

/**
 * Why the schema rejected a field's value, for a field whose schema is too
 * rich for requirement() to word (a nested object that must name its unknown
 * members): given any value the schema rejects, returns the reason.
 */
export type Explanations<T extends TObject> = { [K in keyof Static<T>]?: (value: unknown) => string | null };

/** The body as the schema's type, or the 400 the interface fixes. */
export function validate<T extends TObject>(
  schema: T,
  body: Record<string, unknown>,
  refinements: Refinements<T> = {},
  explanations: Explanations<T> = {},
): Static<T> {
  // Own properties only: a body's "__proto__" or "constructor" key names nothing here.
  const field = (name: string) => (Object.hasOwn(body, name) ? body[name] : undefined);
  const missing = (schema.required ?? []).filter((name) => field(name) === undefined || field(name) === null);
  if (missing.length > 0) throw missingFields(missing);
  for (const [name, property] of Object.entries(schema.properties)) {
    const value = field(name);
    if (value === undefined) continue;
    if (Value.Errors(property, value).First() !== undefined) {
      const explain = (explanations as Record<string, ((value: unknown) => string | null) | undefined>)[name];
      throw invalidField(name, explain?.(value) ?? requirement(property));
    }
    const refine = (refinements as Record<string, ((value: unknown) => string | null) | undefined>)[name];
    const why = value === null ? null : refine?.(value);
    if (why) throw invalidField(name, why);
  }
  return body as Static<T>;
}
