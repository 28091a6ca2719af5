// Circuits as versioned data (issue 17), part of the one store contract
// (contract.ts runs it against SQLite and PostgreSQL): the first circuit
// becomes active, later ones are accepted, activation demotes the active one,
// a retired circuit stays retired, artifacts come back byte for byte, and a
// challenge keeps the circuit it was created with (in a group write too).
import { describe, expect, test } from "bun:test";
import type { CircuitWithArtifacts, Store } from "../../src/store/interface";
import { makeChallenge, makeKey, T0 } from "./contract";

let n = 0;
export const makeCircuit = (overrides: Partial<CircuitWithArtifacts> = {}): CircuitWithArtifacts => {
  const i = ++n;
  const zkey = new Uint8Array(4096).map((_, j) => (j * 7 + i) & 0xff);
  zkey[0] = 0; // a NUL byte: artifacts are binary, not text
  return {
    id: `agent_identity-${i.toString(16).padStart(16, "0")}`,
    state: "accepted",
    vk: JSON.stringify({ protocol: "groth16", n: i }),
    vkHash: `sha256:${"ab".repeat(32)}`,
    zkeySha256: "cd".repeat(32),
    wasmSha256: "ef".repeat(32),
    transcript: JSON.stringify({ format: "zkagent-ceremony/1", steps: [i] }),
    transcriptSha256: i.toString(16).padStart(64, "0"),
    ceremony: { contributions: [{ name: `c${i}`, hash: "12".repeat(64) }], beacon: null, ptau: { name: "p", blake2b512: "34".repeat(64) } },
    refused: null,
    createdAt: T0 + i,
    activatedAt: null,
    retiredAt: null,
    zkey,
    wasm: new Uint8Array([0, 97, 115, 109, i & 0xff]),
    ...overrides,
  };
};

const record = ({ zkey: _z, wasm: _w, ...rest }: CircuitWithArtifacts) => rest;

