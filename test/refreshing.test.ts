// Refreshing (src/refreshing.ts): what the receipt signer and the circuit
// registry rely on to see another process's change in bounded time.
import { expect, test } from "bun:test";
import { Refreshing } from "../src/refreshing";

function counter() {
  let t = 1_000;
  let reads = 0;
  const clock = { now: () => t, advance: (ms: number) => (t += ms) };
  const cache = new Refreshing(async () => ++reads, 5_000, clock.now);
  return { clock, cache, reads: () => reads };
}

test("kept for ttlMs, read again at ttlMs, and age counts from the read", async () => {
  const { clock, cache, reads } = counter();
  expect(cache.loaded).toBe(false);
  expect(cache.age()).toBe(Number.POSITIVE_INFINITY);
  expect(await cache.get()).toBe(1);
  expect(cache.loaded).toBe(true);
  clock.advance(4_999);
  expect(cache.age()).toBe(4_999);
  expect(await cache.get()).toBe(1);
  clock.advance(1);
  expect(await cache.get()).toBe(2);
  expect(reads()).toBe(2);
});

test("concurrent callers share one read; reload() reads now whatever the age", async () => {
  const { cache, reads } = counter();
  expect(await Promise.all([cache.get(), cache.get(), cache.reload()])).toEqual([1, 1, 1]);
  expect(reads()).toBe(1);
  expect(await cache.reload()).toBe(2);
});

test("a failed read keeps nothing: the next call reads again", async () => {
  let fail = true;
  const cache = new Refreshing(async () => {
    if (fail) throw new Error("store down");
    return "value";
  }, 5_000);
  await expect(cache.get()).rejects.toThrow("store down");
  expect(cache.loaded).toBe(false);
  fail = false;
  expect(await cache.get()).toBe("value");
});
