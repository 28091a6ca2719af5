// The agent's fetch options as docs/http-auth.md lists them ("### Options"):
// every member of AgentFetchOptions is there, so an option added to the SDK
// cannot stay undocumented (allowInsecureLoopback was, issue 38).
import { expect, test } from "bun:test";

const source = await Bun.file(new URL("../../src/agent/fetch.ts", import.meta.url)).text();
const doc = await Bun.file(new URL("../../docs/http-auth.md", import.meta.url)).text();

test("every AgentFetchOptions member is in docs/http-auth.md's Options list", () => {
  const body = /export interface AgentFetchOptions \{\n([\s\S]*?)\n\}/.exec(source)?.[1];
  expect(body).toBeDefined();
  const members = [...body!.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1]!);
  expect(members).toContain("identity");
  expect(members.length).toBeGreaterThan(10);
  const start = doc.indexOf("\n### Options\n");
  expect(start).toBeGreaterThan(-1);
  const section = doc.slice(start, doc.indexOf("\n### ", start + 1));
  // A bullet names its options first: "- `name`: …", "- `name: {…}`: …", "- `a`, `b`, `c`: …".
  const listed = new Set(
    section
      .split("\n")
      .filter((line) => line.startsWith("- `"))
      .flatMap((line) => [.../^- ((?:`[^`]+`(?:, )?)+)/.exec(line)![1]!.matchAll(/`(\w+)/g)].map((m) => m[1]!)),
  );
  expect(members.filter((member) => !listed.has(member))).toEqual([]);
});
