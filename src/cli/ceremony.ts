// `zkagent ceremony init|contribute|beacon|verify`: phase 2 of the Groth16
// setup (src/ceremony/ceremony.ts) from the command line. Exit 0 done or
// holds, 1 the ceremony does not verify (or a step was refused), 2 usage.
import {
  CeremonyError,
  type CeremonyReport,
  applyBeacon,
  contribute,
  initCeremony,
  readCeremonyDir,
  shippedCeremony,
  verifyCeremony,
} from "../ceremony/ceremony";
import { AGENT_CEREMONY, CEREMONY_CIRCUITS, type CeremonyCircuit, ceremonyCircuit } from "../ceremony/circuits";
import { PtauMismatchError } from "../ceremony/ptau";
import { zkeyContributions } from "../ceremony/zkey-contributions";
import { PinMismatchError, semaphoreFile } from "../circuits/semaphore";
import { SEMAPHORE_ARTIFACTS_VERSION, SEMAPHORE_MAX_DEPTH } from "../groups/semaphore-pins";
import { nonNegativeInteger, parse, printJson, say, shown, UsageError, warn } from "./args";

export const ceremonyHelp = `zkagent ceremony — phase 2 of the Groth16 setup, on snarkjs's zkey functions

  zkagent ceremony init --out DIR [--circuit NAME] [--ptau FILE] [--json]
      The circuit + its pinned phase-1 Powers of Tau (pinned by BLAKE2b-512;
      --ptau: your own copy of the same file) → DIR/NAME.zkey with no
      contribution yet, and DIR/transcript.json. NAME: agent_identity (the
      default) or budget_spend.
  zkagent ceremony contribute DIR [--name NAME] [--json]
      Adds a contribution. Its randomness comes from the operating system only
      and is forgotten at exit. Prints the contribution hash: publish it, then
      pass DIR to the next participant.
  zkagent ceremony beacon DIR --beacon HEX --iterations N [--name NAME] [--json]
      Closes the ceremony with a public random value (2^N hash rounds).
  zkagent ceremony verify [DIR] [--circuit NAME] [--ptau FILE] [--json]
      Checks r1cs → pinned ptau → every contribution → final zkey →
      verification key, and prints each contribution. Without DIR: the
      ceremony NAME ships with (default agent_identity; budget_spend reads
      circuits/artifacts/budget_spend/ and its ptau from circuits/ptau/, or
      --ptau: from a clone, as the compiled binary carries neither its r1cs
      nor that ptau). Exit 0 when it holds, 1 when not.
  zkagent ceremony semaphore [--depth D] [--json]
      The Semaphore v4 circuits group challenges use (the public Semaphore
      ceremony's, from @zk-kit/semaphore-artifacts): checks each depth's
      files against the SHA-256 pinned in this repository and prints how many
      phase-2 contributions its zkey carries and its beacon; with --depth,
      every contribution's name and hash. Exit 0 when every file matches its
      pin, 1 when not.`;

function printReport(report: CeremonyReport, json: boolean): void {
  if (json) {
    printJson(report);
    return;
  }
  for (const c of report.checks) say(`${c.ok ? "ok  " : "FAIL"}  ${c.check.padEnd(13)} ${shown(c.detail)}`);
  for (const c of report.contributions) {
    const beacon = c.beacon === undefined ? "" : `  (beacon ${c.beacon}, 2^${c.iterations_exp} iterations)`;
    say(`contribution #${c.index} ${shown(c.name)}: ${c.hash}${beacon}`);
  }
  say(report.ok ? `The ceremony holds. vk_hash ${report.vk_hash}` : "The ceremony does NOT verify.");
}

