// The agent's group proofs (src/agent/group/proof.ts) against the stock Semaphore
// v4 client: they pass its verifyProof at several depths and group sizes, fail
// it for a neighbouring statement, and have the shape and deterministic
// values of its generateProof for the same identity, group, message and scope.
// And every refusal: a tampered artifact (before use), a members list whose
// root is not the challenge's, a non-member, a tree deeper than the circuit.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Group } from "@semaphore-protocol/group";
import {
  createSemaphoreIdentity,
  type GroupChallenge,
  GroupProofError,
  loadSemaphoreArtifacts,
  parseGroupChallenge,
  proveGroupMembership,
  SemaphoreArtifactError,
  type SemaphoreIdentityKeys,
  type SemaphoreProof,
} from "../../src/agent";
import { SEMAPHORE_PINS } from "../../src/groups/semaphore-pins";
import { semaphoreHash } from "../../src/groups/statement";
import { ARTIFACTS_DIR, semaphoreGroup, stockSemaphore } from "./stock-semaphore";

// Proofs at four depths and one node process on a shared two-core machine.
setDefaultTimeout(60_000);

const ids: SemaphoreIdentityKeys[] = Array.from({ length: 9 }, () => createSemaphoreIdentity());
const commitments = ids.map((id) => id.identity_commitment);

function challengeFor(members: string[], depth: number, message = "4242", scope = "77"): GroupChallenge {
  return {
    challenge_id: "ch_test",
    nonce: "5a".repeat(31),
    action: "purchase",
    group_id: "fleet-1",
    merkle_tree_root: semaphoreGroup(members).root.toString(),
    merkle_tree_depth: depth,
    message,
    scope,
    circuit_id: "semaphore-test",
  };
}

interface Case {
  name: string;
  members: string[];
  prover: number;
  depth: number;
  message: string;
  scope: string;
}

// Group sizes 1 (tree depth 0), 2, 5 with a removed member (an odd right
// edge), 9 proven by the last leaf; circuits deeper than the tree (padding).
const CASES: Case[] = [
  { name: "1 member, depth 1", members: commitments.slice(0, 1), prover: 0, depth: 1, message: "0", scope: "1" },
  { name: "2 members, depth 1", members: commitments.slice(0, 2), prover: 1, depth: 1, message: "1", scope: "2" },
  {
    name: "5 leaves with a removed one, depth 3",
    members: [commitments[0]!, "0", commitments[2]!, commitments[3]!, commitments[4]!],
    prover: 4,
    depth: 3,
    message: (2n ** 256n - 1n).toString(),
    scope: "123456789012345678901234567890",
  },
  { name: "9 members, last leaf, depth 10", members: commitments.slice(0, 9), prover: 8, depth: 10, message: "99", scope: "31337" },
];

const proofs: SemaphoreProof[] = [];

beforeAll(async () => {
  for (const c of CASES) {
    proofs.push(
      await proveGroupMembership(
        { privateKey: ids[c.prover]!.private_key, members: c.members, challenge: challengeFor(c.members, c.depth, c.message, c.scope) },
        // Groups of 1 and 2 are below the default anonymity floor: these cases compare proofs, not the floor.
        { precompute: false, minAnonymity: 1 },
      ),
    );
  }
});

