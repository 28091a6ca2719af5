// Issue 18, item 1: one key's flood of submissions for its own pending
// challenges costs one proof check per challenge, on both stores. The
// others are answered `Challenge already used` with the decided status,
// without a pairing check; a claim another node holds is waited for, and one
// whose node died is taken over after its lease.
import { beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { CLAIM_LEASE_MS, LOSER_WAIT_MS } from "../../src/modules/proofs/service";
import type { Verifier } from "../../src/verifier/types";
import { serviceVerifier } from "../../src/verifier/service";
import { createHarness, type Harness } from "../support/harness";
import { SAMPLE, sampleProof, type SampleProof } from "../support/proofs";
import { storesUnderTest } from "../support/stores";
import { keyIdOf, registerAgent, requestChallenge, seedChallenge, submitProof } from "./flow";

let sample: SampleProof;
beforeAll(async () => {
  sample = await sampleProof();
});

/** The service's verifier, counting the proofs it is handed; `fault` makes the next call throw. */
async function countingVerifier() {
  const inner = await serviceVerifier();
  const counter = {
    calls: 0,
    fault: false,
    verify: ((proof, signals) => {
      counter.calls++;
      if (counter.fault) {
        counter.fault = false;
        throw new Error("verifier thread died");
      }
      return inner.verify(proof, signals);
    }) as Verifier["verify"],
  };
  return counter;
}

/** The same wrong proof (the sample statement's, for another nonce) spelled 80 ways: whitespace, member order, trailing blanks. */
function spellings(proof: string, n: number): string[] {
  const parsed = JSON.parse(proof);
  const reordered = Object.fromEntries(Object.entries(parsed).reverse());
  return Array.from({ length: n }, (_, i) => `${JSON.stringify(i % 2 ? parsed : reordered, null, i % 5)}${" ".repeat(i >> 2)}`);
}

const metric = (text: string, name: string, labels: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(" ").pop()) : 0;
};

for (const { name, open } of storesUnderTest()) {
  describe(`proof work per challenge is bounded (${name})`, () => {
    let h: Harness;
    let verifier: Awaited<ReturnType<typeof countingVerifier>>;
    let key: string;
    beforeEach(async () => {
      verifier = await countingVerifier();
      h = await createHarness(await open(), { verifier });
      key = await h.newKey("flood", 0);
      await registerAgent(h, key, "agent", sample.identity);
    });

    test("80 concurrent differently spelled wrong proofs for each of 3 challenges: one proof check each, decided once, the rest 'already used', no 5xx", async () => {
      const challenges = await Promise.all([0, 1, 2].map(() => requestChallenge(h, key, "agent", "purchase")));
      const proofs = spellings(sample.proof, 80);
      // The database claim alone would bound the proof checks too; joining the
      // verification in flight in this process is what spares the other 79
      // submissions a claim attempt (a write) and the poll that follows it.
      const claim = h.store.claimChallenge.bind(h.store);
      let claims = 0;
      h.store.claimChallenge = (id, attempt) => {
        claims++;
        return claim(id, attempt);
      };
      const replies = await Promise.all(challenges.flatMap((c) => proofs.map((proof) => submitProof(h, key, c.challenge_id, proof))));
      expect(replies.filter((r) => r.status >= 500)).toHaveLength(0);
      expect(verifier.calls).toBe(3);
      expect(claims).toBe(3);
      for (const [i, c] of challenges.entries()) {
        const mine = replies.slice(i * 80, (i + 1) * 80);
        const decided = mine.filter((r) => r.body.error === "Proof verification failed");
        expect(decided).toHaveLength(1);
        expect(decided[0]!.body.reason).toBe("proof_rejected");
        const used = mine.filter((r) => r.status === 400 && r.body.error === "Challenge already used");
        expect(used).toHaveLength(79);
        for (const r of used) expect(r.body).toEqual({ error: "Challenge already used", verified: false, previous_status: "failed" });
        expect((await h.store.getChallenge(c.challenge_id))?.status).toBe("failed");
      }
      expect((await h.store.usage(keyIdOf(key)))!.failed).toBe(3);
      const decisions = (await h.store.listAudit({ limit: 1000 })).filter((e) => e.event === "verification.decided");
      expect(decisions).toHaveLength(3);
      // Counted per key in /metrics: 240 submissions, 3 proof checks.
      const text = (await h.call("GET", "/metrics")).body as string;
      const id = `key_id="${keyIdOf(key)}"`;
      expect(metric(text, "zkagent_proof_checks_total", id)).toBe(3);
      expect(metric(text, "zkagent_proof_submissions_total", `${id},outcome="failed"`)).toBe(3);
      expect(metric(text, "zkagent_proof_submissions_total", `${id},outcome="challenge_used"`)).toBe(237);
    });

    test("a challenge another node is verifying: decided meanwhile → its status; still pending after the wait → previous_status pending; no proof check", async () => {
      const decidedElsewhere = await seedChallenge(h, key, "agent", SAMPLE);
      const claim = { token: "other-node", now: h.clock.now(), until: h.clock.now() + CLAIM_LEASE_MS };
      expect((await h.store.claimChallenge(decidedElsewhere, claim)).claimed).toBe(true);
      const started = performance.now();
      const waiting = submitProof(h, key, decidedElsewhere, sample.proof);
      await Bun.sleep(50);
      const failed = { status: "failed" as const, decidedAt: h.clock.now(), confidence: null, reason: "proof_rejected" };
      expect((await h.store.decideChallenge(decidedElsewhere, failed)).decided).toBe(true);
      expect((await waiting).body).toEqual({ error: "Challenge already used", verified: false, previous_status: "failed" });
      expect(performance.now() - started).toBeLessThan(LOSER_WAIT_MS);

      const stillPending = await seedChallenge(h, key, "agent", SAMPLE);
      expect((await h.store.claimChallenge(stillPending, claim)).claimed).toBe(true);
      const waited = performance.now();
      expect((await submitProof(h, key, stillPending, sample.proof)).body).toEqual({
        error: "Challenge already used",
        verified: false,
        previous_status: "pending",
      });
      expect(performance.now() - waited).toBeGreaterThanOrEqual(LOSER_WAIT_MS - 5);
      expect(verifier.calls).toBe(0);
      expect((await h.store.getChallenge(stillPending))?.status).toBe("pending");
    });

    test("a claim whose node died strands the challenge for its lease only: then the next submission verifies", async () => {
      const id = await seedChallenge(h, key, "agent", SAMPLE);
      expect((await h.store.claimChallenge(id, { token: "dead-node", now: h.clock.now(), until: h.clock.now() + CLAIM_LEASE_MS })).claimed).toBe(true);
      h.clock.advance(CLAIM_LEASE_MS + 1);
      const reply = await submitProof(h, key, id, sample.proof);
      expect(reply).toMatchObject({ status: 200, body: { verified: true } });
      expect(verifier.calls).toBe(1);
    });

    test("a verifier fault (500) decides nothing and frees the claim at once: a retry verifies", async () => {
      const id = await seedChallenge(h, key, "agent", SAMPLE);
      verifier.fault = true;
      expect((await submitProof(h, key, id, sample.proof)).status).toBe(500);
      expect((await h.store.getChallenge(id))?.status).toBe("pending");
      expect(await submitProof(h, key, id, sample.proof)).toMatchObject({ status: 200, body: { verified: true } });
    });
  });
}
