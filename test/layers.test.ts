// Layers point down (docs/architecture.md): every import in src/ is parsed and
// checked against the layer of the importing file. A lower layer importing a
// higher one fails here, naming the file and the import.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { circles, edges, sourceFiles as storeFiles, upArrows, wholeStoreImporters } from "../scripts/layers";

const SRC = resolve(import.meta.dir, "../src");

/** The layers, lowest first. A file may import its own layer or any lower one. */
const LAYERS = ["domain", "service", "http", "app", "entry"] as const;
type Layer = (typeof LAYERS)[number] | "sdk";

/** Where a file (path relative to src/) sits. */
export function layerOf(file: string): Layer {
  if (/^modules\/[^/]+\/lifecycle\.ts$/.test(file)) return "domain"; // the challenge state machine
  if (/^modules\/[^/]+\/(service|model)\.ts$/.test(file)) return "service";
  if (/^modules\/[^/]+\/index\.ts$/.test(file) || file.startsWith("http/")) return "http";
  if (file === "app.ts") return "app";
  if (file === "main.ts" || file.startsWith("cli/")) return "entry";
  if (file.startsWith("agent/") || file.startsWith("merchant/")) return "sdk"; // merchant/: runs in the merchant's server, a client of the service
  // identity/, verifier/, store/, observability/, clock, log, errors, config, lifecycle, deps (types of the domain only)
  return "domain";
}

/** What a layer may import, besides packages (see FORBIDDEN_PACKAGES). */
function mayImport(from: Layer, to: Layer): boolean {
  if (from === "sdk") return to === "sdk" || to === "domain"; // the agent SDK runs on the agent's side: no service code
  if (to === "sdk") return from === "entry"; // only the CLI offers the SDK's commands
  return LAYERS.indexOf(to) <= LAYERS.indexOf(from as (typeof LAYERS)[number]);
}

