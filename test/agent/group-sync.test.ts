// The agent syncs a group instead of rebuilding it (issue 32) and proves in
// a growing group (issue 34 item 5), against a stand-in for the members
// route's changes feed on a real port (group-feed-server.ts) that counts the
// leaf records it serves. What is asserted: a second process downloads only
// the changes; a tampered cached tree and a lying change set are never proved
// with; removals reach the agent; members added after a challenge break
// nothing; the anonymity floor (issue 34 item 6).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import {
  ChallengeError,
  createSemaphoreIdentity,
  type GroupChallenge,
  GroupProofError,
  proveGroupChallenge,
  type SemaphoreIdentityKeys,
  syncGroupTree,
} from "../../src/agent";
import { LeanTree } from "../../src/groups/lean-tree";
import { treePath } from "../../src/agent/group/cache";
import { groupMessageOf } from "../../src/groups/derivation";
import { semaphoreTree } from "../support/lean-imt";
import { type FeedServer, startFeedServer } from "./group-feed-server";

setDefaultTimeout(60_000);

const ROOT = new URL("../../", import.meta.url).pathname;
let feed: FeedServer;
let dir: string;
const ids: SemaphoreIdentityKeys[] = Array.from({ length: 6 }, () => createSemaphoreIdentity());
const commitment = (i: number) => BigInt(ids[i]!.identity_commitment);
const filler = (n: number, from: number) => Array.from({ length: n }, (_, i) => BigInt(from + i) * 7_919n + 11n);

beforeAll(() => {
  feed = startFeedServer();
  dir = mkdtempSync(join(tmpdir(), "zkagent-group-sync-"));
});
afterAll(() => {
  feed.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A challenge for the group as it stands now (message and scope are arbitrary: the proof is checked by its statement). */
const challengeNow = (group: string, extra: Partial<GroupChallenge> = {}): GroupChallenge => {
  const state = feed.state(group);
  return {
    challenge_id: "ch_sync",
    nonce: "5a".repeat(31),
    action: "purchase",
    group_id: group,
    merkle_tree_root: state.root.toString(),
    merkle_tree_depth: 10,
    // The message a service derives from the nonce, action and context: the SDK refuses any other.
    message: groupMessageOf({ nonce: "5a".repeat(31), action: "purchase", context: {} }).toString(),
    scope: "77",
    circuit_id: "semaphore-test",
    size: state.size,
    ...extra,
  };
};
const cacheOf = (name: string) => join(dir, name);
const options = (cache: string, extra: Record<string, unknown> = {}) => ({ allowInsecureLoopback: true, treeCache: cache, precompute: false, ...extra });
const refusal = async (promise: Promise<unknown>): Promise<GroupProofError> => {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GroupProofError);
  return error as GroupProofError;
};

/** syncGroupTree in a new process (bun -e), as a later `zkagent prove` would: what it held and received. */
async function syncInNewProcess(group: string, cache: string): Promise<{ received: number; fromCache: boolean; root: string; version: number }> {
  const script = `
    import { syncGroupTree } from ${JSON.stringify(join(ROOT, "src/agent/index.ts"))};
    const s = await syncGroupTree(${JSON.stringify(feed.url)}, ${JSON.stringify(group)}, { treeCache: ${JSON.stringify(cache)}, allowInsecureLoopback: true });
    process.stdout.write(JSON.stringify({ received: s.received, fromCache: s.fromCache, root: s.tree.root.toString(), version: s.version }));`;
  const child = Bun.spawn([process.execPath, "-e", script], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`the second process failed: ${err}`);
  return JSON.parse(out);
}

describe("syncing instead of rebuilding", () => {
  test("a second process downloads only the changes since the version it kept, and gets the served root", async () => {
    const cache = cacheOf("second-process");
    feed.add("fleet", [...filler(2_400, 1), commitment(0)]);
    feed.served.records = 0;
    const first = await syncInNewProcess("fleet", cache);
    expect(first).toMatchObject({ received: 2_401, fromCache: false, root: feed.state("fleet").root.toString() });
    expect(feed.served.records).toBe(2_401); // three pages of at most 1,000

    feed.add("fleet", filler(30, 10_000));
    feed.remove("fleet", filler(1, 5)[0]!);
    feed.served.records = 0;
    const second = await syncInNewProcess("fleet", cache);
    expect(feed.served.records).toBe(31); // 30 added, 1 removed: nothing else
    expect(second).toMatchObject({ received: 31, fromCache: true, root: feed.state("fleet").root.toString(), version: feed.state("fleet").version });
    // The root is lean-imt's for the whole list, removal included.
    const leaves = [...filler(2_400, 1), commitment(0), ...filler(30, 10_000)];
    leaves[4] = 0n;
    expect(second.root).toBe(semaphoreTree(leaves).root.toString());

    // Nothing changed: nothing but the head is served.
    feed.served.records = 0;
    expect((await syncInNewProcess("fleet", cache)).received).toBe(0);
    expect(feed.served.records).toBe(0);
  });

  test("the cache: 0700 directory, 0600 file named for the service and group, no stray temporary file", async () => {
    const cache = cacheOf("modes");
    feed.add("modes", filler(5, 1));
    await syncGroupTree(feed.url, "modes", { treeCache: cache, allowInsecureLoopback: true });
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    const path = treePath(cache, feed.url, "modes");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(cache)).toEqual([path.slice(cache.length + 1)]);
    expect(treePath(cache, feed.url, "other")).not.toBe(path);
    expect(treePath(cache, "https://zkagent.example", "modes")).not.toBe(path);
  });

  test("removals reach the agent: the removed member is refused, the others prove against the new root", async () => {
    const cache = cacheOf("removals");
    feed.add("removals", [commitment(0), commitment(1), commitment(2), commitment(3)]);
    const before = await proveGroupChallenge({ privateKey: ids[1]!.private_key, challenge: challengeNow("removals"), service: feed.url }, options(cache));
    expect(before.merkleTreeRoot).toBe(feed.state("removals").root.toString());
    feed.remove("removals", commitment(1));
    feed.served.records = 0;
    const refused = await refusal(
      proveGroupChallenge({ privateKey: ids[1]!.private_key, challenge: challengeNow("removals"), service: feed.url }, options(cache)),
    );
    expect(refused.code).toBe("not_member");
    expect(feed.served.records).toBe(1); // the removal alone
    const after = await proveGroupChallenge({ privateKey: ids[2]!.private_key, challenge: challengeNow("removals"), service: feed.url }, options(cache));
    expect(after.merkleTreeRoot).toBe(feed.state("removals").root.toString());
    expect(after.merkleTreeRoot).not.toBe(before.merkleTreeRoot);
  });
});

