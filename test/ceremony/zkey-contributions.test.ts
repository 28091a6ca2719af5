// The contributions a zkey carries, read from its section 10: for the
// shipped circuit they must be exactly what its ceremony's transcript
// recorded from snarkjs at the time (names, hashes, the beacon); for the
// Semaphore v4 zkeys, the public ceremony's list, closed by one beacon.
import { expect, test } from "bun:test";
import { zkeyContributions } from "../../src/ceremony/zkey-contributions";
import { semaphoreFile } from "../../src/circuits/semaphore";
import { shippedFile } from "../../src/circuits/shipped";

test("the shipped zkey's contributions are the ones its transcript recorded", async () => {
  const transcript = JSON.parse(new TextDecoder().decode(await shippedFile("transcript"))) as { steps: { step: string; name?: string; hash?: string }[] };
  const { contributions } = await zkeyContributions(await shippedFile("zkey"));
  expect(contributions.map((c): { step: string; name?: string; hash?: string } => ({ step: c.type, name: c.name, hash: c.hash }))).toEqual(
    transcript.steps.filter((s) => s.step !== "init").map((s) => ({ step: s.step, name: s.name, hash: s.hash })),
  );
});

test("a Semaphore v4 zkey (depth 20, pinned) carries the public ceremony's contributions and one closing beacon", async () => {
  const { contributions } = await zkeyContributions(await semaphoreFile(20, "zkey"));
  const beacons = contributions.filter((c) => c.type === "beacon");
  expect(beacons).toHaveLength(1);
  expect(contributions.at(-1)).toBe(beacons[0]!);
  expect(contributions.length).toBeGreaterThan(300);
  for (const c of contributions) expect(c.hash).toMatch(/^[0-9a-f]{128}$/);
  expect(new Set(contributions.map((c) => c.hash)).size).toBe(contributions.length);
});

test("zkagent ceremony semaphore --depth 1 --json: the files match their pins, and the contributions are listed", async () => {
  const cli = Bun.spawn([process.execPath, new URL("../../src/cli/index.ts", import.meta.url).pathname, "ceremony", "semaphore", "--depth", "1", "--json"], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, code] = await Promise.all([new Response(cli.stdout).text(), cli.exited]);
  expect(code).toBe(0);
  const report = JSON.parse(out);
  expect(report).toMatchObject({ package: "@zk-kit/semaphore-artifacts@4.13.0", ok: true });
  const [depth1] = report.depths;
  expect(depth1).toMatchObject({ depth: 1, pinned: true, beacon: { type: "beacon", iterationsExp: 10 } });
  expect(depth1.list).toHaveLength(depth1.contributions + 1);
  const zkey = await zkeyContributions(await semaphoreFile(1, "zkey"));
  expect(depth1.list).toEqual(zkey.contributions);
});
