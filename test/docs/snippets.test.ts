// Every command and snippet of the README and docs/ runs as written (issue
// 38). The blocks and their markers: test/docs/snippets.ts.
//   - static, for every sh and console block: its `bun run` scripts, files
//     and `zkagent` commands exist; an untagged block holds no command;
//   - run blocks: a zkagent service started as the README starts it (`zkagent
//     serve`, its first API key read from what it prints), in a scratch folder
//     per document, never the repository root, which they must leave as it
//     was; `zkagent` on PATH is this tree's CLI;
//   - ts and js blocks: compiled under strict tsc in an npm
//     project that installed the packed tarballs (test/packages/packed.ts: the
//     packages test's pack, not a second one) and the frameworks they name;
//   - python blocks: compiled by python3.
// Needs npm and the npm registry (express, hono, elysia, typescript, @types/*).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Subprocess } from "bun";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createIdentity } from "../../src/agent";
import { freePort } from "../multinode/nodes";
import { packed } from "../packages/packed";
import { commandLike, commandsOf, documents, ROOT, type Snippet, snippets } from "./snippets";

setDefaultTimeout(240_000);

const ALL = documents().flatMap(snippets);
const SHELL = ALL.filter((s) => s.lang === "sh" || s.lang === "console");
const where = (s: Snippet) => `${s.file}:${s.line}`;
const tmp = mkdtempSync(join(tmpdir(), "zkagent-snippets-"));
const children: Subprocess[] = [];

afterAll(async () => {
  for (const child of children) child.kill("SIGTERM");
  await Promise.all(children.map((child) => child.exited));
  rmSync(tmp, { recursive: true, force: true });
});

async function sh(cmd: string[], cwd: string, env: Record<string, string | undefined> = process.env, stdin?: string) {
  const proc = Bun.spawn(cmd, { cwd, env, stdout: "pipe", stderr: "pipe", stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin) });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

// ---------------------------------------------------------------- static

const SCRIPTS: Record<string, string> = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts;
/** The full CLI's commands, as src/cli/index.ts lists their help. */
const COMMANDS = new Set([...readFileSync(join(ROOT, "src/cli/index.ts"), "utf8").matchAll(/^ {2}(\w+): \w+Help,$/gm)].map((m) => m[1]!));

/** What is wrong with one command of a block, or null. */
function commandProblem(command: string): string | null {
  const words = command.split(/\s+/);
  const zkagent = (rest: string[]) => {
    const sub = rest[0];
    return sub === undefined || sub === "--version" || sub === "--help" || COMMANDS.has(sub) ? null : `zkagent has no command "${sub}"`;
  };
  if (/^(\.\/|dist\/)?zkagent$/.test(words[0]!) || (["npx", "bunx"].includes(words[0]!) && words[1] === "zkagent"))
    return zkagent(words.slice(words[0] === "npx" || words[0] === "bunx" ? 2 : 1));
  if (words[0] !== "bun") return null;
  if (words[1] === "run") {
    const name = words[2]!;
    if (name === "zkagent") return zkagent(words.slice(3));
    return SCRIPTS[name] !== undefined || existsSync(join(ROOT, name)) ? null : `no package script or file "${name}"`;
  }
  if (words[1] === "test") {
    const missing = words.slice(2).filter((arg) => !arg.startsWith("-") && !existsSync(join(ROOT, arg)));
    return missing.length === 0 ? null : `bun test: no ${missing.join(", ")}`;
  }
  if (words[1] && /\.(ts|js)$/.test(words[1]) && !existsSync(join(ROOT, words[1]))) return `no file ${words[1]}`;
  return null;
}

