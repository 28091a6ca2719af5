// A child process of semaphore.test.ts: proves Semaphore statements with our
// prover, so that the test can use both of CI's cores. Reads on stdin a JSON
// list of [depth, groupSize] pairs (grouped by depth), writes on stdout one
// JSON result per pair: the statement's stock fields and the proof.
import { createProver, type Prover } from "../../src/prover";
import { semaphoreArtifacts, semaphoreStatement } from "./semaphore";

export interface ProvedStatement {
  depth: number;
  merkleTreeRoot: string;
  message: string;
  scope: string;
  proof: unknown;
  publicSignals: string[];
}

let text = "";
for await (const chunk of Bun.stdin.stream()) text += new TextDecoder().decode(chunk);
const jobs: [number, number][] = JSON.parse(text);
const provers = new Map<number, Prover>();
const out: ProvedStatement[] = [];
for (const [depth, size] of jobs) {
  // Without window tables: they cost more to build than they save over a few proofs.
  if (!provers.has(depth)) provers.set(depth, await createProver(semaphoreArtifacts(depth), { precompute: false }));
  const st = semaphoreStatement(depth, size);
  const { proof, publicSignals } = await provers.get(depth)!.prove(st.input);
  out.push({ depth, merkleTreeRoot: st.merkleTreeRoot.toString(), message: st.message.toString(), scope: st.scope.toString(), proof, publicSignals });
}
process.stdout.write(JSON.stringify(out));
process.exit(0);
