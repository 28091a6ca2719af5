// The reference a group tree is compared with: @zk-kit/lean-imt 2.2.5 with
// poseidon-lite's Poseidon over two inputs, as @semaphore-protocol/group
// builds its tree — independent of the project's tree (src/groups/lean-tree.ts)
// and of its WebAssembly Poseidon.
import { LeanIMT } from "@zk-kit/lean-imt";
import { poseidon2 } from "poseidon-lite/poseidon2";

export const semaphoreTree = (leaves: readonly bigint[] = []): LeanIMT<bigint> => new LeanIMT<bigint>((a, b) => poseidon2([a, b]), [...leaves]);
