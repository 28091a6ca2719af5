// Semaphore v4 statements for test/prover and bench/prover.ts: the stock
// artifacts (@zk-kit/semaphore-artifacts, the versions pinned in
// src/groups/semaphore-pins.ts) and circuit inputs built exactly as the stock
// client (@semaphore-protocol/proof generateProof) builds them, so that a
// proof from our prover can be checked by the stock verifyProof.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Group } from "@semaphore-protocol/group";
import { Identity } from "@semaphore-protocol/identity";
import { keccak256 } from "ethers/crypto";
import { toBeHex } from "ethers/utils";
import type { CircuitInput } from "../../src/prover";

const artifactsDir = dirname(Bun.resolveSync("@zk-kit/semaphore-artifacts/package.json", import.meta.dir));

export interface SemaphoreArtifacts {
  depth: number;
  zkey: Uint8Array;
  wasm: Uint8Array;
  vkey: unknown;
}

export function semaphoreArtifacts(depth: number): SemaphoreArtifacts {
  const file = (ext: string) => join(artifactsDir, `semaphore-${depth}.${ext}`);
  return {
    depth,
    zkey: new Uint8Array(readFileSync(file("zkey"))),
    wasm: new Uint8Array(readFileSync(file("wasm"))),
    vkey: JSON.parse(readFileSync(file("json"), "utf8")),
  };
}

/** The stock client's hash of a message or scope into the field (keccak256, shifted right by 8 bits). */
export const semaphoreHash = (x: bigint): bigint => BigInt(keccak256(toBeHex(x, 32))) >> 8n;

export interface SemaphoreStatement {
  /** The circuit's tree depth (which artifacts prove it). */
  depth: number;
  input: CircuitInput;
  /** What the stock verifyProof takes besides the proof points. */
  merkleTreeRoot: bigint;
  message: bigint;
  scope: bigint;
}

const randomBelow = (n: number) => Math.floor(Math.random() * n);
const randomBig = (bytes: number) => {
  let x = 0n;
  for (const b of crypto.getRandomValues(new Uint8Array(bytes))) x = (x << 8n) | BigInt(b);
  return x;
};

/**
 * A statement: a group of `size` members (the prover a real Identity, the
 * others random commitments: only the prover's secret matters), the prover at
 * a random index, random message and scope, for the circuit of `depth`
 * (≥ the group's tree depth).
 */
export function semaphoreStatement(depth: number, size: number, identity = new Identity()): SemaphoreStatement {
  const members = Array.from({ length: size }, () => randomBig(31));
  const index = randomBelow(size);
  members[index] = identity.commitment;
  const group = new Group(members);
  if (group.depth > depth) throw new Error(`a group of ${size} needs depth ${group.depth} > ${depth}`);
  const proof = group.generateMerkleProof(index);
  const siblings = [...proof.siblings];
  while (siblings.length < depth) siblings.push(0n);
  const message = randomBig(32);
  const scope = randomBig(32);
  return {
    depth,
    input: {
      secret: identity.secretScalar,
      merkleProofLength: proof.siblings.length,
      merkleProofIndex: proof.index,
      merkleProofSiblings: siblings,
      scope: semaphoreHash(scope),
      message: semaphoreHash(message),
    },
    merkleTreeRoot: proof.root,
    message,
    scope,
  };
}
