// Crash safety with real processes (docs/api.md, Decisions: an answered
// write survives a crash of the process, kill -9).
//
// Each cycle: start `zkagent serve --workers 1` on the same SQLite file, make
// two challenges and prove them, then run a load of challenge creations (8
// clients in a loop) and, in the middle of it, the two proof verifications;
// SIGKILL the process group at a random moment; restart; check that every
// answer the client RECEIVED is in the database:
//   - each 200 challenge exists with its exact nonce (and its agent/action);
//   - each `verified: true` answer is still `verified`, with its confidence;
//   - usage.challenges of the key == its rows, and ≥ the acknowledged creations.
// A request in flight at the kill may or may not have committed: its row may
// exist without an acknowledgement, so rows − acknowledged is bounded by the
// number of requests that were unanswered when the kill was sent, never the
// other way round.
//
// CRASH_CYCLES (default 5) sets the number of cycles; CRASH_SEED the seed of
// the kill moments (printed).
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { createIdentity, prove, type AgentIdentity } from "../../src/agent";
import { systemClock } from "../../src/clock";
import { createKey } from "../../src/modules/keys/service";
import { openSqlite } from "../../src/store/sqlite";
import { api, killGroup, startServe, tempDatabase, type ServerProcess } from "./support";
import { rng } from "../support/random";

const CYCLES = Number(process.env.CRASH_CYCLES ?? 5);
const SEED = Number(process.env.CRASH_SEED ?? 7);
const CLIENTS = 8;

let running: ServerProcess | undefined;
afterAll(() => {
  if (running) killGroup(running.child, "SIGKILL");
});

interface Acked {
  id: string;
  nonce: string;
  action: string;
}

