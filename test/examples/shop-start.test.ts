// The example shop says at start what it accepts (issue 38), and its README
// shows exactly that: the block under "It says at once what it accepts" is
// what the shop prints for the README's command (but the port, which the
// test cannot take).
import { expect, test } from "bun:test";
import { join } from "node:path";
import { acceptanceLines } from "../../examples/shop/server";

const ROOT = join(import.meta.dir, "../..");

async function firstWords(env: Record<string, string>): Promise<string[]> {
  const shop = Bun.spawn([process.execPath, join(ROOT, "examples/shop/server.ts")], {
    env: { PATH: process.env.PATH ?? "", PORT: "0", ...env },
    stdout: "pipe",
    stderr: "inherit",
  });
  try {
    const reader = (shop.stdout as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (text.split("\n").length < 7) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    return text.trimEnd().split("\n");
  } finally {
    shop.kill("SIGTERM");
    await shop.exited;
  }
}

test("the start-up lines name the service, the groups and the operators it accepts, or say that none are", async () => {
  const lines = await firstWords({ ZKAGENT_URL: "http://localhost:3000", ZKAGENT_API_KEY: "zka_x" });
  expect(lines[0]).toMatch(/^shop listening on http:\/\/127\.0\.0\.1:\d+$/);
  const readme = await Bun.file(join(ROOT, "examples/shop/README.md")).text();
  const shown = /```\nshop listening on .*\n([\s\S]*?)\n```/.exec(readme)?.[1];
  expect(lines.slice(1).join("\n")).toBe(shown!);

  const configured = await firstWords({
    ZKAGENT_URL: "https://zkagent.example",
    ZKAGENT_API_KEY: "zka_x",
    ZKAGENT_GROUPS: "household, team-b",
    ZKAGENT_BUDGET_GROUPS: "family-budget",
    ZKAGENT_SIGNATURE_AGENTS: "https://agents.operator.example",
    ZKAGENT_ORIGIN: "https://shop.example",
  });
  expect(configured.slice(1)).toEqual(
    acceptanceLines({
      zkagentUrl: "https://zkagent.example",
      apiKey: "zka_x",
      groups: ["household", "team-b"],
      budgets: ["family-budget"],
      signatureAgents: ["https://agents.operator.example"],
      origin: "https://shop.example",
    }),
  );
  expect(configured.join("\n")).toContain("members of household, team-b");
  expect(configured.join("\n")).toContain("from the budget of a member of family-budget");
  expect(configured.join("\n")).toContain("a signed agent of https://agents.operator.example");
  expect(configured.join("\n")).toContain("the origin https://shop.example (ZKAGENT_ORIGIN)");
}, 30_000);
