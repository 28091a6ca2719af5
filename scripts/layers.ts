// The import map of src/: which folder imports which, how many imports run
// from a lower layer to a higher one, and which files import each other in a
// circle. `bun scripts/layers.ts` prints it (`--json` for the figures alone);
// docs/architecture.md quotes it and test/layers.test.ts holds the figures.
//
// The layers here are finer than the test's (which only keeps the domain, the
// services and HTTP apart): inside the domain, the store sits above the
// domain's pure concepts (mandates, groups, circuits' listings, receipts'
// claims, webhook events: the types and rules the store writes) and below the
// domain's services that run on it (the receipt signer, the webhook worker,
// the circuit registry), so a concept that imports the store's records, or a
// store that imports a service, counts as an arrow up.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export const SRC = resolve(import.meta.dir, "../src");

/** The layers, lowest first. A file may import its own layer or a lower one. */
export const LAYERS = ["base", "domain", "store", "domain-io", "service", "http", "app", "entry"] as const;
export type Layer = (typeof LAYERS)[number] | "sdk";

/** Domain files that do their work through the store: above it. */
const ON_STORE = new Set(["receipts/service.ts", "receipts/signer.ts", "webhooks/worker.ts", "circuits/registry.ts"]);
/** The store's types: each aggregate's records and interface (what the domain sees of it), their composition, and the one failure both stores name. No I/O. */
const STORE_TYPES = /^store\/([^/]+\/records|interface|unavailable)\.ts$/;
/** Files every layer may use: errors, time, logs, configuration, identifiers and encodings, metrics, small utilities. */
const BASE = /^(errors|clock|log|config|bounded-fetch|cache-file|bundled-file|thread-module|refreshing|ambient\.d)\.ts$|^(identity|observability)\//;

/** Where a file (path relative to src/) sits. */
export function layerOf(file: string): Layer {
  if (BASE.test(file)) return "base";
  if (STORE_TYPES.test(file)) return "domain";
  if (file.startsWith("store/")) return "store";
  if (ON_STORE.has(file)) return "domain-io";
  if (/^modules\/[^/]+\/(service|model|lifecycle)\.ts$/.test(file) || file === "deps.ts" || file === "lifecycle.ts") return "service";
  if (/^modules\/[^/]+\/index\.ts$/.test(file) || file.startsWith("http/")) return "http";
  if (file === "app.ts") return "app";
  if (file === "main.ts" || file.startsWith("cli/")) return "entry";
  if (file.startsWith("agent/") || file.startsWith("merchant/")) return "sdk";
  return "domain";
}

/** Whether an import from one layer to another runs up. The SDKs may use the base and the domain's concepts only. */
export function runsUp(from: Layer, to: Layer): boolean {
  if (from === "sdk") return to !== "sdk" && to !== "base" && to !== "domain";
  if (to === "sdk") return from !== "entry";
  return LAYERS.indexOf(to) > LAYERS.indexOf(from);
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?\sfrom\s*["']([^"']+)["']|(?:^|[\s;])import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g;

/** Every module specifier a TypeScript source imports or re-exports (type-only imports included). */
export function importsOf(source: string): string[] {
  const withoutComments = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
  return [...withoutComments.matchAll(IMPORT)].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

export function sourceFiles(dir: string = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The file (relative to src/) a relative specifier names, or null when it leaves src/ (package.json, circuit artifacts: data). */
export function resolveImport(file: string, specifier: string): string | null {
  const target = relative(SRC, resolve(dirname(join(SRC, file)), specifier));
  if (target.startsWith("..")) return null;
  if (/\.(ts|json)$/.test(target)) return target;
  return existsSync(join(SRC, target)) && !existsSync(join(SRC, `${target}.ts`)) ? `${target}/index.ts` : `${target}.ts`;
}

export interface Edge {
  from: string;
  to: string;
}

/** Every import between two files of src/. */
export function edges(): Edge[] {
  return sourceFiles().flatMap((path) => {
    const from = relative(SRC, path);
    return importsOf(readFileSync(path, "utf8"))
      .filter((specifier) => specifier.startsWith("."))
      .map((specifier) => ({ from, to: resolveImport(from, specifier) }))
      .filter((edge): edge is Edge => edge.to !== null && edge.to !== edge.from);
  });
}

/** A file's folder under src/ ("." for the files at its top). */
export const folderOf = (file: string): string => (file.includes("/") ? file.slice(0, file.indexOf("/")) : ".");

/** The imports that run up, as "from → to (layer → layer)". */
export function upArrows(all: Edge[] = edges()): string[] {
  return all
    .filter(({ from, to }) => runsUp(layerOf(from), layerOf(to)))
    .map(({ from, to }) => `${from} → ${to} (${layerOf(from)} → ${layerOf(to)})`)
    .sort();
}

/** Files that import each other, directly or through others: each circle's files (Tarjan's strongly connected components, size > 1). */
export function circles(all: Edge[] = edges()): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of all) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const to of next.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const file of next.keys()) if (!index.has(file)) visit(file);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** Imports between folders: "from → to" with how many, the folder's own imports left out. */
export function folderImports(all: Edge[] = edges()): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { from, to } of all) {
    const [a, b] = [folderOf(from), folderOf(to)];
    if (a === b) continue;
    counts.set(`${a} → ${b}`, (counts.get(`${a} → ${b}`) ?? 0) + 1);
  }
  return new Map([...counts].sort(([a], [b]) => a.localeCompare(b)));
}

/** Files outside src/store/ that import the whole store contract rather than the aggregates they use. */
export function wholeStoreImporters(all: Edge[] = edges()): string[] {
  return [...new Set(all.filter(({ from, to }) => to === "store/interface.ts" && !from.startsWith("store/")).map(({ from }) => from))].sort();
}

if (import.meta.main) {
  const all = edges();
  const up = upArrows(all);
  const loops = circles(all);
  const whole = wholeStoreImporters(all);
  if (process.argv.includes("--json")) {
    console.log(JSON.stringify({ imports: all.length, up: up.length, circles: loops.length, filesInCircles: loops.flat().length, wholeStore: whole.length }));
  } else {
    console.log("Imports between src/ folders (count):");
    for (const [pair, n] of folderImports(all)) console.log(`  ${pair}  ${n}`);
    console.log(`\nImports running up a layer (${LAYERS.join(" < ")}; sdk apart): ${up.length}`);
    for (const arrow of up) console.log(`  ${arrow}`);
    console.log(`\nImport circles: ${loops.length} (${loops.flat().length} files)`);
    for (const loop of loops) console.log(`  ${loop.join(" · ")}`);
    console.log(`\nFiles importing the whole store contract (store/interface.ts): ${whole.length}`);
    for (const file of whole) console.log(`  ${file}`);
    console.log(`\n${all.length} imports between files of src/`);
  }
}
