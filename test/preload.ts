// Test preload (registered in bunfig.toml), run once before any test file:
// - builds build/verifier.wasm and build/prover.wasm (production) and their
//   test builds (with the test operations test/assembly/ and test/prover/
//   call) when missing or older than their sources, so no test hook pays for the ≈5 s compiles
//   (src/verifier/wasm.ts would also build the production module on demand;
//   this keeps it out of test timeouts);
// - points $XDG_CACHE_HOME at a temporary directory (the prover's table cache);
// - prints how many responses were checked against the OpenAPI document, per
//   route and status (test/support/contract.ts);
// - stops the PostgreSQL cluster the run may have started for its PostgreSQL
//   suites (test/support/postgres-cluster.ts) once every file has run: an
//   afterAll in a preload is bun test's global teardown, and runs after
//   failed tests too.
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ALL_WASM_PATHS, buildWasm, isStale } from "../scripts/asc-build.ts";
import { stopSharedCluster } from "./support/postgres-cluster.ts";

for (const path of ALL_WASM_PATHS) if (isStale(path)) buildWasm(path);

// The agent's provers keep their window tables under $XDG_CACHE_HOME
// (src/agent/prover-tables.ts): a run's own directory, shared by its files
// and the processes they start, never the user's cache.
const cacheHome = mkdtempSync(join(tmpdir(), "zkagent-test-cache-"));
process.env.XDG_CACHE_HOME = cacheHome;
afterAll(() => rmSync(cacheHome, { recursive: true, force: true }));
// Where `zkagent demo` keeps its key per database (src/cli/demo.ts): the run's own, never the user's.
const stateHome = mkdtempSync(join(tmpdir(), "zkagent-test-state-"));
process.env.XDG_STATE_HOME = stateHome;
afterAll(() => rmSync(stateHome, { recursive: true, force: true }));

afterAll(stopSharedCluster);

// The responses the HTTP tests received, each checked against the OpenAPI
// document on arrival (support/contract.ts), per route and status.
afterAll(() => {
  const counts = (globalThis as Record<symbol, Map<string, number> | undefined>)[Symbol.for("zkagent.contract.counts")];
  if (!counts || counts.size === 0) return;
  const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
  const lines = [...counts].sort(([a], [b]) => a.localeCompare(b)).map(([route, n]) => `  ${String(n).padStart(6)}  ${route}`);
  console.log(`\nOpenAPI conformance: ${total} responses validated against the document, per route and status:\n${lines.join("\n")}`);
});
