// Circuits as versioned data (issue 17, docs/trust.md): which circuit new
// challenges use and which key verifies a challenge's proof, as every node
// sees it. Like the receipt signing keys (src/receipts/signer.ts), the view is
// read from the store and kept for CIRCUIT_REFRESH_MS, so an activation or a
// retirement made by any process (the CLI, another node) holds everywhere
// within that time, without a restart.
//
// The service holds one verifier per circuit (each its own WebAssembly
// instance with that circuit's key), built on first use: the shipped
// circuit's is the one main.ts wires (batched, maybe threaded); the others
// come from `verifierFor`.
import { recheckStoredTranscript } from "../ceremony/ceremony";
import { CEREMONY_FILE_LIMITS } from "../ceremony/limits";
import { CeremonyError, parseTranscript } from "../ceremony/transcript";
import { sha256Hex as sha256, vkHash } from "../receipts/circuit";
import type { CircuitRecord, CircuitWithArtifacts, CircuitsStore } from "../store/circuits/records";
import type { SnarkjsVerificationKey, Verifier } from "../verifier/types";
import { Refreshing } from "../refreshing";
import { listingOf } from "./listing";
import { pinnedArtifacts } from "./pins";
import { budgetCircuit, budgetFile, isBudgetCircuitId } from "./budget";
import { SemaphoreCircuits, semaphoreDepthOf, semaphoreFile } from "./semaphore";
import { shippedFile } from "./shipped";
import { circuitIdOf, SHIPPED_CIRCUIT_ID, SHIPPED_VK_HASH } from "./version";

export { circuitIdOf, SHIPPED_CIRCUIT_ID, SHIPPED_VK_HASH } from "./version";

/** How long a node keeps the circuits it read before asking the store again. */
export const CIRCUIT_REFRESH_MS = 5_000;

/**
 * An id the node's view lacks is looked for in the store again once the view
 * is this old. Another node that read the store later may already issue
 * challenges naming a circuit added since (`circuits add` then `activate`):
 * its agents download that circuit and submit proofs to this node at once,
 * not CIRCUIT_REFRESH_MS later. Ids nobody added (the public
 * GET /v1/circuits/{id}) cost at most one store read per this interval.
 */
export const UNKNOWN_REREAD_MS = 100;

/**
 * What a circuit's phase 2 is: the shipped circuit's was made by this project
 * (a development setup, docs/trust.md); any other was added by the operator
 * from a ceremony that verified (zkagent circuits add).
 */
export const setupOf = (id: string): "development" | "operator" | "semaphore" =>
  id === SHIPPED_CIRCUIT_ID || isBudgetCircuitId(id) ? "development" : semaphoreDepthOf(id) !== null ? "semaphore" : "operator";

/**
 * A verified ceremony's files as the store keeps them. `files` must have
 * passed verifyCeremony. The witness wasm must be a pinned one and the zkey
 * for its circuit (src/circuits/pins.ts): the service never stores what an
 * agent would refuse. The transcript stored is rebuilt from its known fields
 * (parseTranscript, within CEREMONY_FILE_LIMITS.transcript), never the bytes
 * as handed over, and what the list shows of it (its hash, its summary) is
 * computed here, once (src/circuits/listing.ts).
 */
export function circuitRecordOf(files: { zkey: Uint8Array; wasm: Uint8Array; vk: Uint8Array; transcript: Uint8Array }, now: number): CircuitWithArtifacts {
  const pinned = pinnedArtifacts(files.wasm, files.zkey);
  if (!pinned.ok) throw new CeremonyError(pinned.reason);
  if (files.transcript.length > CEREMONY_FILE_LIMITS.transcript) {
    throw new CeremonyError(`the transcript is ${files.transcript.length} bytes, more than the ${CEREMONY_FILE_LIMITS.transcript} accepted`);
  }
  const listing = listingOf(parseTranscript(files.transcript));
  const vk = JSON.parse(new TextDecoder().decode(files.vk));
  const hash = vkHash(vk);
  return {
    id: circuitIdOf(hash),
    state: "accepted",
    vk: JSON.stringify(vk),
    vkHash: hash,
    zkeySha256: sha256(files.zkey),
    wasmSha256: sha256(files.wasm),
    transcript: listing.transcript,
    transcriptSha256: listing.transcriptSha256,
    ceremony: listing.ceremony,
    refused: null,
    createdAt: now,
    activatedAt: null,
    retiredAt: null,
    zkey: files.zkey,
    wasm: files.wasm,
  };
}

