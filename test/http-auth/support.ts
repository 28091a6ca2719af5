// A real zkagent server and the example shop, each on its own loopback port,
// for the ZKAgent scheme's end-to-end tests. Every response any test reads
// through `observe` is recorded, so a test can state that none was a 5xx.
import type { Subprocess } from "bun";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentIdentity, createIdentity } from "../../src/agent";
import { call, freePort, newKey, type Node, startNode } from "../multinode/nodes";

const ROOT = new URL("../../", import.meta.url).pathname;

export interface World {
  tmp: string;
  db: string;
  node: Node;
  key: string;
  shopUrl: string;
  shop: Subprocess;
  /** Every status seen by `observe`. */
  statuses: number[];
  observe: (request: Request) => Promise<Response>;
  /** A registered agent (with its signing key), its identity file written to `${tmp}/<id>.json`. */
  agent(id: string, extra?: Record<string, unknown>): Promise<{ identity: AgentIdentity & { agent_id: string }; file: string }>;
  stop(): Promise<void>;
}

/** `shopEnv`: more of the example shop's environment (ZKAGENT_GROUPS, ZKAGENT_ORIGIN). */
export async function startWorld(name: string, shopEnv: Record<string, string> = {}): Promise<World> {
  const tmp = mkdtempSync(join(tmpdir(), `zkagent-${name}-`));
  const db = join(tmp, "zkagent.db");
  const node = await startNode(db);
  const { key } = await newKey(db);
  const port = freePort();
  const shop = Bun.spawn([process.execPath, join(ROOT, "examples/shop/server.ts")], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), ZKAGENT_URL: node.url, ZKAGENT_API_KEY: key, ...shopEnv },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  // The shop prints one line once it listens.
  const reader = shop.stdout.getReader();
  const first = await reader.read();
  reader.releaseLock();
  if (!new TextDecoder().decode(first.value).includes("listening")) throw new Error("the shop did not start");
  const statuses: number[] = [];
  return {
    tmp,
    db,
    node,
    key,
    shopUrl: `http://127.0.0.1:${port}`,
    shop,
    statuses,
    observe: async (request) => {
      const response = await fetch(request);
      statuses.push(response.status);
      return response;
    },
    async agent(id, extra = {}) {
      const identity = { ...(await createIdentity()), agent_id: id };
      const registered = await call(node, "POST", "/v1/agents", key, {
        agent_id: id,
        identity_commitment: identity.identity_commitment,
        signing_key: identity.signing_key,
        ...extra,
      });
      if (registered.status !== 201) throw new Error(`registering ${id}: ${registered.status}`);
      const file = join(tmp, `${id}.json`);
      writeFileSync(file, JSON.stringify(identity), { mode: 0o600 });
      return { identity, file };
    },
    async stop() {
      shop.kill("SIGTERM");
      await shop.exited;
      await node.stop();
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}

export const CLI = [process.execPath, join(ROOT, "src/cli/index.ts")];

export async function cli(args: string[], stdin?: string) {
  const proc = Bun.spawn([...CLI, ...args], {
    env: { ...process.env, LOG_LEVEL: "silent" },
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}
