// The npm packages as a new user gets them: `bun run pack` writes the three
// tarballs, npm installs them into fresh projects outside the repository, and
//   - an Express merchant under Node guards POST /orders (401 without proof);
//   - an agent under Node orders there with fetch from @zkagent/agent (201),
//     as a registered agent and as a member of a group, the Semaphore
//     artifact downloaded from the zkagent service by its pinned hash;
//   - `npx zkagent identity new --json` runs with node and no bun on PATH;
//   - tsc --strict (skipLibCheck false) accepts both projects, under module
//     nodenext and under bun init's defaults;
//   - `bunx zkagent serve` from the zkagent package answers /health and serves
//     the pinned Semaphore artifacts from its dependency.
// The zkagent service the merchant and the agent use is this repository's
// (test/multinode/nodes.ts). Needs npm and the npm registry (express,
// typescript, @types/*, and the zkagent package's dependencies).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import type { Subprocess } from "bun";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createIdentity, createSemaphoreIdentity } from "../../src/agent";
import { SEMAPHORE_PINS } from "../../src/groups/semaphore-pins";
import { call, freePort, newKey, type Node, startNode } from "../multinode/nodes";
import { PACKED_DIR, packed } from "./packed";

setDefaultTimeout(180_000);

const tmp = mkdtempSync(join(tmpdir(), "zkagent-packages-"));
const children: Subprocess[] = [];
let node: Node;
let key: string;

const NODE = Bun.which("node");
const NPM = Bun.which("npm");
if (!NODE || !NPM) throw new Error("node and npm must be on PATH for the packages test");