/**
 * Gives every row stored before listings were (transcriptSha256 null, not
 * refused) its listing, once: the stored transcript is re-checked
 * (recheckStoredTranscript: form, size, pinned circuit and ptau, step order,
 * the row's wasm and zkey, the zkey's own contributions) and the row's wasm
 * and zkey against the pins. A row that passes is served its rebuilt
 * transcript from then on; one that does not is marked refused and not
 * served (the list leaves it out; its routes answer circuit_not_served).
 * Nodes starting together may both rebuild a row: the store keeps the first.
 */
export async function rebuildCircuitListings(store: CircuitsStore): Promise<{ rebuilt: string[]; refused: { id: string; reason: string }[] }> {
  const done = { rebuilt: [] as string[], refused: [] as { id: string; reason: string }[] };
  const pending = (await store.listCircuits()).filter((c) => c.transcriptSha256 === null && c.refused === null);
  if (pending.length === 0) return done;
  for (const c of pending) {
    const [zkey, wasm] = await Promise.all([store.circuitArtifact(c.id, "zkey"), store.circuitArtifact(c.id, "wasm")]);
    if (!zkey || !wasm) continue;
    const pinned = pinnedArtifacts(wasm, zkey);
    const checked = pinned.ok ? await recheckStoredTranscript(c.transcript, { wasmSha256: c.wasmSha256, zkeySha256: c.zkeySha256, zkey }) : pinned;
    if (checked.ok) {
      if (await store.rebuildCircuitListing(c.id, listingOf(checked.transcript))) done.rebuilt.push(c.id);
    } else if (await store.rebuildCircuitListing(c.id, { refused: checked.reason })) done.refused.push({ id: c.id, reason: checked.reason });
  }
  return done;
}

/** The shipped circuit as a store row: the first start seeds it (active when no circuit is). */
export async function shippedCircuitRecord(now: number): Promise<CircuitWithArtifacts> {
  const [zkey, wasm, vk, transcript] = await Promise.all([shippedFile("zkey"), shippedFile("wasm"), shippedFile("vk"), shippedFile("transcript")]);
  return circuitRecordOf({ zkey, wasm, vk, transcript }, now);
}

/**
 * Stores the shipped circuit unless the store holds it already. Only a first
 * start reads and hashes its 1.8 MB of artifacts and sends them to the store;
 * every later start (each node's, each restart) asks for one small row.
 * Nodes starting together may both find it absent: addCircuit keeps one.
 */
export async function seedShippedCircuit(store: CircuitsStore, now: number): Promise<void> {
  if (await store.getCircuit(SHIPPED_CIRCUIT_ID)) return;
  await store.addCircuit(await shippedCircuitRecord(now));
}

/** How a challenge's circuit verifies: with its key, or not at all (retired). */
export type CircuitVerifier =
  | { ok: true; id: string; vkHash: string; verifier: Verifier }
  | { ok: false; id: string; vkHash: string; reason: "circuit_retired" };

export class UnknownCircuitError extends Error {}

export interface CircuitRegistryOptions {
  /** The shipped circuit's verifier (main.ts: batched, maybe on a thread). */
  shipped: Verifier;
  /** Builds the verifier of another circuit's key, once per circuit per process. */
  verifierFor: (vk: SnarkjsVerificationKey) => Promise<Verifier>;
  refreshMs?: number;
  now?: () => number;
}

interface View {
  byId: Map<string, CircuitRecord>;
  active: CircuitRecord | null;
}

export class CircuitRegistry {
  private readonly view: Refreshing<View>;
  private readonly verifiers = new Map<string, Promise<Verifier>>();
  private readonly artifacts = new Map<string, Promise<Uint8Array | null>>();
  /** The Semaphore v4 circuits (group challenges): from the installed package, pinned, never in the store. */
  readonly semaphore = new SemaphoreCircuits();

