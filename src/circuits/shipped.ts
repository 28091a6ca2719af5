// The circuit the service ships: circuits/artifacts/ is the output directory
// of the ceremony that made it (zkagent ceremony init/contribute/beacon), so
// it holds the r1cs, the witness wasm, the final zkey, the verification key
// and transcript.json. Imported `with { type: "file" }` so the compiled
// binary embeds them (scripts/build.ts); read them through shippedFile().
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import r1csPath from "../../circuits/artifacts/agent_identity.r1cs" with { type: "file" };
import transcriptJson from "../../circuits/artifacts/transcript.json";
import vkJson from "../../circuits/artifacts/verification_key.json";
import wasmPath from "../../circuits/artifacts/agent_identity.wasm" with { type: "file" };
import zkeyPath from "../../circuits/artifacts/agent_identity.zkey" with { type: "file" };

/** The circuit's name: the file names in every ceremony directory. */
export const CIRCUIT_NAME = "agent_identity";

/** The files of a ceremony directory, by role. */
export const CEREMONY_FILES = {
  r1cs: `${CIRCUIT_NAME}.r1cs`,
  wasm: `${CIRCUIT_NAME}.wasm`,
  zkey: `${CIRCUIT_NAME}.zkey`,
  vk: "verification_key.json",
  transcript: "transcript.json",
} as const;
export type CeremonyFile = keyof typeof CEREMONY_FILES;

// Under Bun (and in the compiled binary) a `type: "file"` import is an absolute
// path; a bundle built for Node (`bun build --target=node`) makes it relative
// to the bundle, which is not the working directory.
export const artifactPath = (path: string): string => (path.startsWith(".") ? fileURLToPath(new URL(path, import.meta.url)) : path);

const paths = { r1cs: r1csPath, wasm: wasmPath, zkey: zkeyPath };
// The JSON files are inlined (the bundler inlines a JSON import even `with { type: "file" }`):
// their bytes here are their content re-serialised the way the ceremony writes them
// (src/ceremony/ceremony.ts: the vk with indent 1, the transcript with 2), so they are the files' bytes.
const json = { vk: [vkJson, 1], transcript: [transcriptJson, 2] } as const;

/** The bytes of one of the shipped circuit's files. */
export async function shippedFile(file: CeremonyFile): Promise<Uint8Array> {
  if (file === "vk" || file === "transcript") return new TextEncoder().encode(`${JSON.stringify(json[file][0], null, json[file][1])}\n`);
  return new Uint8Array(await readFile(artifactPath(paths[file])));
}