test(
  `SIGKILL at random moments loses no acknowledged write (${CYCLES} cycles)`,
  async () => {
    const random = rng(SEED);
    console.log(`[crash] cycles=${CYCLES} seed=${SEED} clients=${CLIENTS} (replay: CRASH_SEED=${SEED} CRASH_CYCLES=${CYCLES})`);
    const db = tempDatabase("crash");
    const setup = openSqlite(db);
    const { key, record } = await createKey(setup, systemClock, "crash", 0);
    await setup.close();
    const agent: AgentIdentity = await createIdentity();

    const acked: Acked[] = [];
    const verifiedAcks: { id: string; confidence: number }[] = [];
    let maxUnansweredAtKill = 0;
    let totalUnansweredAtKill = 0;
    let survived = 0;

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      running = await startServe(db);
      const { url } = running;
      if (cycle === 0) {
        const reg = await api(url, key, "POST", "/v1/agents", { agent_id: "crash-agent", identity_commitment: agent.identity_commitment });
        expect(reg.status).toBe(201);
      }

      // Challenges made early in the cycle, proved before the load starts.
      const toProve: { id: string; proof: string }[] = [];
      for (let i = 0; i < 2; i++) {
        const action = `prove-${cycle}-${i}`;
        const c = await api(url, key, "POST", "/v1/verify/challenge", { agent_id: "crash-agent", action }).catch(async (error) => {
          throw new Error(`${error} — server exit ${await Promise.race([running!.exited, Bun.sleep(100).then(() => "alive")])}; output:\n${running!.output()}`);
        });
        expect(c.status).toBe(200);
        acked.push({ id: c.body.challenge_id, nonce: c.body.nonce, action });
        toProve.push({ id: c.body.challenge_id, proof: await prove({ secret: agent.secret, nonce: c.body.nonce, action }) });
      }

      // The load, until the process dies under it.
      let unanswered = 0;
      let killed = false;
      const client = async (n: number) => {
        for (let i = 0; !killed; i++) {
          const action = `load-${cycle}-${n}-${i}`;
          unanswered++;
          try {
            const r = await fetch(`${url}/v1/verify/challenge`, {
              method: "POST",
              headers: { "x-api-key": key, "content-type": "application/json" },
              body: JSON.stringify({ agent_id: "crash-agent", action, context: { cycle, n, i } }),
            });
            const body = (await r.json()) as any;
            if (r.status === 200) acked.push({ id: body.challenge_id, nonce: body.nonce, action });
            else expect(r.status).toBe(200); // no rate limit, no errors under load
          } catch {
            return; // connection refused/reset: the kill happened
          } finally {
            unanswered--;
          }
        }
      };
      const verifications = (async () => {
        for (const { id, proof } of toProve) {
          try {
            const r = await fetch(`${url}/v1/verify/proof`, {
              method: "POST",
              headers: { "x-api-key": key, "content-type": "application/json" },
              body: JSON.stringify({ challenge_id: id, proof }),
            });
            const body = (await r.json()) as any;
            expect(r.status).toBe(200);
            expect(body.verified).toBe(true);
            verifiedAcks.push({ id, confidence: body.confidence });
          } catch (error) {
            if (!killed) throw error;
          }
        }
      })();
      const load = Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));

      // Kill at a random moment: after 30–400 ms of load, and at least a few answers in.
      const before = acked.length;
      const killAfter = 30 + Math.floor(random() * 370);
      const start = Date.now();
      while (Date.now() - start < killAfter || acked.length < before + 5) await Bun.sleep(5);
      killed = true;
      const atKill = unanswered;
      killGroup(running.child, "SIGKILL");
      expect(await running.exited).toBe("SIGKILL");
      await Promise.all([load, verifications]);
      maxUnansweredAtKill = Math.max(maxUnansweredAtKill, atKill);
      totalUnansweredAtKill += atKill;

      // Restart on the same file and check every acknowledgement, of every cycle so far.
      running = await startServe(db);
      const check = new Database(db, { readonly: true });
      const rows = new Map<string, { nonce: string; action: string; status: string; confidence: number | null }>();
      for (const row of check.query("SELECT id, nonce, action, status, confidence FROM challenges WHERE key_id = ?").all(record.id) as any[])
        rows.set(row.id, row);
      const usage = check.query("SELECT challenges FROM api_keys WHERE id = ?").get(record.id) as { challenges: number };
      check.close();

      const lost = acked.filter((a) => rows.get(a.id)?.nonce !== a.nonce || rows.get(a.id)?.action !== a.action);
      expect(lost).toEqual([]);
      for (const v of verifiedAcks) {
        expect(rows.get(v.id)?.status).toBe("verified");
        expect(rows.get(v.id)?.confidence).toBe(v.confidence);
      }
      expect(usage.challenges).toBe(rows.size);
      expect(usage.challenges).toBeGreaterThanOrEqual(acked.length);
      // Rows without an acknowledgement can only come from requests in flight at a kill.
      expect(rows.size - acked.length).toBeLessThanOrEqual(totalUnansweredAtKill);
      // The restarted server answers for them too.
      const sample = acked[Math.floor(random() * acked.length)]!;
      const status = await api(running.url, key, "GET", `/v1/verify/status/${sample.id}`);
      expect(status.status).toBe(200);
      expect(status.body.action).toBe(sample.action);
      killGroup(running.child, "SIGTERM");
      expect(await running.exited).toBe(0);
      running = undefined;
      survived++;
      console.log(
        `[crash] cycle ${cycle + 1}: killed after ${killAfter} ms with ${atKill} unanswered; acked ${acked.length} challenges, ${verifiedAcks.length} verifications; rows ${rows.size}; lost 0`,
      );
    }

    const final = new Database(db, { readonly: true });
    expect((final.query("PRAGMA integrity_check").get() as any).integrity_check).toBe("ok");
    final.close();
    expect(survived).toBe(CYCLES);
    expect(verifiedAcks.length).toBeGreaterThan(0);
    console.log(
      `[crash] survived ${survived}/${CYCLES} cycles; acknowledged ${acked.length} challenges and ${verifiedAcks.length} verifications; lost 0; max unanswered at a kill ${maxUnansweredAtKill}`,
    );
  },
  30_000 + CYCLES * 15_000,
);
