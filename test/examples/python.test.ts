// examples/python/agent.py, an agent in Python through `zkagent fetch`,
// against a real zkagent server and the example shop: it browses under its
// limit, orders the cheapest product (201 from the verified session), and a
// limit below the price surfaces the CLI's refusal, naming the field.
// Needs python3 (CI machines have it).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { CLI, startWorld, type World } from "../http-auth/support";

setDefaultTimeout(60_000);

const PYTHON = Bun.which("python3");
if (!PYTHON) throw new Error("python3 must be on PATH for the Python example's test");
const AGENT = join(import.meta.dir, "../../examples/python/agent.py");
let world: World;

beforeAll(async () => {
  world = await startWorld("python");
}, 60_000);
afterAll(() => world?.stop());

async function agent(args: string[]) {
  const proc = Bun.spawn([PYTHON!, AGENT, ...args], {
    env: { ...process.env, ZKAGENT: CLI.map((word) => `'${word}'`).join(" "), LOG_LEVEL: "silent" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

test("browses within its limit and orders the cheapest product", async () => {
  const { file } = await world.agent("py-agent");
  const result = await agent([world.shopUrl, "--identity", file, "--max-amount", "50", "--currency", "EUR"]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  const answer = JSON.parse(result.stdout);
  expect(answer.product).toBe("tea-001");
  expect(answer.order).toMatchObject({ scheme: "zkagent", agent_id: "py-agent", amount: "12.50", currency: "EUR" });
  expect(answer.order.order_id).toMatch(/^ord_/);
});

test("a limit below the price: the order is refused before any proof, and the agent says why", async () => {
  const { file } = await world.agent("py-frugal");
  const result = await agent([world.shopUrl, "--identity", file, "--max-amount", "10", "--currency", "EUR"]);
  expect(result.code).toBe(1);
  expect(result.stdout).toBe("");
  expect(result.stderr).toStartWith("agent: zkagent: refused to prove (limit, field amount)");
});
