// The inside of a prover helper thread (threads.ts starts it): its own
// instance of the prover module, loaded with the key's header points and the
// sections and table rows of the ranges it sums. The first message is a
// HelperInit, answered with HelperReady; then each HelperJob (the witness
// scalars of one proof) is answered with the sums of its parts, in order.
import type { HelperInit, HelperJob, HelperReady, HelperResult } from "./threads";
import { WASM_BUILD } from "../wasm-engine";
import { instantiateProver, type ProverExports, ProverStatus, proverModuleDigest, readIo, Tables, writeIo } from "./wasm";

declare const self: Worker;

// Compiled and instantiated at once, while the calling thread loads the key.
const instance = instantiateProver();
let wasm: ProverExports | undefined;
let parts: HelperInit["parts"] = [];

async function load(init: HelperInit): Promise<void> {
  wasm = await instance;
  if (wasm.setup(init.nVars, init.nPublic, init.domainLog, 0) !== ProverStatus.OK) throw new Error("setup");
  writeIo(wasm!, init.header);
  if (wasm.loadPoints() !== ProverStatus.OK) throw new Error("header points");
  for (const s of init.sets) {
    writeIo(wasm!, s.points);
    if (wasm.loadBases(s.set, s.count, s.window, Tables.FROM_CALLER) !== ProverStatus.OK) throw new Error(`point section of set ${s.set}`);
    // The caller's instance loaded the same points with the same window: the same bases, the same table layout.
    if (wasm.basesCount(s.set) !== s.bases || s.offset + s.rows.length > wasm.basesTableBytes(s.set)) throw new Error(`set ${s.set} differs`);
    new Uint8Array(wasm.memory.buffer, wasm.basesTable(s.set) + s.offset, s.rows.length).set(s.rows);
  }
  parts = init.parts;
}

self.onmessage = async (event: MessageEvent<HelperInit | HelperJob>) => {
  const data = event.data;
  if (!("id" in data)) {
    try {
      await load(data);
      // The digest is of the very bytes this thread compiled (src/prover/wasm.ts reads them once for both).
      self.postMessage({ ready: true, build: WASM_BUILD, digest: await proverModuleDigest() } satisfies HelperReady);
    } catch (e) {
      self.postMessage({ ready: false, error: e instanceof Error ? e.message : String(e) } satisfies HelperReady);
    }
    return;
  }
  const sums: Uint8Array[] = [];
  for (const p of parts) {
    writeIo(wasm!, data.scalars);
    const size = wasm!.msmRemote(p.set, p.lo, p.hi);
    if (size === 0) {
      self.postMessage({ id: data.id, error: `range ${p.set}:${p.lo}-${p.hi} not loaded` } satisfies HelperResult);
      return;
    }
    sums.push(readIo(wasm!, size));
  }
  self.postMessage({ id: data.id, sums } satisfies HelperResult);
};