describe("never proved with", () => {
  test("a challenge whose message is not the one its nonce, action and context give: refused before any member is read", async () => {
    feed.add("forged", [commitment(0), commitment(1), commitment(2)]);
    feed.served.records = 0;
    const refused = await proveGroupChallenge(
      { privateKey: ids[1]!.private_key, challenge: challengeNow("forged", { message: "4242" }), service: feed.url },
      options(cacheOf("forged")),
    ).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ChallengeError);
    expect((refused as ChallengeError).code).toBe("message_mismatch");
    expect(feed.served.records).toBe(0);
  });

  /** The tree file's parts, to tamper with. */
  const readFile = (path: string) => {
    const bytes = readFileSync(path);
    const newline = bytes.indexOf(10);
    return { header: JSON.parse(bytes.subarray(0, newline).toString()), payload: Buffer.from(bytes.subarray(newline + 1)) };
  };
  const writeFile = (path: string, header: Record<string, unknown>, payload: Buffer, rehash = true) => {
    const content = rehash ? createHash("sha256").update(payload).digest("hex") : header.content;
    writeFileSync(path, Buffer.concat([Buffer.from(`${JSON.stringify({ ...header, content })}\n`), payload]));
  };
  const setup = async (group: string) => {
    const cache = cacheOf(`tamper-${group}`);
    feed.add(group, [...filler(60, 1), commitment(0), commitment(1), ...filler(3, 500)]);
    await syncGroupTree(feed.url, group, { treeCache: cache, allowInsecureLoopback: true });
    return { cache, path: treePath(cache, feed.url, group) };
  };
  /** A new process's view: the in-memory tree is not what is tested, the file is. */
  const proveFresh = async (group: string, cache: string) => {
    const script = `
      import { proveGroupChallenge } from ${JSON.stringify(join(ROOT, "src/agent/index.ts"))};
      const proof = await proveGroupChallenge({ privateKey: ${JSON.stringify(ids[0]!.private_key)}, challenge: ${JSON.stringify(challengeNow(group))}, service: ${JSON.stringify(feed.url)} },
        { allowInsecureLoopback: true, treeCache: ${JSON.stringify(cache)}, precompute: false });
      process.stdout.write(JSON.stringify(proof));`;
    const child = Bun.spawn([process.execPath, "-e", script], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    if (code !== 0) throw new Error(err);
    return JSON.parse(out);
  };

  test("a cached tree with one byte changed fails its hash: dropped, synced from 0, and the proof is for the served root", async () => {
    const { cache, path } = await setup("tamper-byte");
    const { header, payload } = readFile(path);
    payload[40] ^= 1; // leaf 1
    writeFile(path, header, payload, false);
    feed.served.records = 0;
    const proof = await proveFresh("tamper-byte", cache);
    expect(feed.served.records).toBe(65); // every leaf again
    expect(proof.merkleTreeRoot).toBe(feed.state("tamper-byte").root.toString());
  });

  test("a node on the member's path changed and the hash recomputed: the path does not hash up to the root, so it is synced from 0, not proved with", async () => {
    const { cache, path } = await setup("tamper-path");
    const { header, payload } = readFile(path);
    // Level 1 (after 65 leaves), node 31: the sibling of leaf 60's parent (leaf 60 is the member; 60/2 = 30, sibling 31).
    payload[65 * 32 + 31 * 32 + 7] ^= 1;
    writeFile(path, header, payload);
    feed.served.records = 0;
    const proof = await proveFresh("tamper-path", cache);
    expect(feed.served.records).toBe(65);
    expect(proof.merkleTreeRoot).toBe(feed.state("tamper-path").root.toString());
  });

  test("another member's leaf replaced, every ancestor and the header recomputed: the root is not the served one; the resync from 0 disagrees with a leaf the agent holds, so nothing is proved until the cache is removed", async () => {
    const { cache, path } = await setup("tamper-leaf");
    const leaves = [...filler(60, 1), commitment(0), commitment(1), ...filler(3, 500)];
    leaves[3] = 999n; // a consistent tree of other leaves
    const forged = LeanTree.fromLeaves(leaves);
    const { header } = readFile(path);
    writeFile(path, { ...header, root: forged.root.toString() }, Buffer.concat(forged.payload()));
    feed.served.records = 0;
    // The agent cannot tell a file rewritten on its own disk from a service that rewrote its history: either way a
    // leaf it holds is another member in the service's answer, and it says so rather than pick one.
    await expect(proveFresh("tamper-leaf", cache)).rejects.toThrow(
      /rewrote the history of group tamper-leaf: leaf 3 was 999 .*remove the agent's group-tree cache/,
    );
    expect(feed.served.records).toBe(65);
    rmSync(path);
    const proof = await proveFresh("tamper-leaf", cache);
    expect(proof.merkleTreeRoot).toBe(feed.state("tamper-leaf").root.toString());
  });

  test("a served change set that does not give the served root is refused, from a kept tree and from nothing, and nothing is proved", async () => {
    const cache = cacheOf("liar");
    feed.add("liar", [commitment(0), ...filler(8, 1)]);
    await syncGroupTree(feed.url, "liar", { treeCache: cache, allowInsecureLoopback: true });
    feed.add("liar", filler(2, 100));
    // The service now changes one new leaf's value in every answer (the member's own leaf stays).
    feed.lie = (records) => records.map((r) => (r.index === 9 ? { ...r, value: r.value + 1n } : r));
    try {
      feed.served.records = 0;
      const error = await refusal(proveGroupChallenge({ privateKey: ids[0]!.private_key, challenge: challengeNow("liar"), service: feed.url }, options(cache)));
      expect(error.code).toBe("root_mismatch");
      expect(error.message).toContain(feed.state("liar").root.toString());
      // The kept tree's 2 changes, then every leaf from 0: the liar's set is never used.
      expect(feed.served.records).toBe(2 + 11);
    } finally {
      feed.lie = undefined;
    }
  });
});

