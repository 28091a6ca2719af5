// Builds a Semaphore depth's window tables into the table cache, run as a
// detached process by semaphoreProver (src/agent/group/artifacts.ts) when
// a proof found none cached: that proof goes on without tables, and the next
// process reads these. Arguments: DEPTH CACHE_DIR MARKER [ARTIFACTS_DIR [ARTIFACTS_CACHE, "-" for none]].
// It sees the public circuit only, never the member's secret or its path.
import { rmSync } from "node:fs";
import { createProver } from "../../prover";
import { loadSemaphoreArtifacts } from "./artifacts";

const [depth, dir, marker, artifactsDir, artifactsCache] = process.argv.slice(2);
try {
  const artifacts = await loadSemaphoreArtifacts(Number(depth), {
    dir: artifactsDir || undefined,
    cacheDir: artifactsCache === "-" ? false : artifactsCache || undefined,
  });
  // One thread: the machine's other cores are the agent's, which may be proving meanwhile.
  (await createProver(artifacts, { precompute: true, tableCache: dir })).close();
} finally {
  if (marker) rmSync(marker, { force: true });
}
process.exit(0);