describe("the SDK's group proofs and the stock Semaphore v4 client", () => {
  let verdicts: unknown[];
  let stock: SemaphoreProof;
  const neighbours = (p: SemaphoreProof): SemaphoreProof[] => [
    { ...p, message: (BigInt(p.message) === 0n ? 1n : BigInt(p.message) - 1n).toString() },
    { ...p, scope: (BigInt(p.scope) + 1n).toString() },
    { ...p, merkleTreeRoot: semaphoreGroup([...CASES[3]!.members.slice(1), "0"]).root.toString() },
    { ...p, nullifier: (BigInt(p.nullifier) + 1n).toString() },
  ];
  const shapeCase = CASES[2]!;

  beforeAll(async () => {
    const jobs = [
      ...proofs.map((p) => ({ verify: p })),
      ...proofs.flatMap((p) => neighbours(p).map((n) => ({ verify: n }))),
      {
        generate: {
          privateKey: ids[shapeCase.prover]!.private_key,
          members: shapeCase.members,
          message: shapeCase.message,
          scope: shapeCase.scope,
          depth: shapeCase.depth,
        },
      },
    ];
    const out = await stockSemaphore(jobs);
    stock = out.pop() as SemaphoreProof;
    verdicts = out;
  });

  test("every SDK proof passes the stock verifyProof (depths 1, 3, 10; groups of 1, 2, 5, 9)", () => {
    expect(verdicts.slice(0, proofs.length)).toEqual(proofs.map(() => true));
  });

  test("a neighbouring statement (message, scope, root or nullifier) fails the stock verifyProof", () => {
    expect(verdicts.slice(proofs.length)).toEqual(proofs.flatMap((p) => neighbours(p).map(() => false)));
  });

  test("the proof object has the stock generateProof's shape and its deterministic values", () => {
    const ours = proofs[2]!;
    expect(Object.keys(ours)).toEqual(Object.keys(stock));
    for (const key of Object.keys(stock) as (keyof SemaphoreProof)[]) expect(typeof ours[key]).toBe(typeof stock[key]);
    expect(ours.points).toHaveLength(8);
    expect(stock.points).toHaveLength(8);
    for (const x of [...ours.points, ...stock.points]) expect(x).toMatch(/^(0|[1-9][0-9]*)$/);
    // Same identity, group, message, scope and depth: everything but the blinded points is equal.
    const { points: _o, ...oursRest } = ours;
    const { points: _s, ...stockRest } = stock;
    expect(oursRest).toEqual(stockRest);
    expect(ours.points).not.toEqual(stock.points);
  });

  test("message and scope are the challenge's decimal strings as given", () => {
    expect(CASES.map((c) => [c.message, c.scope])).toEqual(proofs.map((p) => [p.message, p.scope]));
  });

  test("same member, same scope: the same nullifier; another scope: another", async () => {
    const c = CASES[1]!;
    const again = await proveGroupMembership(
      { privateKey: ids[c.prover]!.private_key, members: c.members, challenge: challengeFor(c.members, c.depth, "5", c.scope) },
      { precompute: false, minAnonymity: 1 },
    );
    const otherScope = await proveGroupMembership(
      { privateKey: ids[c.prover]!.private_key, members: c.members, challenge: challengeFor(c.members, c.depth, "5", "3") },
      { precompute: false, minAnonymity: 1 },
    );
    expect(again.nullifier).toBe(proofs[1]!.nullifier);
    expect(otherScope.nullifier).not.toBe(proofs[1]!.nullifier);
  });
});

describe("Semaphore's hash", () => {
  test("is @semaphore-protocol/proof's: keccak256(toBeHex(x, 32)) >> 8 with ethers", async () => {
    const { keccak256, toBeHex } = await import("ethers");
    const hash = (x: bigint) => (BigInt(keccak256(toBeHex(x, 32))) >> 8n).toString();
    for (const x of [0n, 1n, 255n, 2n ** 200n + 7n, 2n ** 256n - 1n]) expect(semaphoreHash(x).toString()).toBe(hash(x));
    expect(() => semaphoreHash(2n ** 256n)).toThrow(RangeError);
  });
});

