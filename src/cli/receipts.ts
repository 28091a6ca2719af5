import type { Config } from "../config";
import { newSigningKey } from "../receipts/keys";
import { jwkOf, KEY_REFRESH_MS } from "../receipts/signer";
import { openStore } from "../store";
import type { SigningKeyRecord } from "../store/signing-keys/records";
import { parse, printJson, say, shown, UsageError, warn } from "./args";

export const receiptsHelp = `zkagent receipts — manage the receipt signing keys (uses DATABASE_URL, also while the server runs)

  zkagent receipts list [--json]         Every key: kid, state, created, retired (never the private key)
  zkagent receipts rotate [--json]       A new active key; the old one stays in the JWKS.
                                         Every node signs with it within ${KEY_REFRESH_MS / 1000} s.
  zkagent receipts retire KID [--json]   Withdraws a no-longer-active key from the JWKS:
                                         its receipts stop verifying against it. Refused
                                         within ${(KEY_REFRESH_MS + 1000) / 1000} s of a rotation (nodes may still sign with it).
New keys are sealed with RECEIPT_KEY_SECRET when it is set (docs/receipts.md).`;

const view = (key: SigningKeyRecord) => ({
  kid: key.kid,
  state: key.state,
  created_at: new Date(key.createdAt).toISOString(),
  retired_at: key.retiredAt === null ? null : new Date(key.retiredAt).toISOString(),
  public_jwk: jwkOf(key),
});

export async function receiptsCommand(argv: string[], config: Config): Promise<number> {
  // A kid is a base64url thumbprint: one in 64 starts with "-", which the
  // option parser would take for an option. `retire`'s operand is read by
  // position instead (or after "--", as usual).
  const FLAGS = ["--json", "--help", "-h", "--"];
  const operand = argv[0] === "retire" && argv[1] !== undefined && !FLAGS.includes(argv[1]) ? argv[1] : undefined;
  const rest = operand === undefined ? argv : [argv[0]!, ...argv.slice(2)];
  const { values, positionals } = parse(rest, { json: { type: "boolean" } }, true);
  const [sub] = positionals;
  const kid = operand ?? positionals[1];
  if (values.help || !sub) {
    say(receiptsHelp);
    return values.help ? 0 : 2;
  }
  if (sub !== "list" && sub !== "rotate" && sub !== "retire") throw new UsageError(`unknown receipts command "${shown(sub)}"`);
  if (sub === "retire" && !kid) throw new UsageError("receipts retire needs the KID");
  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  try {
    switch (sub) {
      case "list": {
        const keys = (await store.listSigningKeys()).map(view);
        if (values.json) printJson({ keys });
        else if (keys.length === 0) say("No signing keys yet: the first start of the server creates one.");
        else for (const k of keys) say(`${k.kid}  ${k.state.padEnd(9)}  created ${k.created_at}${k.retired_at ? `  retired ${k.retired_at}` : ""}`);
        return 0;
      }
      case "rotate": {
        const next = await newSigningKey(Date.now(), config.receiptKeySecret || undefined);
        const previous = await store.rotateSigningKey(next);
        if (values.json) printJson({ active: next.kid, previous, refresh_seconds: KEY_REFRESH_MS / 1000 });
        else
          say(
            `Active signing key: ${next.kid}${previous ? ` (${previous} stays published)` : ""}. Every node signs with it within ${KEY_REFRESH_MS / 1000} s.`,
          );
        return 0;
      }
      case "retire": {
        // Nodes may sign with the key they cached for up to KEY_REFRESH_MS
        // after a rotation; retiring a key then would publish receipts that
        // no longer verify. Wait that long (and a second for clocks) instead.
        const active = await store.activeSigningKey();
        const sinceRotation = active ? Date.now() - active.createdAt : Infinity;
        const settle = KEY_REFRESH_MS + 1_000;
        if (sinceRotation < settle) {
          const message = `the last rotation was ${Math.round(sinceRotation / 1000)} s ago; nodes may still sign with earlier keys. Retry in ${Math.ceil((settle - sinceRotation) / 1000)} s.`;
          if (values.json) printJson({ error: message });
          else warn(`zkagent: ${message}`);
          return 1;
        }
        const outcome = await store.retireSigningKey(kid!, Date.now());
        const named = shown(kid!);
        const messages = {
          retired: `Retired ${named}: it is no longer in the JWKS.`,
          already_retired: `${named} was already retired.`,
          active: `${named} is the active key: rotate first, then retire it.`,
          unknown: `no signing key ${named}`,
        } as const;
        const ok = outcome === "retired" || outcome === "already_retired";
        if (values.json) printJson(ok ? { kid, state: "retired" } : { error: messages[outcome] });
        else if (ok) say(messages[outcome]);
        else warn(`zkagent: ${messages[outcome]}`);
        return ok ? 0 : 1;
      }
    }
  } finally {
    await store.close();
  }
}

// `receipt verify` is an agent command too (@zkagent/agent runs it under Node): in ./receipt.ts, apart from the store.
export { receiptCommand, receiptHelp } from "./receipt";
