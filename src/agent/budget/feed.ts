// The group's notes tree as the agent syncs it (docs/protocol.md, "Roots"):
//
//   GET {service}/v1/groups/{id}/notes?offset=N   (no API key)
//   → {group_id, size, offset, notes: [cm…], next_offset, checkpoints: [{sequence, size, root, at}…]}
//
// Leaf 0 is the fixed genesis leaf (never listed); notes are leaves 1 on.
// The agent keeps every leaf it has seen (in this process and on disk under
// the cache rules) and asks only for what follows. Nothing served is used
// unchecked: the newest checkpoint's root must be the root of the agent's
// own first `size` leaves, and sizes never shrink, so a service that
// rewrites a leaf the agent has seen is refused, never followed.
//
// What it hides: which note is the member's. It downloads every note, never
// its own path, and asks the same whoever it is. What it reveals: that some
// member (or anyone) read the feed, when, and from which offset (how much it
// had read before).
import { createHash } from "node:crypto";
import { join } from "node:path";
import { acceptedSource, readBounded } from "../../bounded-fetch";
import { cacheDir, readCacheFile, writeCacheFile } from "../../cache-file";
import { NOTES_GENESIS_LEAF } from "../../budgets/encoding";
import { LeanTree, NODE_BYTES, readNode, writeNode } from "../../groups/lean-tree";
import { parseFieldElement } from "../../identity/field";
import { BudgetSpendError } from "./error";
import { serviceKey } from "./membership";

export interface Checkpoint {
  sequence: number;
  size: number;
  root: bigint;
  at: string;
}

export interface NotesFeed {
  /** Every leaf, the genesis leaf first. */
  tree: LeanTree;
  /** The checkpoints the service named last, newest last. */
  checkpoints: Checkpoint[];
  /** The leaf index of a commitment, or null. */
  indexOf(commitment: bigint): number | null;
  /** The newest checkpoint (the one every spend names). */
  newest: Checkpoint;
}

export interface FeedOptions {
  fetch?: typeof fetch;
  allowInsecureLoopback?: boolean;
  /** Milliseconds each page may take (default 60 s). */
  timeoutMs?: number;
  /** Where leaves are kept between processes; default $XDG_CACHE_HOME/zkagent/budget-notes, false for none. */
  notesCache?: string | false;
}

const FORMAT = "zkagent-budget-notes/1";
const MAX_PAGE_BYTES = 16 << 20;
const MAX_FILE_BYTES = 1 << 30;
const memory = new Map<string, bigint[]>();
/** The last feed state this process read, by service and group: its ETag and checkpoints (a 304 to If-None-Match reuses them). */
const states = new Map<string, { etag: string; size: number; checkpoints: Checkpoint[] }>();

const fail = (what: string) => new BudgetSpendError("sync", what);

function cachePath(dir: string, service: string, groupId: string): string {
  return join(dir, `${createHash("sha256").update(`${service}\n${groupId}`).digest("hex")}.notes`);
}

function readKept(path: string, service: string, groupId: string): bigint[] | null {
  const bytes = readCacheFile(path, MAX_FILE_BYTES);
  if (typeof bytes === "string") return null;
  const newline = bytes.indexOf(10);
  if (newline < 0) return null;
  try {
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(0, newline)));
    const payload = bytes.subarray(newline + 1);
    if (header.format !== FORMAT || header.service !== service || header.group !== groupId || payload.length !== header.size * NODE_BYTES) return null;
    if (createHash("sha256").update(payload).digest("hex") !== header.content) return null;
    const leaves: bigint[] = [];
    for (let at = 0; at < payload.length; at += NODE_BYTES) leaves.push(readNode(payload, at));
    return leaves[0] === NOTES_GENESIS_LEAF ? leaves : null;
  } catch {
    return null;
  }
}

function keep(dir: string, path: string, service: string, groupId: string, leaves: bigint[]): void {
  const payload = new Uint8Array(leaves.length * NODE_BYTES);
  leaves.forEach((leaf, i) => writeNode(payload, i * NODE_BYTES, leaf));
  const header = { format: FORMAT, service, group: groupId, size: leaves.length, content: createHash("sha256").update(payload).digest("hex") };
  writeCacheFile(dir, path, [new TextEncoder().encode(`${JSON.stringify(header)}\n`), payload]);
}

function parseCheckpoints(value: unknown, size: number, url: string): Checkpoint[] {
  if (!Array.isArray(value) || value.length === 0) throw fail(`GET ${url}: no checkpoints`);
  const out: Checkpoint[] = [];
  for (const c of value) {
    const root = typeof c?.root === "string" ? parseFieldElement(c.root) : null;
    if (!Number.isSafeInteger(c?.sequence) || !Number.isSafeInteger(c?.size) || c.size < 1 || c.size > size || root === null || typeof c.at !== "string")
      throw fail(`GET ${url}: a checkpoint is not {sequence, size ≤ ${size}, root, at}`);
    const last = out[out.length - 1];
    if (last && (c.sequence <= last.sequence || c.size < last.size)) throw fail(`GET ${url}: checkpoints are not in order, newest last`);
    out.push({ sequence: c.sequence, size: c.size, root, at: c.at });
  }
  return out;
}