describe("refusals", () => {
  const members = commitments.slice(0, 4);
  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    return error as Error;
  };

  test("a members list whose root is not the challenge's: root_mismatch, naming both roots", async () => {
    const challenge = challengeFor(members, 2);
    const served = [...members.slice(0, 3), commitments[8]!]; // one leaf swapped
    const error = (await refusal(proveGroupMembership({ privateKey: ids[0]!.private_key, members: served, challenge }))) as GroupProofError;
    expect(error).toBeInstanceOf(GroupProofError);
    expect(error.code).toBe("root_mismatch");
    expect(error.message).toContain(challenge.merkle_tree_root);
    expect(error.message).toContain(semaphoreGroup(served).root.toString());
  });

  test("an identity that is not a member: not_member, naming its commitment", async () => {
    const error = (await refusal(proveGroupMembership({ privateKey: ids[8]!.private_key, members, challenge: challengeFor(members, 2) }))) as GroupProofError;
    expect(error.code).toBe("not_member");
    expect(error.message).toContain(commitments[8]!);
  });

  test("a removed member (leaf 0) is not a member any more", async () => {
    const removed = ["0", ...members.slice(1)];
    const error = (await refusal(
      proveGroupMembership({ privateKey: ids[0]!.private_key, members: removed, challenge: challengeFor(removed, 2) }),
    )) as GroupProofError;
    expect(error.code).toBe("not_member");
  });

  test("a removed member's leaf 0 is hashed as Semaphore's removeMember does, not dropped", async () => {
    // @semaphore-protocol/group 4.14.2's constructor (lean-imt 2.2.4) drops a 0 leaf: [a, 0] gives the root a.
    const removed = [members[0]!, "0", ...members.slice(2)];
    const dropped = new Group(removed.map(BigInt)).root.toString();
    expect(dropped).not.toBe(semaphoreGroup(removed).root.toString());
    const error = (await refusal(
      proveGroupMembership({ privateKey: ids[0]!.private_key, members: removed, challenge: { ...challengeFor(removed, 2), merkle_tree_root: dropped } }),
    )) as GroupProofError;
    expect(error.code).toBe("root_mismatch");
  });

  test("a tree deeper than the challenge's circuit: depth", async () => {
    const error = (await refusal(proveGroupMembership({ privateKey: ids[0]!.private_key, members, challenge: challengeFor(members, 1) }))) as GroupProofError;
    expect(error.code).toBe("depth");
  });

  test("a challenge with a field of the wrong form is refused naming the field", () => {
    const good = challengeFor(members, 2);
    const bad: [string, unknown][] = [
      ["group_id", undefined],
      ["merkle_tree_root", "0x12"],
      ["merkle_tree_depth", 33],
      ["merkle_tree_depth", "2"],
      ["message", "01"],
      ["message", (2n ** 256n).toString()],
      ["scope", "-1"],
      ["scope", 5],
    ];
    for (const [field, value] of bad) {
      expect(() => parseGroupChallenge({ ...good, [field]: value })).toThrow(field);
    }
    expect(parseGroupChallenge(good)).toEqual(good);
  });

  test("a member outside the field is refused, as a string or a bigint", async () => {
    const r = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
    for (const bad of [r.toString(), r, -1n, "1e3"]) {
      const error = (await refusal(
        proveGroupMembership({ privateKey: ids[0]!.private_key, members: [...members, bad], challenge: challengeFor(members, 2) }),
      )) as GroupProofError;
      expect(error.code).toBe("members");
      expect(error.message).toContain("member 4");
    }
  });

  test("a private key that is not base64 is refused", async () => {
    const error = (await refusal(proveGroupMembership({ privateKey: "not base64!", members, challenge: challengeFor(members, 2) }))) as GroupProofError;
    expect(error.code).toBe("identity");
  });
});

