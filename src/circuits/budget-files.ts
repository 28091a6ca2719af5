// The budget spend circuit's witness generator and proving key, imported
// `with { type: "file" }` so the compiled binary embeds them (scripts/build.ts):
// the service serves them (GET /v1/circuits/{id}/wasm and /zkey) and the
// binary's agent commands prove from them, with no clone beside it. The r1cs
// and the project's ptau are not embedded: the budget circuit's ceremony is
// verified from a clone (docs/trust.md).
import { bundledFilePath } from "../bundled-file";
import wasmPath from "../../circuits/artifacts/budget_spend/budget_spend.wasm" with { type: "file" };
import zkeyPath from "../../circuits/artifacts/budget_spend/budget_spend.zkey" with { type: "file" };

/** Where the embedded (or, from a clone, the repository's) budget_spend.wasm or .zkey is: a path readFile takes. */
export const budgetFilePath = (kind: "wasm" | "zkey"): string => bundledFilePath((kind === "zkey" ? zkeyPath : wasmPath) as unknown as string, import.meta.url);