/**
 * The group's notes, brought up to the service's current size from what this
 * agent kept, and its checkpoints; BudgetSpendError "sync" when an answer is
 * malformed or the newest checkpoint's root is not the root of the agent's
 * own leaves (a rewritten history: the kept leaves stay as they were).
 */
export async function syncNotes(service: string, groupId: string, options: FeedOptions = {}): Promise<NotesFeed> {
  const base = new URL(service);
  if (!acceptedSource(base, options.allowInsecureLoopback)) throw fail(`${service}: the service must be https:// (http:// only on a loopback address)`);
  const key = serviceKey(service);
  const dir = options.notesCache === undefined ? cacheDir("budget-notes") : options.notesCache;
  const path = dir === false ? null : cachePath(dir, key, groupId);
  const memoryKey = `${key}\n${groupId}`;
  const held = memory.get(memoryKey) ?? (path ? readKept(path, key, groupId) : null) ?? [NOTES_GENESIS_LEAF];
  const leaves = [...held];
  let checkpoints: Checkpoint[] = [];
  let size = 0;
  for (let offset = leaves.length; ; ) {
    const url = new URL(`${base.pathname.replace(/\/$/, "")}/v1/groups/${encodeURIComponent(groupId)}/notes`, base);
    url.searchParams.set("offset", String(offset));
    const timeoutMs = options.timeoutMs ?? 60_000;
    const signal = AbortSignal.timeout(timeoutMs);
    // Polled while waiting for a checkpoint: the state read last is named, and an unchanged feed answers 304 without a body.
    const known = states.get(memoryKey);
    const headers: Record<string, string> = { accept: "application/json" };
    if (known && known.size === leaves.length && offset === held.length) headers["if-none-match"] = known.etag;
    let response: Response;
    try {
      response = await (options.fetch ?? fetch)(url.href, { redirect: "error", signal, headers });
    } catch (error) {
      throw fail(`GET ${url}: ${signal.aborted ? `no answer within ${timeoutMs / 1000} s` : (error as Error).message}`);
    }
    if (response.status === 304 && headers["if-none-match"] !== undefined) {
      await response.body?.cancel();
      size = known!.size;
      checkpoints = known!.checkpoints;
      break;
    }
    if (!response.ok) {
      const said = await response.text().catch(() => "");
      throw fail(`GET ${url}: HTTP ${response.status} ${said.slice(0, 200)}`);
    }
    const body = await readBounded(response, MAX_PAGE_BYTES).catch(() => null);
    if (body === null) throw fail(`GET ${url}: the answer passes ${MAX_PAGE_BYTES} bytes or did not arrive`);
    let page: Record<string, unknown>;
    try {
      page = JSON.parse(new TextDecoder().decode(body.bytes));
    } catch {
      throw fail(`GET ${url}: the answer is not JSON`);
    }
    if (page.group_id !== groupId) throw fail(`GET ${url}: the answer is for group ${String(page.group_id)}`);
    if (!Number.isSafeInteger(page.size) || (page.size as number) < 1 || page.offset !== offset || !Array.isArray(page.notes))
      throw fail(`GET ${url}: size, offset or notes is not what was asked`);
    size = page.size as number;
    if (size < held.length)
      throw fail(`the service now serves ${size} notes of group ${groupId}, this agent has seen ${held.length}: notes are only ever appended; refused`);
    for (const note of page.notes) {
      const value = typeof note === "string" ? parseFieldElement(note) : null;
      if (value === null) throw fail(`GET ${url}: note ${leaves.length} is not a decimal field element`);
      leaves.push(value);
    }
    if (leaves.length > size) throw fail(`GET ${url}: more notes than the size it names`);
    checkpoints = parseCheckpoints(page.checkpoints, size, url.href);
    const etag = response.headers.get("etag");
    if (etag) states.set(memoryKey, { etag, size, checkpoints });
    else states.delete(memoryKey);
    const next = page.next_offset;
    if (next === null || next === undefined) break;
    if (next !== leaves.length || page.notes.length === 0)
      throw fail(`GET ${url}: next_offset ${String(next)} does not follow the ${leaves.length} notes read`);
    offset = next as number;
  }
  if (leaves.length !== size) throw fail(`group ${groupId}: ${leaves.length} notes read, ${size} announced`);
  const tree = LeanTree.fromLeaves(leaves);
  const newest = checkpoints[checkpoints.length - 1]!;
  if (tree.rootOf(newest.size) !== newest.root)
    throw fail(
      `the newest checkpoint of group ${groupId} (sequence ${newest.sequence}, ${newest.size} notes) has root ${newest.root}, not the root of the notes this agent read: the service rewrote the notes feed; refused`,
    );
  if (leaves.length > held.length) {
    memory.set(memoryKey, leaves);
    if (path && dir) keep(dir, path, key, groupId, leaves);
  }
  const positions = new Map<bigint, number>();
  leaves.forEach((leaf, i) => {
    if (i > 0 && !positions.has(leaf)) positions.set(leaf, i);
  });
  return { tree, checkpoints, newest, indexOf: (commitment) => positions.get(commitment) ?? null };
}

/** Forgets what this process holds of a group's notes (tests). @internal */
export const forgetNotes = (): void => {
  memory.clear();
  states.clear();
};
