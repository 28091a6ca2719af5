// docs/api.md against the lists the other tests hold the service to: every
// `error` text the fuzzers accept as documented and every failure reason must
// be in the reference, so the document cannot silently fall behind the code.
import { expect, test } from "bun:test";
import { DOCUMENTED_ERRORS } from "../fuzz/support";
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
