// The production entry of build/prover.wasm: the prover's ABI only (see
// prover.ts for the computation and the call order). The stage-by-stage
// entry points for tests and the benchmark's breakdown are in
// prover-testing.ts, compiled separately to build/prover-test.wasm. The
// module also hashes group trees (poseidon.ts: Poseidon over two inputs on
// the same field), for src/groups/poseidon.ts.

export {
  io, setup, loadPoints, loadIc, loadCoefs, loadBases, basesWindow, basesTable, basesTableBytes, prove,
  proveWitness, proveQuotient, proveMsmRange, proveEnd, msmScalars, msmRemote, msmResultIn, basesCount,
} from "./prover";
export { poseidonHash, poseidonLevel } from "./poseidon";
