// The receipt check is for merchants and processors on Node as well as Bun,
// without the rest of zkagent: bundled for Node, verify.ts needs only `jose`,
// and it accepts a receipt made here and refuses a changed one.
import { expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { receiptFor } from "../../src/receipts/service";
import { ReceiptSigner } from "../../src/receipts/signer";
import { openSqlite } from "../../src/store/sqlite";
import { decidedChallenge } from "../support/receipts";

test("verifyReceipt bundled for Node imports only jose and checks receipts under node", async () => {
  const outdir = join(import.meta.dir, "../../build/receipts-node-test");
  rmSync(outdir, { recursive: true, force: true });
  const built = await Bun.build({ entrypoints: [join(import.meta.dir, "../../src/receipts/verify.ts")], outdir, target: "node", packages: "external" });
  expect(built.success).toBe(true);
  const bundle = readFileSync(join(outdir, "verify.js"), "utf8");
  const bareImports = [...bundle.matchAll(/from\s+["']([^"'./][^"']*)["']/g)].map((m) => m[1]);
  expect([...new Set(bareImports)]).toEqual(["jose"]);

  const store = openSqlite(":memory:");
  const record = await decidedChallenge(store, "5");
  const signer = new ReceiptSigner(store);
  const receipt = (await receiptFor({ store, signer, issuer: "https://zk.example" }, record))!;
  const jwks = await signer.jwks();
  await store.close();
  const [h, p, s] = receipt.split(".") as [string, string, string];
  const claims = JSON.parse(Buffer.from(p, "base64url").toString());
  const forged = [h, Buffer.from(JSON.stringify({ ...claims, status: "verified", sub: "mallory" })).toString("base64url"), s].join(".");

  const script = `
    import { verifyReceipt } from ${JSON.stringify(join(outdir, "verify.js"))};
    const jwks = ${JSON.stringify(jwks)};
    const good = await verifyReceipt(${JSON.stringify(receipt)}, jwks);
    const bad = await verifyReceipt(${JSON.stringify(forged)}, jwks);
    process.stdout.write(JSON.stringify({ good, bad }));`;
  // jose resolves from the repository's node_modules, as from a merchant's own.
  const child = Bun.spawnSync(["node", "--input-type=module", "-e", script], { cwd: outdir, stdout: "pipe", stderr: "pipe" });
  expect(child.stderr.toString()).toBe("");
  expect(child.exitCode).toBe(0);
  const { good, bad } = JSON.parse(child.stdout.toString());
  expect(good).toMatchObject({ valid: true, claims: { sub: claims.sub, iss: "https://zk.example" } });
  expect(bad).toMatchObject({ valid: false, reason: "bad_signature" });
});
