// bun run build → dist/zkagent: one executable holding the whole CLI and
// server (bun build --compile of src/cli/index.ts), for the machine it is
// built on, or for --target (e.g. bun-linux-arm64).
//
// What the binary embeds, and how:
//   - the shipped circuit's ceremony (agent_identity.r1cs, .wasm, .zkey,
//     verification_key.json, transcript.json), the public phase-1 ptau (for
//     `ceremony verify` with no directory) and Swagger UI's
//     assets: imported `with { type: "file" }`, so Bun copies them into the
//     executable and the import yields a /$bunfs/… path that readFile and
//     Bun.file read; the same holds for the verifier's and the prover's
//     WebAssembly (build/verifier.wasm, build/prover.wasm, imported that way
//     by src/verifier/wasm.ts and src/prover/wasm.ts; test/binary checks
//     the pattern);
//   - the verification key and package.json: JSON imports, inlined;
//   - the migrations: code.
// blake-hash (via circomlibjs) is bundled as its pure-JavaScript version (see
// blakeHashPureJs below).
// Proving is src/prover (build/prover.wasm, and circom_runtime to run the
// circuit's witness calculator): snarkjs is not on the binary's proving path.
//
//   bun scripts/build.ts [--outfile dist/zkagent] [--target bun-linux-x64] [--no-smoke]
import { chmodSync, existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";

const ROOT = resolve(import.meta.dir, "..");
export const ENTRY = join(ROOT, "src/cli/index.ts");
export const DEFAULT_OUTFILE = join(ROOT, "dist/zkagent");
/** The threads' modules (the verifier's, started by src/verifier/thread.ts; the prover's helpers, by src/prover/threads.ts): more entry points, so the binary embeds them. */
const THREAD_ENTRIES = [
  join(ROOT, "src/verifier/thread-main.ts"),
  join(ROOT, "src/prover/thread-main.ts"),
  join(ROOT, "src/groups/thread-main.ts"),
  join(ROOT, "src/http/members-body-main.ts"),
  join(ROOT, "src/agent/group/tree-thread.ts"),
];

/** Files the binary cannot work without; a missing one is a build error, not a runtime surprise. */
const REQUIRED = [
  "circuits/artifacts/agent_identity.r1cs",
  "circuits/artifacts/agent_identity.wasm",
  "circuits/artifacts/agent_identity.zkey",
  "circuits/artifacts/verification_key.json",
  "circuits/artifacts/transcript.json",
  "circuits/ptau/powersOfTau28_hez_final_09.ptau",
  "build/prover.wasm",
  "build/prover-wide.wasm",
];

// circomlibjs imports blake-hash, whose index.js loads a native addon through
// node-gyp-build from a path fixed at build time (this checkout's
// node_modules) and falls back to pure JavaScript when that fails. Bundling
// the JavaScript version directly keeps the binary from reading the build
// machine's files at run time and behaving differently on another host.
const blakeHashPureJs: import("bun").BunPlugin = {
  name: "blake-hash-pure-js",
  setup(build) {
    build.onResolve({ filter: /^blake-hash$/ }, () => ({ path: join(ROOT, "node_modules/blake-hash/js.js") }));
  },
};

export interface BuildOptions {
  entry?: string;
  outfile?: string;
  target?: string;
  log?: (line: string) => void;
}

export async function buildBinary(options: BuildOptions = {}): Promise<{ outfile: string; bytes: number; ms: number }> {
  const { entry = ENTRY, outfile = DEFAULT_OUTFILE, log = () => {} } = options;
  const started = performance.now();
  mkdirSync(dirname(outfile), { recursive: true });
  rmSync(outfile, { force: true });
  const result = await Bun.build({
    entrypoints: [entry, ...THREAD_ENTRIES],
    target: "bun",
    minify: true,
    // Precompiled bytecode: start-up to /health measured 437 → 280 ms (median of 9) for +5 MiB.
    bytecode: true,
    format: "esm",
    // Embedded: stack traces in the logs point at src/… lines, not minified ones.
    sourcemap: "inline",
    compile: {
      outfile,
      ...(options.target ? { target: options.target as any } : {}),
      // The binary runs wherever it is copied: it must not pick up a stray .env, bunfig.toml or package.json there.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    plugins: [blakeHashPureJs],
  });
  if (!result.success) throw new AggregateError(result.logs, `build failed:\n${result.logs.map(String).join("\n")}`);
  for (const message of result.logs) log(`  ${message.level}: ${message.message}`);
  return { outfile, bytes: statSync(outfile).size, ms: performance.now() - started };
}

/** Runs the binary copied alone into an empty directory: no node_modules, no repository beside it. */
async function smoke(binary: string, log: (line: string) => void): Promise<void> {
  const dir = join(tmpdir(), `zkagent-smoke-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  try {
    const copy = join(dir, "zkagent");
    await Bun.write(copy, Bun.file(binary));
    chmodSync(copy, 0o755);
    const run = (args: string[]) =>
      Bun.spawnSync([copy, ...args], { cwd: dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", DATABASE_URL: join(dir, "smoke.db") } });
    const help = run(["--help"]);
    if (help.exitCode !== 0 || !help.stdout.toString().includes("zkagent")) throw new Error(`--help failed: ${help.stderr}`);
    const identity = run(["identity", "new", "--json"]);
    if (identity.exitCode !== 0) throw new Error(`identity new failed: ${identity.stderr}`);
    const { secret } = JSON.parse(identity.stdout.toString());
    // prove reads the embedded circuit (.wasm, .zkey): the binary assets.
    const proof = run(["prove", "--secret", secret, "--nonce", "ab".repeat(31), "--action", "smoke", "--json"]);
    if (proof.exitCode !== 0 || !JSON.parse(proof.stdout.toString()).proof) throw new Error(`prove failed: ${proof.stderr}`);
    // ceremony verify reads the embedded r1cs, ptau, zkey and transcript, and runs snarkjs's zkey verification.
    const ceremony = run(["ceremony", "verify", "--json"]);
    if (ceremony.exitCode !== 0 || JSON.parse(ceremony.stdout.toString()).ok !== true)
      throw new Error(`ceremony verify failed: ${ceremony.stdout}${ceremony.stderr}`);
    log("  --help, identity new, prove, ceremony verify: ok from an empty directory");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: { outfile: { type: "string" }, target: { type: "string" }, "no-smoke": { type: "boolean" } },
  });
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const outfile = resolve(values.outfile ?? DEFAULT_OUTFILE);
  say(`[1/3] checking inputs`);
  for (const file of REQUIRED) {
    if (!existsSync(join(ROOT, file))) {
      process.stderr.write(`build: ${file} is missing; run bun run build:circuit first\n`);
      process.exit(1);
    }
  }
  say(`[2/3] bundling src/cli/index.ts and compiling ${values.target ? `for ${values.target}` : "for this machine"}`);
  const built = await buildBinary({ outfile, target: values.target, log: say });
  say(`  ${outfile}: ${(built.bytes / 1024 / 1024).toFixed(1)} MiB in ${(built.ms / 1000).toFixed(1)} s`);
  if (values["no-smoke"] || values.target) say(`[3/3] smoke test skipped`);
  else {
    say(`[3/3] smoke test`);
    await smoke(outfile, say);
  }
  say(`done: ${outfile}`);
}
