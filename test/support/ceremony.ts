// A second, real circuit version for the tests: a phase-2 ceremony on the
// same circuit and public ptau (init, two contributions, a beacon), run once
// per test process in a temporary directory (≈2 s). Its key differs from the
// shipped one, so a proof made with one zkey fails under the other's key.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LoadedCircuit, loadCircuit } from "../../src/agent";
import { applyBeacon, contribute, initCeremony } from "../../src/ceremony/ceremony";

let made: Promise<{ dir: string; circuit: LoadedCircuit }> | undefined;

export function secondCeremony(): Promise<{ dir: string; circuit: LoadedCircuit }> {
  made ??= (async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "zkagent-second-circuit-")), "ceremony");
    await initCeremony(dir);
    await contribute(dir, "operator one");
    await contribute(dir, "operator two");
    await applyBeacon(dir, "00ff".repeat(16), 10, { name: "test beacon" });
    return { dir, circuit: await loadCircuit(dir) };
  })();
  return made;
}
