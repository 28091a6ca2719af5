// AP2 v0.2 open payment mandates (src/budgets/ap2.ts) made independently with
// @sd-jwt/sd-jwt-vc (an SD-JWT VC) and @sd-jwt/core (AP2's delegate_payload
// form), signed with jose: accepted when made as AP2 specifies, refused with
// the reason otherwise.
import { beforeAll, describe, expect, test } from "bun:test";
import { SDJwtInstance } from "@sd-jwt/core";
import { SDJwtVcInstance } from "@sd-jwt/sd-jwt-vc";
import { importOpenPaymentMandate } from "../../src/budgets/ap2";
import { enrolmentNonce } from "../../src/budgets/encoding";
import { hasher, type Keys, keyPair, saltGenerator, signerOf } from "../support/sd-jwt";

const NOW = Date.UTC(2026, 10, 28, 9);
const nowS = NOW / 1000;
const GROUP = "grp_budget";
const IDC = 1234567n;

let principal: Keys;
let agent: Keys;
let stranger: Keys;
beforeAll(async () => {
  [principal, agent, stranger] = await Promise.all([keyPair(), keyPair(), keyPair()]);
});

const constraints = () => [
  { type: "payment.amount_range", currency: "EUR", max: 3000, min: 1 },
  { type: "payment.budget", max: 100.0, currency: "EUR" },
  {
    type: "payment.allowed_payees",
    allowed: [
      { id: "a", name: "Shop A", website: "https://shop-a.example/" },
      { id: "b", name: "Shop B", website: "https://shop-b.example" },
    ],
  },
  { type: "payment.agent_recurrence", frequency: "DAILY" },
];

interface MakeOptions {
  claims?: Record<string, unknown>;
  signWith?: Keys;
  kbWith?: Keys | null;
  nonce?: string;
  form?: "vc" | "delegate";
  /** What the agent discloses (default: everything). */
  present?: Record<string, unknown>;
}

/** The mandate as AP2 specifies: the principal issues (payees selectively disclosable), the agent presents with a key-binding JWT. */
async function make(options: MakeOptions = {}): Promise<string> {
  const claims = {
    vct: "mandate.payment.open.1",
    constraints: constraints(),
    cnf: { jwk: agent.publicJwk },
    iat: nowS - 60,
    exp: nowS + 86_400 * 30,
    ...options.claims,
  };
  const config = {
    hasher,
    hashAlg: "sha-256" as const,
    saltGenerator,
    signer: signerOf((options.signWith ?? principal).privateKey),
    signAlg: "ES256",
    kbSigner: signerOf((options.kbWith ?? agent).privateKey),
    kbSignAlg: "ES256",
  };
  const nonce = options.nonce ?? enrolmentNonce(GROUP, IDC);
  if (options.form === "delegate") {
    const instance = new SDJwtInstance(config);
    const issued = await instance.issue({ delegate_payload: [claims], _sd_alg: "sha-256" } as never, { delegate_payload: { _sd: [0] } } as never);
    if (options.kbWith === null) return issued;
    return instance.present(issued, undefined, { kb: { payload: { iat: nowS, aud: "zkagent", nonce } } });
  }
  const instance = new SDJwtVcInstance(config);
  const issued = await instance.issue({ iss: "https://bank.example", ...claims } as never, { constraints: { 2: { allowed: { _sd: [0, 1] } } } } as never);
  if (options.kbWith === null) return issued;
  return instance.present(issued, options.present as never, { kb: { payload: { iat: nowS, aud: "zkagent", nonce } } });
}

const importIt = (token: string, extra: Partial<Parameters<typeof importOpenPaymentMandate>[1]> = {}) =>
  importOpenPaymentMandate(token, { principalKeys: [principal.publicJwk], groupId: GROUP, identityCommitment: IDC, now: NOW, ...extra });

describe("accepted as AP2 specifies", () => {
  test("an SD-JWT VC made by @sd-jwt/sd-jwt-vc: terms in minor units, payees as origins, daily budget", async () => {
    const result = await importIt(await make());
    if (!result.ok) throw new Error(result.error);
    const { terms, agentKey } = result.value;
    expect(terms).toMatchObject({
      currency: "EUR",
      min: 1n,
      max: 3000n,
      budget: 10_000n,
      kind: "day",
      once: false,
      payees: ["https://shop-a.example", "https://shop-b.example"],
    });
    expect(terms.expiresAt).toBe(nowS + 86_400 * 30);
    expect(agentKey.x).toBe(agent.publicJwk.x!);
    // τ is one value per signed mandate.
    const other = await importIt(await make());
    expect(other.ok && other.value.terms.mandate).not.toBe(terms.mandate);
  });
  test("AP2's delegate_payload form made by @sd-jwt/core", async () => {
    const result = await importIt(await make({ form: "delegate" }));
    if (!result.ok) throw new Error(result.error);
    expect(result.value.terms.budget).toBe(10_000n);
  });
  test("no recurrence is one-time; ON_DEMAND a lifetime budget; one of several principal keys is enough", async () => {
    const oneTime = await importIt(await make({ claims: { constraints: constraints().slice(0, 3) } }), {
      principalKeys: [stranger.publicJwk, principal.publicJwk],
    });
    expect(oneTime.ok && oneTime.value.terms).toMatchObject({ once: true, kind: "lifetime" });
    const lifetime = await importIt(
      await make({ claims: { constraints: [...constraints().slice(0, 3), { type: "payment.agent_recurrence", frequency: "ON_DEMAND" }] } }),
    );
    expect(lifetime.ok && lifetime.value.terms).toMatchObject({ once: false, kind: "lifetime" });
  });
});