describe("a process proving again for a changed group", () => {
  // An identity outside every list: the refusal says not_member when the tree's root is right, root_mismatch when not.
  const outsider = createSemaphoreIdentity();
  const extra = Array.from({ length: 24 }, (_, i) => String(10_000 + i));
  const treeIsRight = async (members: string[]) => {
    const error = await proveGroupMembership({
      privateKey: outsider.private_key,
      members,
      challenge: { ...challengeFor(members, 10), group_id: "changing" },
    }).catch((e: unknown) => e);
    expect((error as GroupProofError).code).toBe("not_member");
  };

  test("members added and removed (updated in place), reordered or fewer (rebuilt): every root is Semaphore's", async () => {
    const first = commitments.slice(0, 8);
    await treeIsRight(first);
    const grown = [...first.slice(0, 2), "0", ...first.slice(3), ...extra.slice(0, 20)];
    await treeIsRight(grown);
    const removedMore = grown.map((m, i) => (i === 9 ? "0" : m));
    await treeIsRight(removedMore);
    await treeIsRight([...removedMore].reverse());
    await treeIsRight(removedMore.slice(0, 11));
    const last = [...removedMore.slice(0, 11), ...extra.slice(20)];
    const proof = await proveGroupMembership(
      { privateKey: ids[7]!.private_key, members: last, challenge: { ...challengeFor(last, 10), group_id: "changing" } },
      { precompute: false },
    );
    expect(proof.merkleTreeRoot).toBe(semaphoreGroup(last).root.toString());
  });
});

describe("pinned artifacts", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "zkagent-semaphore-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const copyDepth = (depth: number) => {
    for (const ext of ["wasm", "zkey"]) copyFileSync(join(ARTIFACTS_DIR, `semaphore-${depth}.${ext}`), join(dir, `semaphore-${depth}.${ext}`));
  };
  const flipOneByte = (path: string, at: number) => {
    const bytes = readFileSync(path);
    bytes[at] = bytes[at]! ^ 1;
    writeFileSync(path, bytes);
  };

  test("the installed package's files load and match the pins", async () => {
    const a = await loadSemaphoreArtifacts(2);
    const sha = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
    expect([sha(a.wasm), sha(a.zkey)]).toEqual([SEMAPHORE_PINS[2]!.wasm, SEMAPHORE_PINS[2]!.zkey]);
  });

  for (const ext of ["wasm", "zkey"] as const) {
    test(`a ${ext} with one byte changed is refused before it is compiled, and no proof is made`, async () => {
      copyDepth(5);
      const path = join(dir, `semaphore-5.${ext}`);
      flipOneByte(path, Math.floor(readFileSync(path).length / 2));
      const error = await loadSemaphoreArtifacts(5, dir).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SemaphoreArtifactError);
      expect((error as Error).message).toContain(path);
      expect((error as Error).message).toContain(SEMAPHORE_PINS[5]![ext]);
      // Through the proving path too: depth 5 has no prover yet in this process, so the files are read and refused.
      const members = commitments.slice(0, 3);
      const refused = await proveGroupMembership(
        { privateKey: ids[0]!.private_key, members, challenge: challengeFor(members, 5) },
        { artifactsDir: dir, precompute: false },
      ).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(SemaphoreArtifactError);
    });
  }

  test("a FIFO, a missing file and an oversized file are refused without waiting or reading", async () => {
    copyDepth(6);
    rmSync(join(dir, "semaphore-6.wasm"));
    Bun.spawnSync(["mkfifo", join(dir, "semaphore-6.wasm")]);
    const started = performance.now();
    expect(((await loadSemaphoreArtifacts(6, dir).catch((e: unknown) => e)) as Error).message).toContain("not a regular file");
    expect(performance.now() - started).toBeLessThan(1000);

    rmSync(join(dir, "semaphore-6.wasm"));
    expect(((await loadSemaphoreArtifacts(6, dir).catch((e: unknown) => e)) as Error).message).toContain("ENOENT");

    copyDepth(6);
    writeFileSync(join(dir, "semaphore-6.zkey"), new Uint8Array(17 << 20));
    expect(((await loadSemaphoreArtifacts(6, dir).catch((e: unknown) => e)) as Error).message).toContain("more than");
  });

  test("a depth without pins is refused", async () => {
    for (const depth of [0, 33, 1.5]) expect(await loadSemaphoreArtifacts(depth).catch((e: unknown) => e)).toBeInstanceOf(SemaphoreArtifactError);
  });
});