describe("every block says what it is", () => {
  test("each sh and console block is run or says why not, and names only scripts, files and commands that exist", () => {
    const problems: string[] = [];
    for (const snippet of SHELL) {
      if (snippet.run === (snippet.check !== undefined)) problems.push(`${where(snippet)}: mark it <!-- snippet: run --> or <!-- snippet: check: why -->`);
      if (snippet.lang === "console" && snippet.run) problems.push(`${where(snippet)}: a console transcript is not run`);
      for (const command of commandsOf(snippet)) {
        const problem = commandProblem(command);
        if (problem) problems.push(`${where(snippet)}: ${problem}: ${command}`);
      }
    }
    expect(problems).toEqual([]);
    expect(SHELL.filter((s) => s.run).length).toBeGreaterThan(2);
  });

  test("no untagged block holds a command (tagged, it is held to what it says)", () => {
    const untagged = ALL.filter((s) => s.lang === "" && commandLike(s.code).length > 0).map((s) => `${where(s)}: ${commandLike(s.code)[0]}`);
    expect(untagged).toEqual([]);
  });

  test("the files the shell blocks write (identities: secrets) are ignored by git, should a block be run in the clone", async () => {
    const written = [...new Set(SHELL.flatMap((s) => [...s.code.matchAll(/(?:>|tee) (\w[\w.-]*\.json)\b/g)].map((m) => m[1]!)))];
    expect(written).toContain("agent.json");
    const ignored = await Promise.all(written.map(async (name) => ({ name, ignored: (await sh(["git", "check-ignore", "-q", name], ROOT)).code === 0 })));
    expect(ignored.filter((file) => !file.ignored)).toEqual([]);
  });

  test("the extractor reads what is written: markers, commands, continuations", () => {
    const readme = snippets("README.md");
    const flow = readme.find((s) => s.run && s.given.includes("KEY"));
    expect(flow).toBeDefined();
    expect(commandsOf({ ...flow!, lang: "sh", code: "A=1 bun run lint:api \\\n  --x  # the note's\nzkagent keys list | jq . # '#' \"#\"" })).toEqual([
      "bun run lint:api --x",
      "zkagent keys list",
      "jq .",
    ]);
    expect(commandProblem("bun run no-such-script")).toBe('no package script or file "no-such-script"');
    expect(commandProblem("zkagent no-such-command")).toBe('zkagent has no command "no-such-command"');
    expect(commandProblem("bun test test/no/such.test.ts")).toBe("bun test: no test/no/such.test.ts");
  });
});

// ---------------------------------------------------------------- run