describe("a service rewriting history", () => {
  test("a change that turns a member's leaf into another value (leaves are only added or removed) is refused, not applied", async () => {
    const cache = cacheOf("rewrite");
    feed.add("rewrite", [commitment(0), commitment(1), ...filler(6, 1)]);
    await syncGroupTree(feed.url, "rewrite", { treeCache: cache, allowInsecureLoopback: true });
    feed.remove("rewrite", filler(1, 1)[0]!); // leaf 2: one honest change to fetch
    feed.lie = (records) => [...records, { index: 5, value: 4242n }].sort((a, b) => a.index - b.index);
    try {
      const error = await refusal(
        proveGroupChallenge({ privateKey: ids[0]!.private_key, challenge: challengeNow("rewrite"), service: feed.url }, options(cache)),
      );
      expect(error.code).toBe("members");
      expect(error.message).toContain("leaf 5");
    } finally {
      feed.lie = undefined;
    }
  });
});

describe("members added after the challenge (issue 34 item 5; issue 37: the challenge's root and size are advisory)", () => {
  test("the challenge's root and size are not what is proved against: the current synced root is, for a member inside the challenge's prefix too", async () => {
    feed.add("growing", [commitment(0), commitment(1), commitment(2), ...filler(4, 1)]);
    const challenge = challengeNow("growing");
    feed.add("growing", [commitment(3), ...filler(20, 900)]);
    const proof = await proveGroupChallenge({ privateKey: ids[1]!.private_key, challenge, service: feed.url }, options(cacheOf("growing")));
    expect(proof.merkleTreeRoot).not.toBe(challenge.merkle_tree_root);
    expect(proof.merkleTreeRoot).toBe(feed.state("growing").root.toString());
  });

  test("the same challenge proved by the member at leaf 0 and the member at leaf n − 1, the challenge naming the first n − 1 leaves: the same root", async () => {
    feed.add("ends", [commitment(0), ...filler(6, 3_000), commitment(5)]);
    const size = feed.state("ends").size;
    const prefix = LeanTree.fromLeaves([commitment(0), ...filler(6, 3_000)]).root.toString();
    const challenge = challengeNow("ends", { size: size - 1, merkle_tree_root: prefix });
    const atFirst = await proveGroupChallenge({ privateKey: ids[0]!.private_key, challenge, service: feed.url }, options(cacheOf("ends")));
    const atLast = await proveGroupChallenge({ privateKey: ids[5]!.private_key, challenge, service: feed.url }, options(cacheOf("ends")));
    expect(atFirst.merkleTreeRoot).toBe(atLast.merkleTreeRoot);
    expect(atFirst.merkleTreeRoot).toBe(feed.state("ends").root.toString());
  });

  test("a member added after the challenge, or a challenge without size, proves against the current synced root", async () => {
    const challenge = challengeNow("growing", { size: undefined });
    feed.add("growing", filler(3, 5_000));
    const late = await proveGroupChallenge(
      { privateKey: ids[3]!.private_key, challenge: { ...challenge, size: 7 }, service: feed.url },
      options(cacheOf("growing")),
    );
    expect(late.merkleTreeRoot).toBe(feed.state("growing").root.toString());
    const noSize = await proveGroupChallenge({ privateKey: ids[0]!.private_key, challenge, service: feed.url }, options(cacheOf("growing")));
    expect(noSize.merkleTreeRoot).toBe(feed.state("growing").root.toString());
  });

  test("a removal after the challenge: the old root is not rebuilt (the removed leaf is 0 now), the current one is proved against", async () => {
    const challenge = challengeNow("growing");
    feed.remove("growing", filler(1, 900)[0]!);
    const proof = await proveGroupChallenge({ privateKey: ids[2]!.private_key, challenge, service: feed.url }, options(cacheOf("growing")));
    expect(proof.merkleTreeRoot).toBe(feed.state("growing").root.toString());
  });
});

