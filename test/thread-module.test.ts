import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { threadModule } from "../src/thread-module";

const root = mkdtempSync(join(tmpdir(), "zkagent-thread-module-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("from the sources: the starter's neighbour", () => {
  const from = pathToFileURL("/repo/src/groups/thread.ts").href;
  expect(threadModule(from, "groups", "thread.ts", "thread-main")).toBe(pathToFileURL("/repo/src/groups/thread-main.ts").href);
});

test("in a package: dist/<dir>/<name>.js, whether the starter is a chunk one level down or at dist/ itself", () => {
  const dist = join(root, "dist");
  mkdirSync(join(dist, "groups"), { recursive: true });
  mkdirSync(join(dist, "cli"), { recursive: true });
  writeFileSync(join(dist, "groups", "thread-main.js"), "");
  const expected = pathToFileURL(join(dist, "groups", "thread-main.js")).href;
  expect(threadModule(pathToFileURL(join(dist, "cli", "index.js")).href, "groups", "thread.ts", "thread-main")).toBe(expected);
  expect(threadModule(pathToFileURL(join(dist, "chunk-abc.js")).href, "groups", "thread.ts", "thread-main")).toBe(expected);
});

test("in the compiled binary: under the bundle's root, the path below src/ kept", () => {
  const from = "file:///$bunfs/root/zkagent";
  expect(threadModule(from, "groups", "thread.ts", "thread-main")).toBe("file:///$bunfs/root/groups/thread-main.ts");
});
