// The window tables' disk cache (createProver's tableCache, src/prover/tables.ts):
// the first createProver writes the tables, the next one uses them and proves
// what the built tables prove; a file that fails its checks is not used (the
// tables are built again and the file rewritten); a link or FIFO planted at
// the file's name is not followed or waited on; and a table altered with
// its hash rewritten to match is caught by the proof's self-check, dropped,
// rebuilt and the proof retried once (issue 34).
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { createProver } from "../../src/prover";
import { Groth16Verifier } from "../../src/verifier";
import { sevenInputs } from "./support";

setDefaultTimeout(120_000);

const dir = mkdtempSync(join(tmpdir(), "zkagent-tables-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const input = { w: 3n, x: [1n, 2n, 3n, 4n, 5n, 6n, 7n] };
const files = () => readdirSync(dir).filter((f) => f.endsWith(".tables"));
const path = () => join(dir, files()[0]!);
const split = (bytes: Uint8Array) => {
  const nl = bytes.indexOf(10);
  return { header: JSON.parse(new TextDecoder().decode(bytes.subarray(0, nl))), payload: bytes.subarray(nl + 1) };
};

async function provesAndVerifies(options: { tableCache: string }): Promise<void> {
  const prover = await createProver(sevenInputs, options);
  const { proof, publicSignals } = await prover.prove(input);
  const verifier = await Groth16Verifier.fromVerificationKey(sevenInputs.vkey);
  expect(verifier.verify(JSON.stringify(proof), publicSignals)).toEqual({ ok: true });
}

describe("tableCache", () => {
  test("the first createProver writes one file named by the zkey's SHA-256; the next proves from it", async () => {
    await provesAndVerifies({ tableCache: dir });
    expect(files()).toHaveLength(1);
    const zkeyDigest = createHash("sha256").update(sevenInputs.zkey).digest("hex");
    expect(files()[0]!.startsWith(`${zkeyDigest}.`)).toBe(true);
    const { header, payload } = split(new Uint8Array(readFileSync(path())));
    expect(header.zkey).toBe(zkeyDigest);
    expect(header.tables).toBe(createHash("sha256").update(payload).digest("hex"));
    expect(payload.length).toBe(header.sizes.reduce((a: number, b: number) => a + b, 0));
    expect(payload.length).toBeGreaterThan(0);
    const before = readFileSync(path());
    await provesAndVerifies({ tableCache: dir });
    // Read, not rewritten.
    expect(readFileSync(path()).equals(before)).toBe(true);
  });

  test("a file whose tables no longer hash to its header, or is truncated, is not used: the tables are built again and the file rewritten", async () => {
    const good = readFileSync(path());
    for (const damage of [
      (b: Buffer) => {
        b[b.length - 7]! ^= 1;
      },
      (b: Buffer) => b.subarray(0, b.length - 100),
    ]) {
      const bad = Buffer.from(good);
      const written = damage(bad) ?? bad;
      writeFileSync(path(), written);
      await provesAndVerifies({ tableCache: dir });
      expect(readFileSync(path()).equals(good)).toBe(true);
    }
  });

  test("a link or a FIFO planted where the file goes is neither followed nor waited on: replaced by the file (0600), the link's target untouched", async () => {
    const name = files()[0]!;
    const target = join(dir, name);
    const good = readFileSync(target);
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "not the cache's");
    rmSync(target);
    symlinkSync(victim, target);
    await provesAndVerifies({ tableCache: dir });
    expect(lstatSync(target).isFile()).toBe(true);
    expect(readFileSync(target).equals(good)).toBe(true);
    expect(readFileSync(victim, "utf8")).toBe("not the cache's");
    rmSync(victim);

    rmSync(target);
    expect(Bun.spawnSync(["mkfifo", target]).exitCode).toBe(0);
    await provesAndVerifies({ tableCache: dir });
    expect(lstatSync(target).isFile()).toBe(true);
    expect(readFileSync(target).equals(good)).toBe(true);
    expect(statSync(target).mode & 0o777).toBe(0o600);
    // The one file, no writer's temporary left beside it.
    expect(readdirSync(dir)).toEqual([name]);
  });

  test("a table altered and its hash rewritten to match: the self-check catches it, the file is dropped and rebuilt, the proof retried once and said so", async () => {
    const good = readFileSync(path());
    const { header, payload } = split(new Uint8Array(good));
    const altered = payload.slice();
    // Every 8th byte of A's table: every entry 2^(c·j)·P moves off its value, whichever the proof uses.
    for (let i = 0; i < header.sizes[0]; i += 8) altered[i]! ^= 1;
    header.tables = createHash("sha256").update(altered).digest("hex");
    const line = new TextEncoder().encode(`${JSON.stringify(header)}\n`);
    const planted = Buffer.concat([line, altered]);
    writeFileSync(path(), planted);

    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => void warnings.push(args.join(" "));
    try {
      // Before the fix every proof of every process failed (unsatisfied) and the file stayed.
      await provesAndVerifies({ tableCache: dir });
    } finally {
      console.warn = warn;
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("failed its self-check");
    expect(warnings[0]).toContain(path());
    expect(readFileSync(path()).equals(planted)).toBe(false);
    expect(readFileSync(path()).equals(good)).toBe(true);
    // The next prover reads the rebuilt file and proves at once, without a word.
    console.warn = (...args: unknown[]) => void warnings.push(args.join(" "));
    try {
      await provesAndVerifies({ tableCache: dir });
    } finally {
      console.warn = warn;
    }
    expect(warnings).toHaveLength(1);
  });
});