async function sh(cmd: string[], cwd: string, env: Record<string, string | undefined> = process.env) {
  const proc = Bun.spawn(cmd, { cwd, env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}
async function ok(cmd: string[], cwd: string, env?: Record<string, string | undefined>) {
  const result = await sh(cmd, cwd, env);
  if (result.code !== 0) throw new Error(`${cmd.join(" ")} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result;
}

const size = (path: string): number =>
  !existsSync(path) ? 0 : statSync(path).isDirectory() ? readdirSync(path).reduce((sum, name) => sum + size(join(path, name)), 0) : statSync(path).size;
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;

/** A fresh npm project in the temporary directory, with `dependencies` installed (tarballs by path). */
async function project(name: string, dependencies: string[]): Promise<string> {
  const dir = join(tmp, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0", private: true, type: "module" }));
  await ok([NPM!, "install", "--no-audit", "--no-fund", "--loglevel=error", ...dependencies], dir);
  return dir;
}

/** A process started in the background, resolved once `url` answers (any status). */
async function started(cmd: string[], cwd: string, env: Record<string, string | undefined>, url: string): Promise<Subprocess> {
  // stdout ignored: the service prints its first API key there.
  const child = Bun.spawn(cmd, { cwd, env, stdout: "ignore", stderr: "inherit", stdin: "ignore" });
  children.push(child);
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${cmd.join(" ")} exited ${child.exitCode}`);
    const response = await fetch(url).catch(() => null);
    if (response) return child;
    await Bun.sleep(100);
  }
  throw new Error(`${cmd.join(" ")} did not answer at ${url}`);
}

const tarball = (prefix: string) => {
  const file = readdirSync(PACKED_DIR).find((f) => f.startsWith(prefix) && f.endsWith(".tgz"));
  if (!file) throw new Error(`no ${prefix}*.tgz in ${PACKED_DIR}`);
  return join(PACKED_DIR, file);
};

let merchantDir: string;
let agentDir: string;
let serviceDir: string;

beforeAll(async () => {
  const { merchant, agent, all, log } = await packed();
  process.stdout.write(log);
  // Three projects installed side by side (the registry is the slow part), and the service this repository runs.
  [merchantDir, agentDir, serviceDir, node] = await Promise.all([
    project("merchant", [merchant, "express@5", "typescript@5", "@types/node", "@types/express"]),
    project("agent", [agent, "typescript@5", "@types/node", "@types/bun"]),
    project("service", [all]),
    startNode(join(tmp, "zkagent.db")),
  ]);
  key = (await newKey(join(tmp, "zkagent.db"))).key;
  const sizes = [
    ["@zkagent/merchant", size(join(merchantDir, "node_modules/@zkagent/merchant"))],
    ["@zkagent/agent", size(join(agentDir, "node_modules/@zkagent/agent"))],
    ["zkagent", size(join(serviceDir, "node_modules/zkagent"))],
    ["zkagent with its dependency @zk-kit/semaphore-artifacts", size(join(serviceDir, "node_modules"))],
  ] as const;
  process.stdout.write(`installed sizes (npm, on disk):\n${sizes.map(([name, bytes]) => `  ${name}: ${mb(bytes)}`).join("\n")}\n`);
  expect(sizes[0][1]).toBeLessThan(5e6);
  expect(sizes[1][1]).toBeLessThan(60e6);
}, 180_000);

afterAll(async () => {
  for (const child of children) child.kill("SIGTERM");
  await Promise.all(children.map((child) => child.exited));
  await node?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

test("the tarballs carry compiled JavaScript, declarations, WebAssembly and the circuit: no sources, tests, databases or build tools", async () => {
  for (const prefix of ["zkagent-merchant-", "zkagent-agent-", "zkagent-0"]) {
    const files = (await ok(["tar", "tzf", tarball(prefix)], tmp)).stdout.trim().split("\n");
    expect(files).toContain("package/package.json");
    expect(files).toContain("package/LICENSE");
    expect(files).toContain("package/README.md");
    const unexpected = files.filter(
      (file) => !/^package\/(package\.json|LICENSE|README\.md|dist\/.+\.(js|wasm|zkey|r1cs|ptau|css)|types\/.+\.d\.ts)$/.test(file),
    );
    expect({ prefix, unexpected }).toEqual({ prefix, unexpected: [] });
    expect(files.filter((file) => /\/(test|assembly|scripts|node_modules|src)\/|\.db$/.test(file) && !file.startsWith("package/types/src/"))).toEqual([]);
  }
});

const SHOP = `
import express from "express";
import { bodyFields } from "@zkagent/merchant";
import { zkagent, zkagentSession } from "@zkagent/merchant/express";

const app = express();
app.post("/orders", zkagent({ url: process.env.ZKAGENT_URL, apiKey: process.env.ZKAGENT_API_KEY, action: "purchase", context: bodyFields(["amount", "currency"]), groups: ["household"] }), (req, res) => {
  const session = zkagentSession(res);
  res.status(201).json({ agent: session.agent_id, group: session.group_id ?? null, amount: req.body.amount });
});
// An agent's second request comes after its proof, seconds later on a loaded machine: longer than Node's 5 s keep-alive, a reused socket would be closed under it.
app.listen(Number(process.env.PORT), "127.0.0.1").keepAliveTimeout = 60_000;
`;

const AGENT = `
import { fetch } from "@zkagent/agent";

const identity = JSON.parse(process.env.IDENTITY);
const response = await fetch(process.env.SHOP + "/orders", {
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ amount: "20", currency: "EUR" }),
  zkagent: { identity, trustedServices: [process.env.ZKAGENT_URL], allowInsecureLoopback: true },
});
process.stdout.write(JSON.stringify({ status: response.status, body: await response.json() }));
`;

test("an Express merchant under Node: 401 without proof; an agent under Node orders with @zkagent/agent's fetch: 201 as an agent and as a group member", async () => {
  writeFileSync(join(merchantDir, "shop.mjs"), SHOP);
  writeFileSync(join(agentDir, "agent.mjs"), AGENT);
  const port = freePort();
  const shop = `http://127.0.0.1:${port}`;
  await started([NODE!, "shop.mjs"], merchantDir, { ...process.env, PORT: String(port), ZKAGENT_URL: node.url, ZKAGENT_API_KEY: key }, `${shop}/`);

  const plain = await fetch(`${shop}/orders`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"amount":"20","currency":"EUR"}' });
  expect(plain.status).toBe(401);
  expect(plain.headers.get("www-authenticate")).toBe('ZKAgent realm="zkagent"');

  const agent = { ...(await createIdentity()), agent_id: "bot" };
  const registered = await call(node, "POST", "/v1/agents", key, {
    agent_id: "bot",
    identity_commitment: agent.identity_commitment,
    signing_key: agent.signing_key,
  });
  expect(registered.status).toBe(201);
  const member = createSemaphoreIdentity();
  expect((await call(node, "POST", "/v1/groups", key, { group_id: "household" })).status).toBe(201);
  const others = Array.from({ length: 3 }, () => createSemaphoreIdentity().identity_commitment);
  expect((await call(node, "POST", "/v1/groups/household/members", key, { identity_commitments: [...others, member.identity_commitment] })).status).toBe(201);

  // A cache of its own: the artifact must come from the service, not from a previous run.
  const cache = join(tmp, "cache");
  const order = async (identity: object) => {
    const env = { ...process.env, IDENTITY: JSON.stringify(identity), SHOP: shop, ZKAGENT_URL: node.url, XDG_CACHE_HOME: cache };
    const result = await ok([NODE!, "agent.mjs"], agentDir, env);
    return JSON.parse(result.stdout);
  };
  expect(await order(agent)).toEqual({ status: 201, body: { agent: "bot", group: null, amount: "20" } });

  const asMember = await order({ group_id: "household", private_key: member.private_key });
  expect(asMember.status).toBe(201);
  expect(asMember.body.group).toBe("household");
  expect(asMember.body.agent).not.toBe(member.identity_commitment);
  // The group of 4 has depth 2: its artifacts were downloaded, named by their pins.
  expect(readdirSync(join(cache, "zkagent/semaphore-artifacts")).sort()).toEqual([`${SEMAPHORE_PINS[2]!.wasm}.wasm`, `${SEMAPHORE_PINS[2]!.zkey}.zkey`].sort());
});

test("npx zkagent identity new --json runs with node on PATH and no bun", async () => {
  const bin = join(tmp, "node-only-bin");
  mkdirSync(bin);
  symlinkSync(NODE!, join(bin, "node"));
  symlinkSync(Bun.which("npx")!, join(bin, "npx"));
  // npx runs the bin through sh (not bun).
  symlinkSync(Bun.which("sh")!, join(bin, "sh"));
  const env = { PATH: bin, HOME: tmp, npm_config_cache: join(tmp, "npm-cache") };
  expect(Bun.which("bun", { PATH: bin })).toBeNull();
  const result = await ok([join(bin, "npx"), "--no-install", "zkagent", "identity", "new", "--json"], agentDir, env);
  const identity = JSON.parse(result.stdout);
  expect(identity.secret).toMatch(/^\d+$/);
  expect(identity.identity_commitment).toMatch(/^\d+$/);
  const help = await sh([join(bin, "npx"), "--no-install", "zkagent", "serve"], agentDir, env);
  expect(help.code).toBe(2);
  expect(help.stderr).toContain('unknown command "serve"');
});

const TYPED_SHOP = `
import express from "express";
import { BadRequest, bodyFields, type GuardOptions, zkagentGuard } from "@zkagent/merchant";
import { zkagent, zkagentSession } from "@zkagent/merchant/express";

const options: GuardOptions = { url: "https://zkagent.example", apiKey: "key", action: "purchase", context: bodyFields(["amount", "currency"]) };
const app = express();
app.post("/orders", zkagent(options), (_req, res) => {
  const { agent_id, context } = zkagentSession(res);
  res.status(201).json({ agent_id, amount: context.amount });
});
const guard = zkagentGuard({ ...options, context: () => { throw new BadRequest("no"); } });
export const verified: Promise<boolean> = guard.verify(new Request("https://shop.example/orders")).then((result) => result.ok);
`;

const TYPED_AGENT = `
import { createIdentity, createSemaphoreIdentity, fetch, prove, sign, zkagentFetch, type AgentIdentity } from "@zkagent/agent";

const id: AgentIdentity = await createIdentity();
const member = createSemaphoreIdentity();
const response: Response = await fetch("https://shop.example/orders", {
  method: "POST",
  body: JSON.stringify({ amount: 20 }),
  zkagent: { identity: { ...id, agent_id: "bot" }, trustedServices: ["https://zkagent.example"] },
});
const proof: string = await prove({ secret: id.secret, nonce: "ab", action: "purchase", context: { amount: 20 } });
const signature: string = sign({ signingSecret: id.signing_secret, challengeId: "c", nonce: "ab", action: "purchase" });
const again: Response = await zkagentFetch({ identity: { group_id: "g", private_key: member.private_key } })(new URL("https://shop.example"));
export const seen = [response.status, proof.length, signature, again.ok];
`;

const NODENEXT = { strict: true, skipLibCheck: false, module: "nodenext", moduleResolution: "nodenext", target: "es2022", noEmit: true };
// @tsconfig/node20's settings: no DOM lib, so the declarations may use only what @types/node declares.
const NODE20 = { lib: ["es2023"], module: "node16", target: "es2022", strict: true, skipLibCheck: false, noEmit: true, types: ["node"] };
// bun init's tsconfig.json (Bun 1.2–1.4), with skipLibCheck false.
const BUN_INIT = {
  lib: ["ESNext"],
  target: "ESNext",
  module: "Preserve",
  moduleDetection: "force",
  jsx: "react-jsx",
  allowJs: true,
  moduleResolution: "bundler",
  allowImportingTsExtensions: true,
  verbatimModuleSyntax: true,
  noEmit: true,
  strict: true,
  skipLibCheck: false,
  noFallthroughCasesInSwitch: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
};

test("tsc --strict with skipLibCheck false accepts both projects (module nodenext; and for the agent bun init's defaults and @tsconfig/node20's, no DOM lib)", async () => {
  const tsc = async (dir: string, file: string, source: string, compilerOptions: object, name: string) => {
    writeFileSync(join(dir, file), source);
    writeFileSync(join(dir, name), JSON.stringify({ compilerOptions, files: [file] }));
    const result = await sh([NODE!, "node_modules/typescript/bin/tsc", "-p", name], dir);
    expect(result.stdout + result.stderr).toBe("");
    expect(result.code).toBe(0);
  };
  await Promise.all([
    tsc(merchantDir, "shop.ts", TYPED_SHOP, NODENEXT, "tsconfig.json"),
    tsc(agentDir, "agent.ts", TYPED_AGENT, { ...NODENEXT, types: ["node"] }, "tsconfig.json"),
    tsc(agentDir, "agent-bun.ts", TYPED_AGENT, { ...BUN_INIT, types: ["bun"] }, "tsconfig.bun.json"),
    tsc(agentDir, "agent-node20.ts", TYPED_AGENT, NODE20, "tsconfig.node20.json"),
  ]);
});

test("bunx zkagent serve runs the service from the package (embedded SQLite) and answers /health", async () => {
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  await started(
    [process.execPath, "x", "zkagent", "serve"],
    serviceDir,
    { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: join(tmp, "served.db"), LOG_LEVEL: "warn" },
    `${url}/health`,
  );
  const health = await fetch(`${url}/health`);
  expect(health.status).toBe(200);
  // Files the bundle carries beside its code (imported `with { type: "file" }`), read relative to the bundle, not the working directory.
  const css = await fetch(`${url}/swagger/assets/swagger-ui.css`);
  expect(css.status).toBe(200);
  expect((await css.text()).length).toBeGreaterThan(100_000);
  // The Semaphore artifacts it serves come from its installed dependency, by their pins.
  const circuits = (await (await fetch(`${url}/v1/circuits`)).json()) as { circuits: { id: string }[] };
  const depth2 = circuits.circuits.find((c) => c.id.startsWith("semaphore_v4_d2-"));
  expect(depth2).toBeDefined();
  const wasm = await fetch(`${url}/v1/circuits/${depth2!.id}/wasm`);
  expect(wasm.status).toBe(200);
  expect(new Bun.CryptoHasher("sha256").update(await wasm.arrayBuffer()).digest("hex")).toBe(SEMAPHORE_PINS[2]!.wasm);
});

test("ES modules only, and require() works where engines say: a CommonJS caller under Node loads both packages (engines ^20.19.0 || >=22.12.0)", async () => {
  for (const [dir, name, entries] of [
    [merchantDir, "@zkagent/merchant", ["@zkagent/merchant", "@zkagent/merchant/express"]],
    [agentDir, "@zkagent/agent", ["@zkagent/agent"]],
  ] as const) {
    const manifest = JSON.parse(await Bun.file(join(dir, "node_modules", name, "package.json")).text());
    expect({ name, type: manifest.type, engines: manifest.engines }).toEqual({ name, type: "module", engines: { node: "^20.19.0 || >=22.12.0" } });
    // This machine's Node is inside the range (CI's too): require() of an ES module without top-level await.
    const script = `for (const entry of ${JSON.stringify(entries)}) if (Object.keys(require(entry)).length === 0) process.exit(1);`;
    const result = await sh([NODE!, "-e", script], dir);
    expect({ name, stderr: result.stderr, code: result.code }).toEqual({ name, stderr: "", code: 0 });
  }
});
