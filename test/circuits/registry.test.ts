// The circuits as every node sees them (src/circuits/registry.ts): read from
// the store, kept for CIRCUIT_REFRESH_MS (5 s) and no longer, so an
// activation or a retirement by any process holds everywhere within 5 s.
import { describe, expect, test } from "bun:test";
import {
  CIRCUIT_REFRESH_MS,
  CircuitRegistry,
  SHIPPED_CIRCUIT_ID,
  SHIPPED_VK_HASH,
  seedShippedCircuit,
  UNKNOWN_REREAD_MS,
  UnknownCircuitError,
} from "../../src/circuits/registry";
import { openSqlite } from "../../src/store/sqlite";
import type { Verifier } from "../../src/verifier/types";
import { makeCircuit } from "../store/contract-circuits";

const fakeVerifier = (name: string): Verifier & { name: string } => ({ name, verify: () => ({ ok: true }) });

function setup() {
  const store = openSqlite(":memory:");
  let now = 1_000_000;
  const built: unknown[] = [];
  const shipped = fakeVerifier("shipped");
  const registry = new CircuitRegistry(store, {
    shipped,
    verifierFor: async (vk) => (built.push(vk), fakeVerifier(JSON.stringify(vk))),
    now: () => now,
  });
  return { store, registry, shipped, built, advance: (ms: number) => (now += ms), at: () => now };
}

describe("CircuitRegistry", () => {
  test("the refresh bound is 5 s", () => expect(CIRCUIT_REFRESH_MS).toBe(5_000));

  test("an activation by another process is seen after at most 5 s, not before", async () => {
    const { store, registry, advance, at } = setup();
    const first = makeCircuit();
    const next = makeCircuit();
    await store.addCircuit(first);
    await store.addCircuit(next);
    expect((await registry.active()).id).toBe(first.id);
    await store.activateCircuit(next.id, at());
    advance(CIRCUIT_REFRESH_MS - 1);
    expect((await registry.active()).id).toBe(first.id);
    advance(1);
    expect(await registry.active()).toEqual({ id: next.id, vkHash: next.vkHash });
  });

  test("a store with no circuit (never seeded) issues and verifies with the shipped circuit", async () => {
    const { registry, shipped } = setup();
    expect(await registry.active()).toEqual({ id: SHIPPED_CIRCUIT_ID, vkHash: SHIPPED_VK_HASH });
    const resolved = await registry.verifierFor(null);
    expect(resolved).toEqual({ ok: true, id: SHIPPED_CIRCUIT_ID, vkHash: SHIPPED_VK_HASH, verifier: shipped });
  });

  test("each circuit's verifier is built once from its own key; a retired circuit verifies nothing; an unknown id is a fault", async () => {
    const { store, registry, built, advance, at } = setup();
    const a = makeCircuit();
    const b = makeCircuit();
    await store.addCircuit(a);
    await store.addCircuit(b);
    const one = await registry.verifierFor(b.id);
    const two = await registry.verifierFor(b.id);
    expect(one.ok && two.ok && one.verifier === two.verifier).toBe(true);
    expect(built).toEqual([JSON.parse(b.vk)]);
    await store.retireCircuit(b.id, at());
    advance(CIRCUIT_REFRESH_MS);
    expect(await registry.verifierFor(b.id)).toEqual({ ok: false, id: b.id, vkHash: b.vkHash, reason: "circuit_retired" });
    await expect(registry.verifierFor("agent_identity-ffffffffffffffff")).rejects.toBeInstanceOf(UnknownCircuitError);
  });

  test("the shipped circuit is seeded once: a later start neither reads its artifacts nor writes them to the store", async () => {
    const { store, advance, at } = setup();
    const adds: string[] = [];
    const addCircuit = store.addCircuit.bind(store);
    store.addCircuit = (c) => (adds.push(c.id), addCircuit(c));
    await seedShippedCircuit(store, at());
    expect(adds).toEqual([SHIPPED_CIRCUIT_ID]);
    const seeded = await store.getCircuit(SHIPPED_CIRCUIT_ID);
    expect(seeded?.state).toBe("active");
    expect(seeded?.vkHash).toBe(SHIPPED_VK_HASH);
    expect((await store.circuitArtifact(SHIPPED_CIRCUIT_ID, "zkey"))?.byteLength).toBeGreaterThan(0);
    // A restart, and one after an operator moved on and retired it: no second add, no revival.
    advance(1);
    await seedShippedCircuit(store, at());
    const other = makeCircuit();
    await store.addCircuit(other);
    await store.activateCircuit(other.id, at());
    expect(await store.retireCircuit(SHIPPED_CIRCUIT_ID, at())).toBe("retired");
    await seedShippedCircuit(store, at());
    expect(adds).toEqual([SHIPPED_CIRCUIT_ID, other.id]);
    expect((await store.getCircuit(SHIPPED_CIRCUIT_ID))?.state).toBe("retired");
  });

  test("a circuit added after this node read the store is found at once when a challenge from another node names it", async () => {
    const { store, registry, advance, at } = setup();
    const first = makeCircuit();
    await store.addCircuit(first);
    expect((await registry.active()).id).toBe(first.id); // this node's view, read before the add
    const reads: number[] = [];
    const listCircuits = store.listCircuits.bind(store);
    store.listCircuits = () => (reads.push(at()), listCircuits());
    // Another process adds and activates a circuit; another node, reading the store now, issues challenges naming it.
    const next = makeCircuit();
    await store.addCircuit(next);
    await store.activateCircuit(next.id, at());
    const other = new CircuitRegistry(store, { shipped: fakeVerifier("shipped"), verifierFor: async () => fakeVerifier("x"), now: at });
    expect((await other.active()).id).toBe(next.id);
    reads.length = 0;
    // Well inside CIRCUIT_REFRESH_MS: the proof for that challenge reaches this node, and its agent fetched the circuit here.
    advance(UNKNOWN_REREAD_MS);
    const resolved = await registry.verifierFor(next.id);
    expect(resolved.ok && resolved.id === next.id && resolved.vkHash === next.vkHash).toBe(true);
    expect((await registry.get(next.id))?.vkHash).toBe(next.vkHash);
    expect(reads).toHaveLength(1);
    // An id nobody added: one store read per UNKNOWN_REREAD_MS however often it is asked for, then the fault.
    reads.length = 0;
    advance(UNKNOWN_REREAD_MS);
    await expect(registry.verifierFor("agent_identity-eeeeeeeeeeeeeeee")).rejects.toBeInstanceOf(UnknownCircuitError);
    for (let i = 0; i < 5; i++) expect(await registry.get("agent_identity-eeeeeeeeeeeeeeee")).toBeNull();
    expect(reads).toHaveLength(1);
  });
});