describe("the anonymity floor (issue 34 item 6)", () => {
  test("a 2-member group is refused by default, naming the floor; accepted with a floor of 2", async () => {
    feed.add("pair", [commitment(4), commitment(5)]);
    const error = await refusal(
      proveGroupChallenge({ privateKey: ids[4]!.private_key, challenge: challengeNow("pair"), service: feed.url }, options(cacheOf("pair"))),
    );
    expect(error.code).toBe("anonymity");
    expect(error.message).toContain("2 active members");
    expect(error.message).toContain("floor of 3");
    const proof = await proveGroupChallenge(
      { privateKey: ids[4]!.private_key, challenge: challengeNow("pair"), service: feed.url },
      options(cacheOf("pair"), { minAnonymity: 2 }),
    );
    expect(proof.merkleTreeRoot).toBe(feed.state("pair").root.toString());
  });

  test("removed members do not count: 4 leaves, 2 of them removed, are 2 members", async () => {
    feed.add("shrunk", [commitment(0), commitment(1), commitment(2), commitment(3)]);
    feed.remove("shrunk", commitment(2));
    feed.remove("shrunk", commitment(3));
    const error = await refusal(
      proveGroupChallenge({ privateKey: ids[0]!.private_key, challenge: challengeNow("shrunk"), service: feed.url }, options(cacheOf("shrunk"))),
    );
    expect(error.code).toBe("anonymity");
  });

  test("zkagent prove --group-challenge: refused by default (exit 1, saying why), proved with --min-anonymity 2; a floor that is not a count is a usage error", async () => {
    const files = mkdtempSync(join(dir, "cli-"));
    const challengeFile = join(files, "challenge.json");
    const identityFile = join(files, "identity.json");
    // The CLI checks the message against the nonce, action and context it binds (issue 34): the service's derivation.
    const bound = challengeNow("pair", { context: { amount: "5" } });
    writeFileSync(
      challengeFile,
      JSON.stringify({ ...bound, message: groupMessageOf({ nonce: bound.nonce, action: bound.action!, context: bound.context }).toString() }),
    );
    writeFileSync(identityFile, JSON.stringify(ids[5]), { mode: 0o600 });
    const run = async (extra: string[]) => {
      const args = [
        "prove",
        "--group-challenge",
        challengeFile,
        "--identity",
        identityFile,
        "--service",
        feed.url,
        "--allow-insecure-loopback",
        "--no-table-cache",
      ];
      const child = Bun.spawn([process.execPath, join(ROOT, "src/cli/index.ts"), ...args, ...extra], {
        env: { ...process.env, XDG_CACHE_HOME: files, LOG_LEVEL: "silent" },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
      return { stdout, stderr, code };
    };
    const refused = await run([]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("fewer than this agent's floor of 3");
    const proved = await run(["--min-anonymity", "2"]);
    expect(proved.code).toBe(0);
    expect(JSON.parse(proved.stdout).merkleTreeRoot).toBe(feed.state("pair").root.toString());
    // The tree went to the XDG cache directory the process was given.
    expect(readdirSync(join(files, "zkagent", "group-trees"))).toHaveLength(1);
    for (const bad of ["0", "-1", "two", "1.5"]) expect((await run(["--min-anonymity", bad])).code).toBe(2);
  });
});

describe("a feed answer that could mislead the agent is refused, naming what is wrong", () => {
  // A hand-written service: each test says what it answers.
  let answer: (url: URL) => Response = () => new Response(null, { status: 500 });
  const asked: URL[] = [];
  let hostile: ReturnType<typeof Bun.serve>;
  beforeAll(() => {
    hostile = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(request) {
        const url = new URL(request.url);
        asked.push(url);
        return answer(url);
      },
    });
  });
  afterAll(() => hostile.stop(true));
  const service = () => `http://127.0.0.1:${hostile.port}`;
  const record = (index: number, value: bigint) => {
    const bytes = Buffer.alloc(36);
    bytes.writeUInt32BE(index);
    bytes.write(value.toString(16).padStart(64, "0"), 4, "hex");
    return bytes;
  };
  const leaves = [11n, 22n, 33n];
  const tree = LeanTree.fromLeaves(leaves);
  const page = (overrides: Record<string, unknown> = {}, records = leaves.map((v, i) => record(i, v))) => ({
    group_id: "h",
    version: 3,
    size: 3,
    merkle_tree_root: tree.root.toString(),
    merkle_tree_depth: 2,
    since: 0,
    offset: 0,
    count: records.length,
    changes: Buffer.concat(records).toString("base64url"),
    next_offset: null,
    ...overrides,
  });
  const sync = () => syncGroupTree(service(), "h", { treeCache: false, allowInsecureLoopback: true });
  const refusedWith = async (text: string) => {
    const error = await refusal(sync());
    expect(error.message).toContain(text);
  };

  test("an honest answer is read (the baseline the cases below change one thing of)", async () => {
    answer = () => Response.json(page());
    expect((await sync()).tree.root).toBe(tree.root);
  });

  test("another group, a count that is not the records', records out of order or past the size, a value above the field, bad base64", async () => {
    answer = () => Response.json(page({ group_id: "other" }));
    await refusedWith("for group other");
    answer = () => Response.json(page({ count: 2 }));
    await refusedWith("not count × 36");
    answer = () => Response.json(page({}, [record(1, 22n), record(0, 11n), record(2, 33n)]));
    await refusedWith("comes after leaf 1");
    answer = () => Response.json(page({}, [record(0, 11n), record(1, 22n), record(7, 33n)]));
    await refusedWith("past the group's 3 leaves");
    answer = () => Response.json(page({}, [record(0, 11n), record(1, 22n), record(2, 2n ** 255n)]));
    await refusedWith("not below the field order");
    answer = () => Response.json(page({ changes: "not base64url!" }));
    await refusedWith("not base64url");
    answer = () => Response.json(page({ merkle_tree_root: "0x12" }));
    await refusedWith("merkle_tree_root");
  });

  test("a version the service never had (400 to ?since=V, e.g. a service whose store was replaced): the kept tree is dropped and the group synced from 0", async () => {
    answer = () => Response.json(page());
    await sync(); // this process now keeps the tree at version 3
    answer = (url) =>
      url.searchParams.get("since") === "0" ? Response.json(page({ version: 1 })) : Response.json({ error: "Invalid field since" }, { status: 400 });
    asked.length = 0;
    const synced = await sync();
    expect(asked.map((url) => url.searchParams.get("since"))).toEqual(["3", "0"]);
    expect([synced.version, synced.tree.root, synced.fromCache]).toEqual([1, tree.root, false]); // built from 0, not from the kept tree
  });

  test("a lying service answers 400 to ?since=V and serves from 0 a history with a member's leaf replaced: refused, naming the leaf; the kept tree stays; a history that only removes and adds is accepted", async () => {
    answer = () => Response.json(page());
    await sync(); // this process now keeps [11, 22, 33] at version 3
    const liar = (served: bigint[]) => {
      const forged = LeanTree.fromLeaves(served);
      answer = (url) =>
        url.searchParams.get("since") === "0"
          ? Response.json(
              page(
                { version: 9, size: served.length, merkle_tree_root: forged.root.toString() },
                served.map((v, i) => record(i, v)),
              ),
            )
          : Response.json({ error: "Invalid field since" }, { status: 400 });
    };
    liar([11n, 99n, 33n, 44n]); // leaf 1 is another member now, with a root that matches what is served
    let error = await refusal(sync());
    expect(error.message).toContain("leaf 1 was 22 and is now 99");
    liar([11n, 22n]); // fewer leaves than the agent has seen
    error = await refusal(sync());
    expect(error.message).toContain("serves 2 leaves, this agent has seen 3");
    liar([11n, 0n, 33n, 44n]); // leaf 1 removed, one added: an honest history
    const synced = await sync();
    expect(synced.tree.root).toBe(LeanTree.fromLeaves([11n, 0n, 33n, 44n]).root);
    liar([11n, 22n, 33n, 44n]); // a removed leaf never comes back
    error = await refusal(sync());
    expect(error.message).toContain("leaf 1 was removed (0) and is now 22");
  });

  test("a next_offset that does not follow the page, and a group that keeps changing between pages", async () => {
    answer = () => Response.json(page({ next_offset: 99 }));
    await refusedWith("does not follow");
    // Every second page shows another version: the read starts again, and gives up after a few rounds.
    let n = 0;
    answer = (url) =>
      Response.json(
        Number(url.searchParams.get("offset") ?? 0) === 0
          ? page({ next_offset: 2, count: 2, changes: Buffer.concat([record(0, 11n), record(1, 22n)]).toString("base64url") })
          : page({ offset: 2, version: 4 + n++, count: 1, changes: record(2, 33n).toString("base64url") }),
      );
    asked.length = 0;
    await refusedWith("kept changing");
    expect(asked.length).toBe(8); // four rounds of two pages
  });
});
