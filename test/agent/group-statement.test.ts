// "The prover's public signals must equal the statement the SDK computed, or
// nothing is returned": a prover that answers for another statement (the real
// depth-1 prover behind a wrapper that alters its signals, as a substituted
// witness generator would) yields a GroupProofError, never a proof.
import { expect, test } from "bun:test";
import { Group } from "@semaphore-protocol/group";
import { Identity } from "@semaphore-protocol/identity";
import { GroupProofError } from "../../src/agent/group/index";
import { proveStatement } from "../../src/agent/group/proof";
import { semaphoreProver } from "../../src/agent/group/artifacts";
import { semaphoreHash, semaphoreNullifier, semaphorePublicSignals } from "../../src/groups/statement";
import type { Prover } from "../../src/prover";

test("a proof is returned only when the prover's public signals are exactly the statement", async () => {
  const ids = [new Identity(), new Identity()];
  const group = new Group(ids.map((id) => id.commitment));
  const path = group.generateMerkleProof(0);
  const [message, scope] = [1n, 2n];
  const input = {
    secret: ids[0]!.secretScalar.toString(),
    merkleProofLength: path.siblings.length.toString(),
    merkleProofIndex: path.index.toString(),
    merkleProofSiblings: path.siblings.map(String),
    scope: semaphoreHash(scope).toString(),
    message: semaphoreHash(message).toString(),
  };
  const expected = semaphorePublicSignals({ merkleTreeRoot: group.root, nullifier: semaphoreNullifier(scope, ids[0]!.secretScalar), message, scope });
  const real = await semaphoreProver(1, { precompute: false });
  const altered = (change: (s: string[]) => string[]): Prover => ({
    nPublic: real.nPublic,
    helpers: 0,
    close() {},
    prove: async (i) => {
      const result = await real.prove(i);
      return { ...result, publicSignals: change(result.publicSignals) };
    },
  });

  // The statement computed off the circuit is what the circuit outputs: an honest prover's proof comes back.
  expect((await proveStatement(real, input, expected)).publicSignals).toEqual(expected);
  const changes: ((s: string[]) => string[])[] = [
    (s) => [s[0]!, (BigInt(s[1]!) + 1n).toString(), s[2]!, s[3]!], // the nullifier
    (s) => [s[0]!, s[1]!, s[2]!, "1"], // hash(scope)
    (s) => [...s, "4095"], // an extra public output, as a circuit that leaks bits of the secret has
  ];
  for (const change of changes) {
    const error = await proveStatement(altered(change), input, expected).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GroupProofError);
    expect((error as GroupProofError).code).toBe("statement");
  }
});
