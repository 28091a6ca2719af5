// A stock Semaphore v4 client, run under node (snarkjs's worker threads hang
// under Bun): reads a JSON list of jobs on stdin, answers each with
// @semaphore-protocol/proof's generateProof, and prints the proof objects
// (or {error}) as a JSON list. The artifacts are passed explicitly from the
// installed @zk-kit/semaphore-artifacts: the stock download cannot work
// offline. Job: {privateKey, members: [decimal, "0" for removed], message,
// scope, depth, verify?}. `verify` also runs the stock verifyProof; `ms` is
// generateProof's time.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Group } from "@semaphore-protocol/group";
import { Identity } from "@semaphore-protocol/identity";
import { generateProof, verifyProof } from "@semaphore-protocol/proof";

const require = createRequire(import.meta.url);
const artifacts = dirname(require.resolve("@zk-kit/semaphore-artifacts/package.json"));

/** The group as the service's members page describes it: removed leaves added as a placeholder, then removed (Group 4.14.2's constructor would not hash a 0 leaf as removeMember does). */
function rebuild(members) {
  const group = new Group(members.map((m) => (m === "0" ? 1n : BigInt(m))));
  members.forEach((m, i) => {
    if (m === "0") group.removeMember(i);
  });
  return group;
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const jobs = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const out = [];
for (const job of jobs) {
  try {
    const identity = new Identity(job.privateKey);
    const group = rebuild(job.members);
    const files = { wasm: join(artifacts, `semaphore-${job.depth}.wasm`), zkey: join(artifacts, `semaphore-${job.depth}.zkey`) };
    const started = performance.now();
    const proof = await generateProof(identity, group, job.message, job.scope, job.depth, files);
    const ms = performance.now() - started;
    out.push(job.verify ? { proof, ms, stockVerified: await verifyProof(proof) } : { proof, ms });
  } catch (error) {
    out.push({ error: String(error?.message ?? error) });
  }
}
process.stdout.write(JSON.stringify(out));
// snarkjs leaves its curve's worker threads running.
process.exit(0);
