// Issue 23, "the zkey's circuit is the pinned one": `zkagent circuits add`
// refuses (exit 1, naming it) a ceremony directory whose witness wasm is not
// one src/circuits/pins.ts pins, or whose zkey is not for the pinned circuit,
// before anything is stored: the service never serves what an agent would
// refuse. The unaltered directory is added, so the refusals are the
// alterations' doing.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shippedCeremony } from "../../src/ceremony/ceremony";
import { CEREMONY_FILES, type CeremonyFile } from "../../src/circuits/shipped";
import { openSqlite } from "../../src/store/sqlite";

setDefaultTimeout(60_000);

const CLI = ["bun", new URL("../../src/cli/index.ts", import.meta.url).pathname];
let tmp: string;
let files: Record<CeremonyFile, Uint8Array>;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "zkagent-circuit-pins-"));
  files = { ...(await shippedCeremony()) };
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A ceremony directory with the shipped files, `changed` replacing some. */
function ceremonyDir(name: string, changed: Partial<Record<CeremonyFile, Uint8Array>> = {}): string {
  const dir = join(tmp, name);
  mkdirSync(dir);
  for (const [file, bytes] of Object.entries({ ...files, ...changed })) writeFileSync(join(dir, CEREMONY_FILES[file as CeremonyFile]), bytes);
  return dir;
}

async function add(dir: string, db: string) {
  const proc = Bun.spawn([...CLI, "circuits", "add", dir], { env: { ...process.env, DATABASE_URL: db, LOG_LEVEL: "silent" }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** The circuits a store file holds (none when the file was never created). */
async function stored(db: string): Promise<string[]> {
  if (!existsSync(db)) return [];
  const store = openSqlite(db);
  try {
    return (await store.listCircuits()).map((c) => c.id);
  } finally {
    await store.close();
  }
}

/** The byte range of a zkey section (little-endian: count u32 at 8, then type u32 ‖ size u64 ‖ body). */
function section(zkey: Uint8Array, wanted: number): { start: number; end: number } {
  const view = new DataView(zkey.buffer, zkey.byteOffset, zkey.byteLength);
  let at = 12;
  for (let i = 0; i < view.getUint32(8, true); i++) {
    const type = view.getUint32(at, true);
    const size = Number(view.getBigUint64(at + 4, true));
    if (type === wanted) return { start: at + 12, end: at + 12 + size };
    at += 12 + size;
  }
  throw new Error(`no section ${wanted}`);
}

describe("circuits add checks the pins", () => {
  test("a witness wasm that is not a pinned one (the shipped wasm plus a custom section) is refused, nothing stored", async () => {
    // A custom section (id 0): name "x", one byte. Valid WebAssembly, other bytes.
    const wasm = new Uint8Array([...files.wasm, 0, 3, 1, 0x78, 0x2a]);
    const db = join(tmp, "wasm.db");
    const refused = await add(ceremonyDir("altered-wasm", { wasm }), db);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is not for a pinned circuit: the witness wasm (SHA-256 ");
    expect(refused.stderr).toContain("is not a pinned one");
    expect(await stored(db)).toEqual([]);
  });

  test("a zkey whose constraints are not the pinned circuit's is refused, nothing stored", async () => {
    const zkey = new Uint8Array(files.zkey);
    const coefs = section(zkey, 4);
    zkey[coefs.start + 40] = zkey[coefs.start + 40]! ^ 1;
    const db = join(tmp, "zkey.db");
    const refused = await add(ceremonyDir("altered-zkey", { zkey }), db);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("the zkey is not for the pinned agent_identity circuit (coefsSha256 ");
    expect(await stored(db)).toEqual([]);
  });

  test("the unaltered directory is added", async () => {
    const db = join(tmp, "ok.db");
    const added = await add(ceremonyDir("shipped"), db);
    expect(added.stderr).toBe("");
    expect(added.code).toBe(0);
    expect(await stored(db)).toHaveLength(1);
  });
});
