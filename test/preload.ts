// Test preload (registered in bunfig.toml), run once before any test file:
// - builds build/verifier.wasm and build/prover.wasm (production) and their
//   test builds (with the test operations test/assembly/ and test/prover/
//   call) when missing or older than their sources, so no test hook pays for the ≈5 s compiles
//   (src/verifier/wasm.ts would also build the production module on demand;
//   this keeps it out of test timeouts);
// - stops the PostgreSQL cluster the run may have started for its PostgreSQL
//   suites (test/support/postgres-cluster.ts) once every file has run: an
//   afterAll in a preload is bun test's global teardown, and runs after
//   failed tests too.
import { afterAll } from "bun:test";
import { ALL_WASM_PATHS, buildWasm, isStale } from "../scripts/asc-build.ts";
import { stopSharedCluster } from "./support/postgres-cluster.ts";

for (const path of ALL_WASM_PATHS) if (isStale(path)) buildWasm(path);

afterAll(stopSharedCluster);
