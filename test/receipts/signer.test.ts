// The signer's view of the active key: cached for the refresh interval, then
// read again, so a rotation by another process is picked up without restart.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { newSigningKey } from "../../src/receipts/keys";
import { KEY_REFRESH_MS, ReceiptSigner } from "../../src/receipts/signer";
import type { Store } from "../../src/store/interface";
import { openSqlite } from "../../src/store/sqlite";

describe("ReceiptSigner", () => {
  let store: Store;
  let now: number;
  beforeEach(() => {
    store = openSqlite(":memory:");
    now = 1_000_000;
  });
  afterEach(() => store.close());

  test("creates the first key on an empty store, once, however many signers start together", async () => {
    const signers = Array.from({ length: 5 }, () => new ReceiptSigner(store));
    const kids = await Promise.all(signers.map((s) => s.activeKid()));
    expect(new Set(kids).size).toBe(1);
    expect(await store.listSigningKeys()).toHaveLength(1);
  });

  test("uses a stored key rather than creating one", async () => {
    const existing = await store.ensureSigningKey(await newSigningKey(1));
    expect(await new ReceiptSigner(store).activeKid()).toBe(existing.kid);
  });

  test(`a rotation is picked up once the ${KEY_REFRESH_MS} ms refresh interval has passed, not before`, async () => {
    const signer = new ReceiptSigner(store, { now: () => now });
    const first = await signer.activeKid();
    const next = await newSigningKey(2);
    await store.rotateSigningKey(next);
    now += KEY_REFRESH_MS - 1;
    expect(await signer.activeKid()).toBe(first);
    now += 1;
    expect(await signer.activeKid()).toBe(next.kid);
  });

  test("the JWKS follows retirement within the same interval", async () => {
    const signer = new ReceiptSigner(store, { now: () => now });
    const first = await signer.activeKid();
    await store.rotateSigningKey(await newSigningKey(2));
    expect((await signer.jwks()).keys).toHaveLength(2);
    await store.retireSigningKey(first, 3);
    now += KEY_REFRESH_MS - 1;
    expect((await signer.jwks()).keys.map((k) => k.kid)).toContain(first);
    now += 1;
    expect((await signer.jwks()).keys.map((k) => k.kid)).not.toContain(first);
  });

  test("a sealed key needs the secret: another process without it cannot sign", async () => {
    const secret = "s".repeat(40);
    const sealed = new ReceiptSigner(store, { secret });
    await sealed.activeKid();
    expect((await store.activeSigningKey())!.privateKey.startsWith("aes256gcm:")).toBe(true);
    await expect(new ReceiptSigner(store).activeKid()).rejects.toThrow(/RECEIPT_KEY_SECRET/);
  });
});