/** `# {…}` right after a command: the answer the command prints, "…" and <…> standing for any value. */
function expectedAnswer(comment: string): unknown {
  const json = comment
    .replace(/^#\s*/, "")
    .replace(/([:[,]\s*)([^"\s,\]{}[][^,\]}]*…[^,\]}]*)/g, '$1"…"')
    .replace(/…(?=[,}\]])/g, '"…"');
  return JSON.parse(json);
}

/** Where `actual` differs from what the comment shows, or null. */
function answerDiffers(shown: unknown, actual: unknown, path = ""): string | null {
  if (typeof shown === "string" && (shown.includes("…") || /^<.*>$/.test(shown))) return actual === undefined ? `${path || "."} missing` : null;
  if (typeof shown === "object" && shown !== null && !Array.isArray(shown)) {
    if (typeof actual !== "object" || actual === null) return `${path || "."}: ${JSON.stringify(actual)} is not an object`;
    const names = [Object.keys(shown).sort(), Object.keys(actual).sort()];
    if (JSON.stringify(names[0]) !== JSON.stringify(names[1])) return `${path || "."}: members ${names[1]} where the comment shows ${names[0]}`;
    for (const name of names[0]!) {
      const found = answerDiffers((shown as Record<string, unknown>)[name], (actual as Record<string, unknown>)[name], `${path}.${name}`);
      if (found) return found;
    }
    return null;
  }
  return JSON.stringify(shown) === JSON.stringify(actual) ? null : `${path}: ${JSON.stringify(actual)} where the comment shows ${JSON.stringify(shown)}`;
}

/** The block as bash runs it: the given variables' own assignments dropped, each expected answer a marker in the output. */
function runnable(snippet: Snippet): { script: string; answers: unknown[] } {
  const answers: unknown[] = [];
  const lines = snippet.code.split("\n").filter((line) => !snippet.given.some((name) => line.startsWith(`${name}=`)));
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!(/^#\s*[{[]/.test(line) && i > 0 && !/^#/.test(lines[i - 1]!))) {
      out.push(line);
      continue;
    }
    // The answer may go on over further comment lines, until its brackets close.
    let text = line.replace(/^#\s*/, "");
    const depth = () => [...text].reduce((d, c) => d + (c === "{" || c === "[" ? 1 : c === "}" || c === "]" ? -1 : 0), 0);
    while (depth() > 0 && /^#/.test(lines[i + 1] ?? "")) text += lines[++i]!.replace(/^#\s*/, "");
    answers.push(expectedAnswer(text));
    out.push(`printf '\\n@@answer ${answers.length - 1}@@\\n'`);
  }
  const script = out.join("\n");
  return { script: `set -eo pipefail\n${script}\n`, answers };
}

describe("the shell blocks marked run, against a started service, in scratch folders", () => {
  let service: { url: string; key: string; port: number; dir: string };
  let bin: string;
  let rootBefore: string;
  // The files a block could leave in the clone: untracked or ignored ones, but the build's own outputs.
  const gitStatus = async () =>
    (await sh(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], ROOT)).stdout
      .split("\n")
      .filter((line) => /^(\?\?|!!) /.test(line) && !/^.. (build|dist|node_modules)\//.test(line))
      .join("\n");

  beforeAll(async () => {
    rootBefore = await gitStatus();
    bin = join(tmp, "bin");
    mkdirSync(bin);
    // `zkagent` on PATH, as the README's reader has it (the binary, or the clone's CLI).
    writeFileSync(join(bin, "zkagent"), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, "src/cli/index.ts")}" "$@"\n`);
    chmodSync(join(bin, "zkagent"), 0o755);
    const dir = join(tmp, "README.md");
    mkdirSync(dir);
    const port = freePort();
    const child = Bun.spawn([join(bin, "zkagent"), "serve"], {
      cwd: dir,
      env: { ...environment(dir), PORT: String(port), HOST: "127.0.0.1", WORKERS: "1", LOG_LEVEL: "warn" },
      stdout: "pipe",
      stderr: "inherit",
      stdin: "ignore",
    });
    children.push(child);
    // The first start prints the key it created (README, Quick start).
    const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
    let printed = "";
    let key: string | undefined;
    while (!key) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`zkagent serve ended:\n${printed}`);
      printed += new TextDecoder().decode(value);
      key = /\n {2}(zka_\S+)\n/.exec(printed)?.[1];
    }
    reader.releaseLock();
    const url = `http://localhost:${port}`;
    for (let i = 0; (await fetch(`${url}/health`).catch(() => null))?.status !== 200; i++) {
      if (i > 300) throw new Error("the service did not answer /health");
      await Bun.sleep(100);
    }
    service = { url, key, port, dir };
  });

  async function startShop(zkagent: { url: string; key: string }): Promise<string> {
    const port = freePort();
    const shop = Bun.spawn([process.execPath, "examples/shop/server.ts"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, PORT: String(port), ZKAGENT_URL: zkagent.url, ZKAGENT_API_KEY: zkagent.key },
      stdout: "pipe",
      stderr: "inherit",
    });
    children.push(shop);
    const reader = (shop.stdout as ReadableStream<Uint8Array>).getReader();
    const { value } = await reader.read();
    if (!new TextDecoder().decode(value).startsWith("shop listening on ")) throw new Error("the example shop did not start");
    reader.releaseLock();
    return `http://127.0.0.1:${port}`;
  }

  function environment(dir: string): Record<string, string> {
    return {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: process.env.HOME ?? dir,
      XDG_STATE_HOME: join(dir, ".state"),
      ...(process.env.XDG_CACHE_HOME ? { XDG_CACHE_HOME: process.env.XDG_CACHE_HOME } : {}),
      ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    };
  }

  const files = [...new Set(SHELL.filter((s) => s.run).map((s) => s.file))];
  for (const file of files) {
    test(`${file}: its run blocks, in order`, async () => {
      const dir = join(tmp, file);
      mkdirSync(dir, { recursive: true });
      const given: Record<string, string> = {
        KEY: service.key,
        URL: service.url,
        ZKAGENT_URL: service.url,
        ZKAGENT_API_KEY: service.key,
        PORT: String(service.port),
      };
      const blocks = SHELL.filter((s) => s.run && s.file === file);
      // The example shop, started as its README starts it, for the blocks that order from it.
      if (blocks.some((s) => s.given.includes("SHOP"))) given.SHOP = await startShop(service);
      for (const snippet of blocks) {
        const { script, answers } = runnable(snippet);
        const env = { ...environment(dir), ...Object.fromEntries(snippet.given.map((name) => [name, given[name]!])), PORT: given.PORT };
        // The service's own folder: a block that reads ./data/zkagent.db (demo) reads the service's.
        const cwd = file === "README.md" ? service.dir : dir;
        const result = await sh(["bash", "-c", script], cwd, env);
        expect({ at: where(snippet), code: result.code, stderr: result.code === 0 ? "" : result.stderr }).toEqual({ at: where(snippet), code: 0, stderr: "" });
        const parts = result.stdout.split(/\n@@answer (\d+)@@\n/);
        for (let k = 0; k < answers.length; k++) {
          const before = parts[2 * k]!.trim().split("\n").pop() ?? "";
          let actual: unknown;
          try {
            actual = JSON.parse(before);
          } catch {
            actual = before;
          }
          expect({ at: where(snippet), answer: k, differs: answerDiffers(answers[k], actual) }).toEqual({ at: where(snippet), answer: k, differs: null });
        }
      }
      expect(await gitStatus()).toBe(rootBefore);
    });
  }
});

// ---------------------------------------------------------------- compile