export function circuitContract(current: () => Store): void {
  describe("circuits", () => {
    test("the first circuit added is active, later ones accepted; adding again changes nothing", async () => {
      const store = current();
      const first = makeCircuit({ state: "accepted" });
      const second = makeCircuit({ state: "active" });
      expect(await store.addCircuit(first)).toEqual({ added: true, state: "active" });
      expect(await store.addCircuit(second)).toEqual({ added: true, state: "accepted" });
      expect(await store.addCircuit({ ...first, vk: "{}" })).toEqual({ added: false, state: "active" });
      expect(await store.listCircuits()).toEqual([
        { ...record(first), state: "active", activatedAt: first.createdAt },
        { ...record(second), state: "accepted" },
      ]);
      expect(await store.getCircuit(second.id)).toEqual({ ...record(second), state: "accepted" });
      expect(await store.getCircuit("agent_identity-none")).toBeNull();
    });

    test("a listing is stored with the circuit; a row without one is rebuilt once, or refused once, and then never changes", async () => {
      const store = current();
      const listed = makeCircuit();
      const legacy = makeCircuit({ transcriptSha256: null, ceremony: null });
      const lying = makeCircuit({ transcriptSha256: null, ceremony: null });
      for (const c of [listed, legacy, lying]) await store.addCircuit(c);
      expect(await store.getCircuit(listed.id)).toMatchObject({ transcriptSha256: listed.transcriptSha256, ceremony: listed.ceremony, refused: null });
      expect(await store.getCircuit(legacy.id)).toMatchObject({ transcriptSha256: null, ceremony: null, refused: null });

      const rebuilt = { transcript: '{"format":"zkagent-ceremony/1"}\n', transcriptSha256: "9".repeat(64), ceremony: listed.ceremony! };
      expect(await store.rebuildCircuitListing(legacy.id, rebuilt)).toBe(true);
      expect(await store.rebuildCircuitListing(lying.id, { refused: 'step 2 has the unknown label "review"' })).toBe(true);
      // Done once: a second rebuild (another node starting) changes nothing, a stored listing is never rebuilt.
      expect(await store.rebuildCircuitListing(legacy.id, { refused: "late" })).toBe(false);
      expect(await store.rebuildCircuitListing(lying.id, rebuilt)).toBe(false);
      expect(await store.rebuildCircuitListing(listed.id, rebuilt)).toBe(false);
      expect(await store.rebuildCircuitListing("agent_identity-none", rebuilt)).toBe(false);
      expect(await store.rebuildCircuitListing("nul\0", rebuilt)).toBe(false);

      expect(await store.getCircuit(legacy.id)).toEqual({
        ...record(legacy),
        transcript: rebuilt.transcript,
        transcriptSha256: rebuilt.transcriptSha256,
        ceremony: rebuilt.ceremony,
      });
      expect(await store.getCircuit(lying.id)).toEqual({ ...record(lying), refused: 'step 2 has the unknown label "review"' });
      expect(await store.getCircuit(listed.id)).toEqual({ ...record(listed), state: "active", activatedAt: listed.createdAt });
    });

    test("artifacts come back byte for byte", async () => {
      const store = current();
      const circuit = makeCircuit();
      await store.addCircuit(circuit);
      expect(await store.circuitArtifact(circuit.id, "zkey")).toEqual(circuit.zkey);
      expect(await store.circuitArtifact(circuit.id, "wasm")).toEqual(circuit.wasm);
      expect(await store.circuitArtifact("nope", "zkey")).toBeNull();
      expect(await store.circuitArtifact("nul\0", "wasm")).toBeNull();
    });

    test("activate demotes the active one to accepted; retire takes only an accepted one, and a retired one is never revived", async () => {
      const store = current();
      const a = makeCircuit();
      const b = makeCircuit();
      await store.addCircuit(a);
      await store.addCircuit(b);
      expect(await store.retireCircuit(a.id, T0 + 10)).toBe("active");
      expect(await store.activateCircuit(b.id, T0 + 20)).toBe("activated");
      expect(await store.activateCircuit(b.id, T0 + 21)).toBe("already_active");
      expect((await store.getCircuit(a.id))!.state).toBe("accepted");
      expect(await store.getCircuit(b.id)).toMatchObject({ state: "active", activatedAt: T0 + 20 });
      expect(await store.retireCircuit(a.id, T0 + 30)).toBe("retired");
      expect(await store.retireCircuit(a.id, T0 + 31)).toBe("already_retired");
      expect(await store.getCircuit(a.id)).toMatchObject({ state: "retired", retiredAt: T0 + 30 });
      expect(await store.activateCircuit(a.id, T0 + 40)).toBe("retired");
      expect(await store.addCircuit(a)).toEqual({ added: false, state: "retired" });
      expect(await store.activateCircuit("unknown", T0)).toBe("unknown");
      expect(await store.retireCircuit("unknown", T0)).toBe("unknown");
      expect((await store.listCircuits()).filter((c) => c.state === "active").map((c) => c.id)).toEqual([b.id]);
    });

    test("concurrent adds on an empty store make exactly one circuit active", async () => {
      const store = current();
      const circuits = Array.from({ length: 4 }, () => makeCircuit());
      const results = await Promise.all(circuits.map((c) => store.addCircuit(c)));
      expect(results.filter((r) => r.state === "active")).toHaveLength(1);
      expect((await store.listCircuits()).filter((c) => c.state === "active")).toHaveLength(1);
    });

    test("a challenge keeps the circuit it was created with, alone and in a group write", async () => {
      const store = current();
      const key = makeKey();
      await store.createKey(key);
      const named = makeChallenge(key.id, { circuitId: "agent_identity-0123456789abcdef" });
      const unnamed = makeChallenge(key.id);
      const group = Array.from({ length: 3 }, (_, i) => makeChallenge(key.id, { circuitId: `agent_identity-${i}` }));
      await Promise.all([named, unnamed, ...group].map((c) => store.createChallenge(c, { windowStart: T0, limit: 10 })));
      expect(await store.getChallenge(named.id)).toEqual(named);
      expect((await store.getChallenge(unnamed.id))!.circuitId ?? null).toBeNull();
      for (const c of group) expect((await store.getChallengeWithAgent(c.id))!.challenge.circuitId).toBe(c.circuitId!);
    });
  });
}