/** Packages that are HTTP: only the http layer and above speak it. model.ts builds schemas with Elysia's `t`. */
function forbiddenPackage(file: string, layer: Layer, specifier: string): boolean {
  const http = specifier === "elysia" || specifier.startsWith("@elysiajs/");
  if (!http) return false;
  if (file.startsWith("merchant/adapters/")) return false; // the framework adapters exist to speak their framework
  if (layer === "domain" || layer === "sdk") return true;
  return layer === "service" && !file.endsWith("/model.ts");
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?\sfrom\s*["']([^"']+)["']|(?:^|[\s;])import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** Every module specifier a TypeScript source imports or re-exports (type-only imports included). */
export function importsOf(source: string): string[] {
  const withoutComments = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
  return [...withoutComments.matchAll(IMPORT)].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The violations in src/ as "file → import (layer → layer)". */
function violations(): string[] {
  const found: string[] = [];
  for (const path of sourceFiles(SRC)) {
    const file = relative(SRC, path);
    const layer = layerOf(file);
    for (const specifier of importsOf(readFileSync(path, "utf8"))) {
      if (specifier.startsWith(".")) {
        const target = relative(SRC, resolve(dirname(path), specifier));
        if (target.startsWith("..")) continue; // package.json, circuits/artifacts: data, not code layers
        const to = layerOf(/\.(ts|json)$/.test(target) ? target : existsSync(join(SRC, target)) ? `${target}/index.ts` : `${target}.ts`);
        if (!mayImport(layer, to)) found.push(`${file} → ${specifier} (${layer} → ${to})`);
      } else if (forbiddenPackage(file, layer, specifier)) found.push(`${file} → ${specifier} (${layer} → HTTP package)`);
    }
  }
  return found;
}

describe("layers point down", () => {
  test("no file in src/ imports a higher layer", () => {
    expect(violations()).toEqual([]);
  });

  test("the parser finds every import form", () => {
    const source = [
      'import { a } from "./a";',
      "import type { B } from '../b';",
      'export { c } from "./c";',
      'export * from "./d";',
      'import "./e";',
      'const f = await import("./f");',
      'import g, { h } from "elysia";',
      '// import { no } from "./comment";',
      '/* import { no } from "./block"; */',
    ].join("\n");
    expect(importsOf(source)).toEqual(["./a", "../b", "./c", "./d", "./e", "./f", "elysia"]);
  });

  test("the rules catch what they forbid", () => {
    expect(layerOf("store/sqlite.ts")).toBe("domain");
    expect(layerOf("modules/challenges/lifecycle.ts")).toBe("domain");
    expect(layerOf("modules/proofs/service.ts")).toBe("service");
    expect(layerOf("modules/proofs/index.ts")).toBe("http");
    expect(layerOf("http/auth.ts")).toBe("http");
    expect(mayImport("domain", "service")).toBe(false); // e.g. deps.ts importing a module's type
    expect(mayImport("service", "http")).toBe(false); // a service building headers with http/errors.ts
    expect(mayImport("http", "app")).toBe(false);
    expect(mayImport("domain", "sdk")).toBe(false); // the verifier importing the agent SDK
    expect(mayImport("http", "service")).toBe(true);
    expect(forbiddenPackage("modules/keys/service.ts", "service", "elysia")).toBe(true);
    expect(forbiddenPackage("verifier/index.ts", "domain", "@elysiajs/openapi")).toBe(true);
    expect(forbiddenPackage("modules/keys/model.ts", "service", "elysia")).toBe(false);
    expect(layerOf("merchant/index.ts")).toBe("sdk");
    expect(forbiddenPackage("merchant/index.ts", "sdk", "elysia")).toBe(true); // the core stays framework-neutral
    expect(forbiddenPackage("merchant/adapters/elysia.ts", "sdk", "elysia")).toBe(false);
  });
});

// The store by aggregate (issue 39), on the finer map of scripts/layers.ts.
describe("the store by aggregate", () => {
  const all = edges();

  test("no import runs up into or out of src/store/, and no file of it is in an import circle", () => {
    expect(upArrows(all).filter((arrow) => arrow.includes("store/"))).toEqual([]);
    expect(circles(all).filter((circle) => circle.some((file) => file.startsWith("store/")))).toEqual([]);
  });

  test("only the wiring imports the whole store contract; every other module imports the aggregates it uses", () => {
    expect(wholeStoreImporters(all)).toEqual(["deps.ts", "lifecycle.ts", "main.ts"]);
  });

  test("an aggregate's records import no store code but other records; the store imports nothing of modules/", () => {
    const fromRecords = all.filter(({ from, to }) => /^store\/[^/]+\/records\.ts$/.test(from) && to.startsWith("store/"));
    expect(fromRecords.filter(({ to }) => !/^store\/[^/]+\/records\.ts$/.test(to))).toEqual([]);
    expect(all.filter(({ from, to }) => from.startsWith("store/") && to.startsWith("modules/"))).toEqual([]);
  });

  test("no file under src/store/ is over 400 lines", () => {
    const long = storeFiles(join(SRC, "store"))
      .map((path) => ({ file: relative(SRC, path), lines: readFileSync(path, "utf8").split("\n").length - 1 }))
      .filter(({ lines }) => lines > 400);
    expect(long).toEqual([]);
  });

  test("the map finds what it is shown: a circle, an arrow up, the whole contract imported", () => {
    const shown = [
      { from: "identity/subject.ts", to: "store/interface.ts" },
      { from: "store/interface.ts", to: "mandates/enforce.ts" },
      { from: "mandates/enforce.ts", to: "identity/subject.ts" },
      { from: "store/keys/sqlite.ts", to: "modules/keys/service.ts" },
    ];
    expect(circles(shown)).toEqual([["identity/subject.ts", "mandates/enforce.ts", "store/interface.ts"]]);
    expect(upArrows(shown)).toEqual([
      "identity/subject.ts → store/interface.ts (base → domain)",
      "store/keys/sqlite.ts → modules/keys/service.ts (store → service)",
    ]);
    expect(wholeStoreImporters(shown)).toEqual(["identity/subject.ts"]);
  });
});