describe("refused with the reason", () => {
  const refused = async (token: string | Promise<string>, reason: RegExp, extra = {}) => {
    const result = await importIt(await token, extra);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(reason);
  };
  test("a tampered disclosure", async () => {
    const token = await make();
    const parts = token.split("~");
    const index = parts.findIndex((p, i) => i > 0 && Buffer.from(p, "base64url").toString().includes("shop-b"));
    parts[index] = Buffer.from(Buffer.from(parts[index]!, "base64url").toString().replace("shop-b", "shop-x")).toString("base64url");
    await refused(parts.join("~"), /not part of what the principal signed/);
  });
  test("a payee withheld by the agent's own presentation, key binding and all (the mandate would read other than signed)", async () => {
    const token = await make({ present: { constraints: { 2: { allowed: { 0: true } } } } });
    const parts = token.split("~");
    expect(parts.some((p) => Buffer.from(p, "base64url").toString().includes("shop-b"))).toBe(false);
    await refused(token, /withholds/);
  });
  test("a key-binding JWT by another key than cnf, or none", async () => {
    await refused(make({ kbWith: stranger }), /not signed by the cnf key/);
    await refused(make({ kbWith: null }), /needs a key-binding JWT/);
  });
  test("a cnf that is not the agent the owner named", async () => {
    await refused(make(), /cnf is not the agent's key/, { agentKey: stranger.publicJwk });
  });
  test("a key binding for another group or identity", async () => {
    await refused(make({ nonce: enrolmentNonce("grp_other", IDC) }), /another enrolment/);
    await refused(make({ nonce: enrolmentNonce(GROUP, IDC + 1n) }), /another enrolment/);
  });
  test("expired, without exp, or not yet valid", async () => {
    await refused(make({ claims: { exp: nowS - 1 } }), /expired/);
    await refused(make({ claims: { exp: undefined } }), /needs exp/);
    await refused(make({ claims: { iat: nowS + 3600 } }), /not yet valid/);
    await refused(make({ claims: { nbf: nowS + 3600 } }), /not yet valid/);
  });
  test("another principal's key", async () => {
    await refused(make({ signWith: stranger }), /not signed by the principal's key/);
  });
  test("an unenforceable recurrence or constraint, named", async () => {
    const withRecurrence = (r: Record<string, unknown>) =>
      make({ claims: { constraints: [...constraints().slice(0, 3), { type: "payment.agent_recurrence", ...r }] } });
    await refused(withRecurrence({ frequency: "BIWEEKLY" }), /BIWEEKLY.*cannot be enforced/);
    await refused(withRecurrence({ frequency: "ANNUALLY" }), /ANNUALLY.*cannot be enforced/);
    await refused(withRecurrence({ frequency: "MONTHLY", max_occurrences: 12 }), /max_occurrences cannot be enforced/);
    await refused(
      make({ claims: { constraints: [...constraints(), { type: "payment.reference", conditional_transaction_id: "x" }] } }),
      /payment.reference cannot be enforced/,
    );
    await refused(make({ claims: { constraints: [...constraints(), { type: "payment.allowed_pisps", allowed: [] }] } }), /allowed_pisps cannot be enforced/);
    await refused(make({ claims: { constraints: [...constraints(), { type: "payment.mystery" }] } }), /does not enforce/);
  });
  test("amounts that are not whole minor units, currencies that disagree, payees without a website", async () => {
    const replace = (i: number, c: Record<string, unknown>) => {
      const list: Record<string, unknown>[] = constraints();
      list[i] = c;
      return make({ claims: { constraints: list } });
    };
    await refused(replace(1, { type: "payment.budget", max: 0.005, currency: "EUR" }), /budget.max has more decimals/);
    await refused(replace(1, { type: "payment.budget", max: 1e21, currency: "EUR" }), /budget.max/);
    await refused(replace(1, { type: "payment.budget", max: 100, currency: "USD" }), /budget.currency/);
    await refused(replace(0, { type: "payment.amount_range", currency: "EUR", max: 10.5 }), /amount_range.max/);
    await refused(replace(2, { type: "payment.allowed_payees", allowed: [{ id: "a", name: "no site" }] }), /needs a website/);
    await refused(make({ claims: { constraints: constraints().slice(1) } }), /amount_range is required/);
  });
  test("not an SD-JWT, or another vct", async () => {
    await refused(Promise.resolve("nonsense"), /not an SD-JWT/);
    await refused(make({ claims: { vct: "mandate.payment.1" } }), /vct/);
  });
});
