// `zkagent circuits add|activate|retire|list`: the circuit versions in the
// store every node shares (docs/trust.md). Exit 0 done, 1 refused, 2 usage.
import { CeremonyError, readCeremonyDir, verifyCeremony } from "../ceremony/ceremony";
import { CIRCUIT_REFRESH_MS, circuitRecordOf, rebuildCircuitListings, seedShippedCircuit } from "../circuits/registry";
import { pinnedArtifacts } from "../circuits/pins";
import type { Config } from "../config";
import { CHALLENGE_LIFETIME_MS } from "../modules/challenges/lifecycle";
import { circuitViewOf } from "../modules/circuits/service";
import { openStore } from "../store";
import { parse, printJson, say, shown, UsageError, warn } from "./args";

const refresh = CIRCUIT_REFRESH_MS / 1000;

export const circuitsHelp = `zkagent circuits — circuit versions (uses DATABASE_URL, also while the server runs)

  zkagent circuits list [--json]          Every version: id, state, setup, vk_hash (--json: as GET /v1/circuits)
  zkagent circuits add DIR [--json]       Stores a ceremony's output (zkagent ceremony …) as an
                                          accepted version, after \`ceremony verify DIR\` holds;
                                          refused (exit 1) when it does not.
  zkagent circuits activate ID [--json]   New challenges use it, on every node within ${refresh} s.
                                          Challenges issued before keep their circuit.
  zkagent circuits retire ID [--json]     It verifies nothing any more: proofs for challenges
                                          issued with it fail with reason circuit_retired.
                                          The active circuit cannot be retired.`;

export async function circuitsCommand(argv: string[], config: Config): Promise<number> {
  const { values, positionals } = parse(argv, { json: { type: "boolean" } }, true);
  const [sub, arg] = positionals;
  if (values.help || !sub) {
    say(circuitsHelp);
    return values.help ? 0 : 2;
  }
  if (!["list", "add", "activate", "retire"].includes(sub)) throw new UsageError(`unknown circuits command "${sub}"`);
  if (sub !== "list" && !arg) throw new UsageError(`circuits ${sub} needs the ${sub === "add" ? "DIR" : "ID"}`);
  const fail = (message: string, extra: Record<string, unknown> = {}) => {
    if (values.json) printJson({ error: message, ...extra });
    else warn(`zkagent: ${shown(message)}`);
    return 1;
  };

  // Checked before the store is opened: a ceremony that does not verify never reaches it.
  let record: ReturnType<typeof circuitRecordOf> | undefined;
  if (sub === "add") {
    const files = await readCeremonyDir(arg!).catch((error: Error) => error);
    if (files instanceof Error) return fail(files.message);
    // The pins first (src/circuits/pins.ts): a circuit an agent would refuse is not worth the seconds of the ceremony checks.
    const pinned = pinnedArtifacts(files.wasm, files.zkey);
    if (!pinned.ok) return fail(`the ceremony in ${arg} is not for a pinned circuit: ${pinned.reason}`);
    const report = await verifyCeremony(files);
    if (!report.ok) {
      const failed = report.checks.filter((c) => !c.ok).map((c) => `${c.check}: ${c.detail}`);
      return fail(`the ceremony in ${arg} does not verify (zkagent ceremony verify ${arg}): ${failed.join("; ")}`, { checks: report.checks });
    }
    try {
      record = circuitRecordOf(files, Date.now());
    } catch (error) {
      if (error instanceof CeremonyError) return fail(`the ceremony in ${arg} is refused: ${error.message}`);
      throw error;
    }
  }

  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  try {
    // As the server's start does (main.ts): the shipped circuit is stored, and older rows' listings rebuilt,
    // so a store no server has opened yet lists (and activates against) what a server would serve.
    await seedShippedCircuit(store, Date.now());
    await rebuildCircuitListings(store);
    switch (sub) {
      case "list": {
        // The view GET /v1/circuits gives, so --json and the API list the same fields.
        // A row the service does not serve (its stored transcript refused, or not rebuilt yet) is named here, never listed as served.
        const records = await store.listCircuits();
        const circuits = records.map(circuitViewOf).filter((view) => view !== null);
        const notServed = records
          .filter((c) => circuitViewOf(c) === null)
          .map((c) => ({ id: c.id, state: c.state, reason: c.refused ?? "not rebuilt yet: start the server once" }));
        if (values.json) printJson(notServed.length ? { circuits, not_served: notServed } : { circuits });
        else if (records.length === 0) say("No circuits.");
        else {
          for (const c of circuits) say(`${c.id}  ${c.state.padEnd(8)}  ${c.setup.padEnd(11)}  ${c.vk_hash}`);
          for (const c of notServed) say(`${c.id}  ${c.state.padEnd(8)}  NOT SERVED: ${c.reason}`);
        }
        return 0;
      }
      case "add": {
        const { added, state } = await store.addCircuit(record!);
        if (values.json) printJson({ id: record!.id, added, state, vk_hash: record!.vkHash });
        else
          say(
            added
              ? `Added ${record!.id} (${state}), vk_hash ${record!.vkHash}.${state === "accepted" ? ` Activate it: zkagent circuits activate ${record!.id}` : ""}`
              : `${record!.id} is stored already (${state}).`,
          );
        return 0;
      }
      case "activate": {
        const outcome = await store.activateCircuit(arg!, Date.now());
        if (outcome === "unknown") return fail(`no circuit ${arg}`);
        if (outcome === "retired") return fail(`${arg} is retired; a retired circuit is never used again`);
        if (values.json) printJson({ id: arg, state: "active", refresh_seconds: refresh });
        else
          say(
            outcome === "activated"
              ? `Active circuit: ${arg}. Every node issues challenges with it within ${refresh} s; challenges issued before keep their circuit.`
              : `${arg} is already the active circuit.`,
          );
        return 0;
      }
      case "retire": {
        const outcome = await store.retireCircuit(arg!, Date.now());
        if (outcome === "unknown") return fail(`no circuit ${arg}`);
        if (outcome === "active") return fail(`${arg} is the active circuit: activate another first`);
        if (values.json) printJson({ id: arg, state: "retired", refresh_seconds: refresh });
        else
          say(
            outcome === "retired"
              ? `Retired ${arg}: within ${refresh} s no node verifies with it; challenges issued with it in the last ${CHALLENGE_LIFETIME_MS / 60_000} minutes fail with circuit_retired.`
              : `${arg} was already retired.`,
          );
        return 0;
      }
    }
    return 2;
  } finally {
    await store.close();
  }
}