/** `ceremony semaphore`: the pinned Semaphore v4 files and the contributions each zkey carries. */
async function semaphoreCeremony(only: number | undefined, json: boolean): Promise<number> {
  if (only !== undefined && (only < 1 || only > SEMAPHORE_MAX_DEPTH)) throw new UsageError(`--depth must be 1–${SEMAPHORE_MAX_DEPTH}`);
  const depths = only === undefined ? Array.from({ length: SEMAPHORE_MAX_DEPTH }, (_, i) => i + 1) : [only];
  const rows = [];
  let ok = true;
  for (const depth of depths) {
    try {
      for (const file of ["wasm", "vk"] as const) await semaphoreFile(depth, file);
      const { contributions } = await zkeyContributions(await semaphoreFile(depth, "zkey"));
      const beacon = contributions.find((c) => c.type === "beacon") ?? null;
      const count = contributions.filter((c) => c.type === "contribution").length;
      rows.push({ depth, pinned: true, contributions: count, beacon, ...(only === undefined ? {} : { list: contributions }) });
      if (!json) {
        const closing = beacon ? `, beacon "${shown(beacon.name)}" (2^${beacon.iterationsExp} iterations, ${beacon.beaconHash})` : ", no beacon";
        say(`ok    depth ${String(depth).padStart(2)}: files match their pins; ${count} contributions${closing}`);
        if (only !== undefined) for (const [i, c] of contributions.entries()) say(`  #${i + 1} ${c.type} ${shown(c.name)}: ${c.hash}`);
      }
    } catch (error) {
      if (!(error instanceof PinMismatchError)) throw error;
      ok = false;
      rows.push({ depth, pinned: false, error: error.message });
      if (!json) say(`FAIL  depth ${depth}: ${shown(error.message)}`);
    }
  }
  // ~250 KB with --depth: more than a pipe holds, written whole before the exit (src/cli/args.ts).
  if (json) printJson({ package: `@zk-kit/semaphore-artifacts@${SEMAPHORE_ARTIFACTS_VERSION}`, ok, depths: rows });
  else say(ok ? `Every file matches the pins of @zk-kit/semaphore-artifacts ${SEMAPHORE_ARTIFACTS_VERSION}.` : "Some files do NOT match their pins.");
  return ok ? 0 : 1;
}

/** --circuit NAME: one of the circuits a ceremony can be run for. */
function circuitArg(name: string | undefined): CeremonyCircuit {
  if (name === undefined) return AGENT_CEREMONY;
  const circuit = ceremonyCircuit(name);
  if (!circuit) throw new UsageError(`--circuit must be one of ${CEREMONY_CIRCUITS.map((c) => c.name).join(", ")}`);
  return circuit;
}

export async function ceremonyCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      out: { type: "string" },
      ptau: { type: "string" },
      circuit: { type: "string" },
      name: { type: "string" },
      beacon: { type: "string" },
      iterations: { type: "string" },
      depth: { type: "string" },
      json: { type: "boolean" },
    },
    true,
  );
  const [sub, dir] = positionals;
  if (values.help || !sub) {
    say(ceremonyHelp);
    return values.help ? 0 : 2;
  }
  const json = values.json ?? false;
  try {
    switch (sub) {
      case "init": {
        if (!values.out) throw new UsageError("ceremony init needs --out DIR");
        const transcript = await initCeremony(values.out, { ptau: values.ptau, circuit: circuitArg(values.circuit) });
        if (json) printJson({ dir: values.out, zkey_sha256: transcript.steps[0]!.zkey_sha256 });
        else say(`Initial zkey in ${values.out} (no contribution yet). Next: zkagent ceremony contribute ${values.out} --name NAME`);
        return 0;
      }
      case "contribute": {
        if (!dir) throw new UsageError("ceremony contribute needs the DIR");
        const step = await contribute(dir, values.name ?? "anonymous");
        if (json) printJson(step);
        else say(`Contribution hash (publish it; verify shows it in the chain):\n${step.hash}`);
        return 0;
      }
      case "beacon": {
        if (!dir) throw new UsageError("ceremony beacon needs the DIR");
        if (!values.beacon) throw new UsageError("--beacon HEX is required");
        const iterations = nonNegativeInteger(values.iterations, "iterations");
        if (iterations === undefined) throw new UsageError("--iterations N is required");
        const step = await applyBeacon(dir, values.beacon, iterations, { name: values.name });
        if (json) printJson(step);
        else say(`Beacon applied. Contribution hash:\n${step.hash}\nNext: zkagent ceremony verify ${dir}`);
        return 0;
      }
      case "verify": {
        const circuit = values.circuit === undefined ? undefined : circuitArg(values.circuit);
        const files = dir ? await readCeremonyDir(dir) : await shippedCeremony(circuit);
        const report = await verifyCeremony(files, { ptau: values.ptau, circuit });
        printReport(report, json);
        return report.ok ? 0 : 1;
      }
      case "semaphore":
        return await semaphoreCeremony(values.depth === undefined ? undefined : nonNegativeInteger(values.depth, "depth"), json);
      default:
        throw new UsageError(`unknown ceremony command "${sub}"`);
    }
  } catch (error) {
    if (!(error instanceof CeremonyError) && !(error instanceof PtauMismatchError)) throw error;
    if (json) printJson({ error: error.message });
    else warn(`zkagent: ${shown(error.message)}`);
    return 1;
  }
}
