// Test preload (registered in bunfig.toml), run once before any test file:
// - builds build/verifier.wasm when it is missing or older than its sources,
//   so no test hook pays for the ≈5 s compile (src/verifier/wasm.ts would
//   also build on demand; this keeps it out of test timeouts);
// - stops the PostgreSQL cluster the run may have started for its PostgreSQL
//   suites (test/support/postgres-cluster.ts) once every file has run: an
//   afterAll in a preload is bun test's global teardown, and runs after
//   failed tests too.
import { afterAll } from "bun:test";
import { buildWasm, isStale } from "../scripts/asc-build.ts";
import { stopSharedCluster } from "./support/postgres-cluster.ts";

if (isStale()) buildWasm();

afterAll(stopSharedCluster);