  constructor(
    private readonly store: CircuitsStore,
    private readonly options: CircuitRegistryOptions,
  ) {
    this.view = new Refreshing(
      async () => {
        const circuits = await store.listCircuits();
        return { byId: new Map(circuits.map((c) => [c.id, c])), active: circuits.find((c) => c.state === "active") ?? null };
      },
      options.refreshMs ?? CIRCUIT_REFRESH_MS,
      options.now,
    );
    this.verifiers.set(SHIPPED_CIRCUIT_ID, Promise.resolve(options.shipped));
  }

  /** Every circuit as of at most refreshMs ago, oldest first (GET /v1/circuits). */
  async list(): Promise<CircuitRecord[]> {
    return [...(await this.view.get()).byId.values(), ...(await this.semaphore.all()), budgetCircuit()];
  }

  async get(id: string): Promise<CircuitRecord | null> {
    return (await this.lookup(id)) ?? null;
  }

  /**
   * The circuit new challenges use: the active one. A store nobody seeded
   * (tests that build the app alone) has none: then the shipped circuit.
   */
  async active(): Promise<{ id: string; vkHash: string }> {
    const { active } = await this.view.get();
    return active ? { id: active.id, vkHash: active.vkHash } : { id: SHIPPED_CIRCUIT_ID, vkHash: SHIPPED_VK_HASH };
  }

  /**
   * The verifier for a challenge's circuit (null: a row from before circuits
   * were versioned, the shipped one). A retired circuit verifies nothing.
   * Throws UnknownCircuitError for an id the store does not hold (circuits
   * are never deleted, so that is a fault, not a verdict).
   */
  async verifierFor(circuitId: string | null | undefined): Promise<CircuitVerifier> {
    const id = circuitId ?? SHIPPED_CIRCUIT_ID;
    const record = await this.lookup(id);
    if (record?.state === "retired") return { ok: false, id, vkHash: record.vkHash, reason: "circuit_retired" };
    if (!record && id !== SHIPPED_CIRCUIT_ID) throw new UnknownCircuitError(`no circuit ${id}`);
    let verifier = this.verifiers.get(id);
    if (!verifier) {
      verifier = this.options.verifierFor(JSON.parse(record!.vk));
      // A key that fails to load is tried again by the next proof, not cached as a failure.
      verifier.catch(() => this.verifiers.delete(id));
      this.verifiers.set(id, verifier);
    }
    return { ok: true, id, vkHash: record?.vkHash ?? SHIPPED_VK_HASH, verifier: await verifier };
  }

  /**
   * One artifact of a circuit, or null when there is no such circuit. Kept in
   * memory once read: a circuit's artifacts never change (its id is its key's hash).
   */
  artifact(id: string, kind: "zkey" | "wasm"): Promise<Uint8Array | null> {
    const key = `${kind}:${id}`;
    let bytes = this.artifacts.get(key);
    if (!bytes) {
      const depth = semaphoreDepthOf(id);
      bytes = isBudgetCircuitId(id) ? budgetFile(kind) : depth === null ? this.store.circuitArtifact(id, kind) : semaphoreFile(depth, kind);
      bytes.then(
        (b) => b ?? this.artifacts.delete(key),
        () => this.artifacts.delete(key),
      );
      this.artifacts.set(key, bytes);
    }
    return bytes;
  }

  /** Releases the verifiers built here (not the shipped one: its owner closes it). */
  async close(): Promise<void> {
    for (const [id, verifier] of this.verifiers) {
      if (id === SHIPPED_CIRCUIT_ID) continue;
      const v = (await verifier.catch(() => null)) as (Verifier & { close?: () => void }) | null;
      v?.close?.();
    }
  }

  /** A circuit by id: from the view, or from the store when the view lacks it and is UNKNOWN_REREAD_MS old. */
  private async lookup(id: string): Promise<CircuitRecord | undefined> {
    if (semaphoreDepthOf(id) !== null) return (await this.semaphore.byId(id)) ?? undefined;
    if (isBudgetCircuitId(id)) return budgetCircuit();
    const record = (await this.view.get()).byId.get(id);
    // The shipped id is never unknown: an unseeded store verifies with it (active()).
    if (record || id === SHIPPED_CIRCUIT_ID || this.view.age() < UNKNOWN_REREAD_MS) return record;
    return (await this.view.reload()).byId.get(id);
  }
}
