// docs/api.md against the lists the other tests hold the service to: every
// `error` text the fuzzers accept as documented and every failure reason must
// be in the reference, so the document cannot silently fall behind the code.
import { expect, test } from "bun:test";
import { DOCUMENTED_ERRORS } from "../fuzz/support";
import { servedDocument } from "../support/contract";
import { REASONS } from "../support/reasons";

const doc = await Bun.file(new URL("../../docs/api.md", import.meta.url)).text();
const section = (title: string) => {
  const start = doc.indexOf(`\n## ${title}\n`);
  expect(start).toBeGreaterThan(-1);
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end === -1 ? undefined : end);
};

test("the Errors table lists every error text the service answers with", () => {
  const errors = section("Errors");
  for (const text of DOCUMENTED_ERRORS) expect(errors).toContain(`| \`${text}\` |`);
  expect(errors).toContain("`Missing required fields: <f1>, <f2>`");
  expect(errors).toContain("`Invalid field <field>: <why>`");
});

test("the Reasons table lists the closed set of failure reasons, and nothing else", () => {
  const listed = [...section("Reasons").matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
  expect(new Set(listed)).toEqual(new Set(REASONS));
});

test("the reference names only files inside the repository", () => {
  expect(doc).not.toMatch(/\.\.\/|shared\/spec|service-interface|decisions\.md/);
});

test("every error text the OpenAPI document lists is in the Errors table, with the status the document gives it", async () => {
  const errors = section("Errors");
  const document = await servedDocument();
  const texts = new Map<string, Set<string>>();
  const collect = (status: string, schema: unknown): void => {
    if (Array.isArray(schema)) {
      for (const member of schema) collect(status, member);
      return;
    }
    if (typeof schema !== "object" || schema === null) return;
    const node = schema as Record<string, unknown>;
    const error = (node.properties as Record<string, { enum?: string[]; const?: string }> | undefined)?.error;
    for (const text of [...(error?.enum ?? []), ...(error?.const ? [error.const] : [])]) texts.set(text, (texts.get(text) ?? new Set()).add(status));
    for (const key of ["oneOf", "anyOf", "allOf", "properties"]) if (node[key]) collect(status, key === "properties" ? [node.properties] : node[key]);
  };
  const resolve = (schema: unknown): unknown => {
    const ref = (schema as { $ref?: string } | undefined)?.$ref;
    return ref ? document.components?.schemas?.[ref.split("/").pop()!] : schema;
  };
  for (const item of Object.values(document.paths ?? {})) {
    for (const op of Object.values(item ?? {}) as { responses?: Record<string, { content?: Record<string, { schema?: { oneOf?: unknown[] } }> }> }[]) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const schema = response.content?.["application/json"]?.schema;
        collect(status, schema);
        for (const member of schema?.oneOf ?? []) collect(status, resolve(member));
      }
    }
  }
  expect(texts.size).toBeGreaterThan(20);
  for (const [text, statuses] of texts) for (const status of statuses) expect(errors).toContain(`| ${status} | \`${text}\` |`);
});
