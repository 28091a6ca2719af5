// The test build's entry (build/prover-test.wasm): every production entry
// point of prover-index.ts, plus prove()'s stages one by one and readers of
// their intermediate results, for the differential tests (test/prover/) and
// the time breakdown of bench/prover.ts. The production module does not
// contain them.

export * from "./prover-index";
export { stageWitness, stageQuotient, stageQuotientPart, stageMsm, stageFinish, stageSelfCheck, readQuotient, readMsm, msmCustom } from "./prover";