describe("the TypeScript and JavaScript snippets, under strict tsc against the packed packages", () => {
  const typed = ALL.filter((s) => s.lang === "ts" || s.lang === "js");
  let project: string;

  beforeAll(async () => {
    const { merchant, agent } = await packed();
    project = join(tmp, "typed");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "snippets", version: "1.0.0", private: true, type: "module" }));
    const dependencies = [
      merchant,
      agent,
      "express@5",
      "hono@4",
      "elysia@1",
      "typescript@5",
      "@types/node",
      "@types/express",
      "@types/bun",
      "standardwebhooks@1",
    ];
    const installed = await sh(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", ...dependencies], project);
    if (installed.code !== 0) throw new Error(`npm install: ${installed.stderr}`);
  });

  test("every one compiles (each in a module of its own, with what its markers declare)", async () => {
    const names = new Map<string, Snippet>();
    for (const runtime of ["node", "bun"] as const) {
      const files = typed
        .filter((s) => s.runtime === runtime)
        .map((snippet, i) => {
          const name = `snippet-${runtime}-${i}.ts`;
          names.set(name, snippet);
          writeFileSync(join(project, name), `${snippet.declare.map((line) => `${line}\n`).join("")}${snippet.code}\nexport {};\n`);
          return name;
        });
      // skipLibCheck: Elysia's own declarations fail a full check; ours are held to one by test/packages/packages.test.ts.
      const base = { strict: true, skipLibCheck: true, noEmit: true, target: "es2022" };
      const compilerOptions =
        runtime === "node"
          ? { ...base, module: "nodenext", moduleResolution: "nodenext", types: ["node"] }
          : { ...base, module: "preserve", moduleResolution: "bundler", lib: ["ESNext"], types: ["bun"] };
      writeFileSync(join(project, `tsconfig.${runtime}.json`), JSON.stringify({ compilerOptions, files }));
    }
    const runtimes = (["node", "bun"] as const).filter((runtime) => typed.some((s) => s.runtime === runtime));
    const results = await Promise.all(runtimes.map((runtime) => sh(["node", "node_modules/typescript/bin/tsc", "-p", `tsconfig.${runtime}.json`], project)));
    // Each error named by the document and line it comes from.
    const errors = results
      .flatMap((r) => (r.stdout + r.stderr).split("\n"))
      .filter((line) => line.trim() !== "")
      .map((line) => {
        const at = /^(snippet-\w+-\d+\.ts)\((\d+),\d+\): (.*)$/.exec(line);
        const snippet = at && names.get(at[1]!);
        return snippet ? `${snippet.file}:${snippet.line + Number(at![2]) - snippet.declare.length}: ${at![3]}` : line;
      });
    expect(errors).toEqual([]);
    expect(typed.length).toBeGreaterThan(5);
  });
});

describe("the MCP client configurations", () => {
  test("each starts zkagent's MCP server as written (its command our CLI, its identity a real file): the client lists the three tools", async () => {
    const configs = ALL.filter((s) => s.mcpConfig);
    expect(configs.length).toBeGreaterThan(0);
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const identity = join(tmp, "mcp-agent.json");
    writeFileSync(identity, JSON.stringify({ ...(await createIdentity()), agent_id: "mcp-1" }));
    for (const snippet of configs) {
      const servers = JSON.parse(snippet.code).mcpServers as Record<string, { command: string; args: string[] }>;
      const server = servers.zkagent!;
      expect({ at: where(snippet), command: server.command.split("/").pop(), first: server.args[0] }).toEqual({
        at: where(snippet),
        command: "zkagent",
        first: "mcp",
      });
      const args = server.args.map((arg, i) => (server.args[i - 1] === "--identity" ? identity : arg));
      const transport = new StdioClientTransport({ command: process.execPath, args: [join(ROOT, "src/cli/index.ts"), ...args], stderr: "pipe" });
      const client = new Client({ name: "snippets", version: "1.0.0" });
      await client.connect(transport);
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(["zkagent_fetch", "zkagent_identity", "zkagent_prove"]);
        const answer = await client.callTool({ name: "zkagent_identity", arguments: {} });
        expect((answer.structuredContent as { agent_id: string }).agent_id).toBe("mcp-1");
      } finally {
        await client.close();
      }
    }
  });
});

describe("the Python snippets", () => {
  test("each compiles under python3", async () => {
    const python = ALL.filter((s) => s.lang === "python");
    const dir = join(tmp, "python");
    mkdirSync(dir);
    const problems: string[] = [];
    for (const [i, snippet] of python.entries()) {
      writeFileSync(join(dir, `s${i}.py`), snippet.code);
      const result = await sh(["python3", "-m", "py_compile", `s${i}.py`], dir);
      if (result.code !== 0) problems.push(`${where(snippet)}: ${result.stderr}`);
    }
    expect(problems).toEqual([]);
  });
});
