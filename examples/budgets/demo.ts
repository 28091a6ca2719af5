// The budgets demo (README, "Budgets across merchants"): one member's budget
// followed across two merchants on real processes, and what each party
// received, written to disk.
//
//   bun run demo:budgets -- --out DIR
//
// Processes: the zkagent service (SQLite in a temporary folder, its clock a
// TEST_CLOCK_FILE this script moves), shops A, B and C (examples/shop, each
// on its own API key with its own registered origin) and, for every purchase,
// the agent as a process of its own (`zkagent budget join`, then `zkagent
// fetch --budget` per purchase). In between, recorders of this script's own: one in front of each
// shop (what the merchant received from the agent and answered) and one
// between each shop and the service (what the merchant asked the service
// and what it answered), and the merchants' webhook endpoints.
//
// The scenario: a principal signs an AP2 open payment mandate (@sd-jwt/sd-jwt-vc:
// 100 EUR a day, at most 30 a purchase, payees shop A and shop B) bound to
// the agent's key; the group's owner enrols the member with it; the agent
// buys 20 EUR at A, B, A, B, A (201 each), a sixth 20 at B (refused: the
// day's budget), 31 at A (refused: per purchase), 20 at shop C (refused: not
// a payee); the clock moves a day ahead and 20 at B passes again.
//
// DIR/summary.json       the purchases in order: merchant, amount, currency, day, status, reason
// DIR/merchant-a/, -b/   every exchange merchant A (B) took part in, one file each (-c/ too)
// DIR/public/            what anyone may read: the group, its roots and notes
//                        checkpoints, the circuits and the budget circuit's
//                        verification key, the receipts' JWKS
//
// Exit 0 when every purchase ended as the scenario says, 1 when one did
// not (summary.json says which), 2 on bad arguments, 3 when a piece the
// scenario needs is missing or failed (the message names it).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { SDJwtVcInstance } from "@sd-jwt/sd-jwt-vc";
import type { Subprocess } from "bun";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import { createHash } from "node:crypto";
import { budgetGroup, currencyField, enrolmentNonce } from "../../src/budgets/encoding";
import { H1 } from "../../src/budgets/hash";
import { FileOffsetClock, setTestClock } from "../../src/clock";

const ROOT = resolve(import.meta.dir, "../..");
const CLI = join(ROOT, "src/cli/index.ts");
const SHOP = join(ROOT, "examples/shop/server.ts");
const DAY_MS = 86_400_000;
const GROUP_ID = "household-budget";
const CURRENCY = "EUR";
/** BN254's scalar field order: identity secrets are below it. */
const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

export class DemoError extends Error {}

export interface Purchase {
  merchant: "A" | "B" | "C";
  amount: string;
  /** What the scenario expects: 201, or the refusal's reason. */
  expect: 201 | "budget" | "per_purchase" | "payee";
  /** Purchases after the clock moved a day ahead. */
  nextDay?: boolean;
}

export const SCENARIO: readonly Purchase[] = [
  { merchant: "A", amount: "20.00", expect: 201 },
  { merchant: "B", amount: "20.00", expect: 201 },
  { merchant: "A", amount: "20.00", expect: 201 },
  { merchant: "B", amount: "20.00", expect: 201 },
  { merchant: "A", amount: "20.00", expect: 201 },
  { merchant: "B", amount: "20.00", expect: "budget" },
  { merchant: "A", amount: "31.00", expect: "per_purchase" },
  { merchant: "C", amount: "20.00", expect: "payee" },
  { merchant: "B", amount: "20.00", expect: 201, nextDay: true },
];

export interface SummaryEntry {
  merchant: string;
  origin: string;
  amount: string;
  currency: string;
  /** The service's day (UTC) when the purchase was made. */
  day: string;
  /** The shop's last HTTP answer to the agent (0: the agent never got one). */
  status: number;
  /** null for a 201; else why it was refused: budget, per_purchase, payee, or what the parties said. */
  reason: string | null;
  /** Who refused: the agent (before proving), the service (the proof's decision) or the shop. */
  refused_by: "agent" | "service" | "shop" | null;
  /** What the agent's process said, for a refusal. */
  detail: string | null;
  expected: string;
  as_expected: boolean;
}

// ---------------------------------------------------------------- processes

const children: Subprocess[] = [];

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

/** The last 4 KiB a long-running child wrote on stderr, read as it comes (a pipe nobody reads would stall the child once full). */
function stderrTail(child: Subprocess<"ignore", "pipe", "pipe">): () => string {
  let tail = "";
  void (async () => {
    for await (const chunk of child.stderr) tail = (tail + new TextDecoder().decode(chunk)).slice(-4096);
  })();
  return () => tail;
}

/** Reads a child's stdout until `pattern` matches the text so far; the rest is read and dropped. */
async function waitForOutput(child: Subprocess<"ignore", "pipe", "pipe">, pattern: RegExp, what: string, timeoutMs = 60_000): Promise<RegExpExecArray> {
  const stderr = stderrTail(child);
  const reader = child.stdout.getReader();
  let text = "";
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = pattern.exec(text);
    if (match) {
      void (async () => {
        while (!(await reader.read()).done);
      })();
      return match;
    }
    const next = await Promise.race([reader.read(), Bun.sleep(deadline - Date.now()).then(() => null)]);
    if (!next || next.done) break;
    text += new TextDecoder().decode(next.value);
  }
  await Bun.sleep(100); // the last of stderr
  throw new DemoError(`${what} did not start (exit ${child.exitCode ?? "none yet"}): ${(text + stderr()).trim().slice(-800)}`);
}

async function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([process.execPath, CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

// ---------------------------------------------------------------- recording

type Body = unknown;

const parseBody = (text: string): Body => {
  if (text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

const headersOf = (headers: Headers): Record<string, string> => Object.fromEntries([...headers.entries()].sort(([a], [b]) => a.localeCompare(b)));

/** One merchant's transcript: a folder, one numbered file per exchange. */
export class Transcript {
  private count = 0;
  /** The status of the last answer the shop gave the agent: a purchase's HTTP status. */
  lastAgentStatus: number | null = null;
  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }
  write(kind: string, record: Record<string, unknown>): string {
    const name = `${String(++this.count).padStart(3, "0")}-${kind}.json`;
    writeFileSync(join(this.dir, name), `${JSON.stringify(record, null, 2)}\n`);
    return name;
  }
}

/** The payload of a compact JWS (a receipt), decoded; null when it is not one. */
function jwsPayload(token: unknown): Record<string, unknown> | null {
  if (typeof token !== "string" || !/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) return null;
  try {
    const [header, payload] = token
      .split(".")
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part!, "base64url").toString("utf8")));
    return { header, payload };
  } catch {
    return null;
  }
}

/** Receipts found anywhere in a body (fields named receipt). */
function receiptsIn(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) receiptsIn(item, into);
  else if (typeof value === "object" && value !== null)
    for (const [key, member] of Object.entries(value)) {
      if (key === "receipt" && typeof member === "string") into.push(member);
      else receiptsIn(member, into);
    }
  return into;
}

/**
 * A recorder: every request it forwards and the answer it returns become one
 * file of the transcript, and each receipt an answer carries one more (the
 * receipt and its decoded header and payload). In front of `upstream()` (a
 * reverse proxy: the shop's public origin), or, with "forward", an HTTP
 * proxy the shop's process sends its calls to the service through
 * (HTTP_PROXY), so the shop names the service by its own URL (the circuit
 * links its challenges carry are the service's, which the agent trusts).
 */
function recorder(transcript: Transcript, kind: string, upstream: (() => string) | "forward") {
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 120,
    async fetch(request) {
      const url = new URL(request.url);
      const body = request.method === "GET" || request.method === "HEAD" ? "" : await request.text();
      const headers = new Headers(request.headers);
      headers.delete("host");
      const answer = await fetch(upstream === "forward" ? url.href : upstream() + url.pathname + url.search, {
        method: request.method,
        headers,
        body: body === "" ? undefined : body,
        redirect: "manual",
      });
      const text = await answer.text();
      const replyHeaders = new Headers(answer.headers);
      for (const name of ["content-encoding", "content-length", "transfer-encoding"]) replyHeaders.delete(name);
      const parsed = parseBody(text);
      if (kind === "agent") transcript.lastAgentStatus = answer.status;
      transcript.write(kind, {
        request: { method: request.method, path: url.pathname + url.search, headers: headersOf(request.headers), body: parseBody(body) },
        response: { status: answer.status, headers: headersOf(replyHeaders), body: parsed },
      });
      for (const receipt of receiptsIn(parsed)) transcript.write("receipt", { receipt, decoded: jwsPayload(receipt), from: kind });
      return new Response(text, { status: answer.status, headers: replyHeaders });
    },
  });
}

// ---------------------------------------------------------------- the service

interface Reply {
  status: number;
  body: any;
}

async function call(base: string, method: string, path: string, key: string | null, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (key) headers["x-api-key"] = key;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: parseBody(await response.text()) };
}

function expectStatus(reply: Reply, status: number, what: string): any {
  if (reply.status !== status) throw new DemoError(`${what}: expected ${status}, got ${reply.status} ${JSON.stringify(reply.body).slice(0, 600)}`);
  return reply.body;
}

// ---------------------------------------------------------------- the mandate

const sha256 = (data: string | ArrayBuffer) =>
  new Uint8Array(
    createHash("sha256")
      .update(typeof data === "string" ? data : new Uint8Array(data))
      .digest(),
  );
const salt = () => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url");

/** A jose-backed @sd-jwt signer: signs the exact "header.payload" bytes it is given (ES256, P-256). */
const signer = (key: CryptoKey) => async (data: string) => {
  const raw = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key, new TextEncoder().encode(data));
  return Buffer.from(raw).toString("base64url");
};

export interface MandateInput {
  principal: CryptoKey;
  agent: { privateKey: CryptoKey; publicJwk: JWK };
  payees: { id: string; name: string; website: string }[];
  nowS: number;
  groupId: string;
  identityCommitment: bigint;
}

/**
 * The principal's AP2 v0.2 open payment mandate (vct mandate.payment.open.1),
 * issued with @sd-jwt/sd-jwt-vc (the payees selectively disclosable), and the
 * agent's presentation of it: every disclosure and a key-binding JWT by the
 * cnf key over this enrolment's nonce (this group, this identity).
 */
export async function openPaymentMandate(input: MandateInput): Promise<string> {
  const instance = new SDJwtVcInstance({
    hasher: sha256,
    hashAlg: "sha-256",
    saltGenerator: salt,
    signer: signer(input.principal),
    signAlg: "ES256",
    kbSigner: signer(input.agent.privateKey),
    kbSignAlg: "ES256",
  });
  const claims = {
    iss: "https://bank.example",
    vct: "mandate.payment.open.1",
    constraints: [
      { type: "payment.amount_range", currency: CURRENCY, min: 1, max: 3000 },
      { type: "payment.budget", currency: CURRENCY, max: 100.0 },
      { type: "payment.allowed_payees", allowed: input.payees },
      { type: "payment.agent_recurrence", frequency: "DAILY" },
    ],
    cnf: { jwk: input.agent.publicJwk },
    iat: input.nowS,
    exp: input.nowS + 30 * 86_400,
  };
  const issued = await instance.issue(claims as never, { constraints: { 2: { allowed: { _sd: input.payees.map((_, i) => i) } } } } as never);
  return instance.present(issued, undefined, {
    kb: { payload: { iat: input.nowS, aud: "zkagent", nonce: enrolmentNonce(input.groupId, input.identityCommitment) } },
  });
}

// ---------------------------------------------------------------- the run

export interface DemoOptions {
  out: string;
  /** Where the run's processes keep their files (the service's database, the agent's), kept; default a temporary folder, removed at the end. */
  work?: string;
  log?: (line: string) => void;
}

export interface DemoResult {
  summary: SummaryEntry[];
  ok: boolean;
}

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const out = resolve(options.out);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, "public"), { recursive: true });
  const work = options.work ?? mkdtempSync(join(tmpdir(), "zkagent-budgets-demo-"));
  mkdirSync(work, { recursive: true });
  const clockFile = join(work, "clock");
  // Noon UTC of today's date: the day's purchases stay on one day, wherever the real clock is.
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  setTestClock(clockFile, today + DAY_MS / 2);
  const clock = new FileOffsetClock(clockFile);
  const dayOf = () => new Date(clock.now()).toISOString().slice(0, 10);
  const servers: ReturnType<typeof Bun.serve>[] = [];
  try {
    // The service.
    const databaseUrl = join(work, "zkagent.db");
    const serviceEnv = {
      DATABASE_URL: databaseUrl,
      HOST: "127.0.0.1",
      TEST_CLOCK_FILE: clockFile,
      WEBHOOKS_ALLOW_PRIVATE: "true",
      WEBHOOKS_POLL_MS: "200",
      // A new note becomes spendable once a checkpoint holds it: every second here (default 10).
      BUDGET_CHECKPOINT_S: "1",
      LOG_LEVEL: "warn",
    };
    const port = freePort();
    const service = Bun.spawn([process.execPath, CLI, "serve", "--workers", "1"], {
      cwd: ROOT,
      env: { ...process.env, ...serviceEnv, PORT: String(port) },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    children.push(service);
    const ownerKey = (await waitForOutput(service, /\n {2}(zka_\S+)\n/, "the zkagent service"))[1]!;
    const serviceUrl = `http://127.0.0.1:${port}`;
    for (
      let i = 0;
      !(await fetch(`${serviceUrl}/ready`).then(
        (r) => r.ok,
        () => false,
      ));
      i++
    ) {
      if (i > 600) throw new DemoError("the zkagent service never became ready");
      await Bun.sleep(100);
    }
    log(`service ${serviceUrl} (SQLite ${databaseUrl}, clock ${new Date(clock.now()).toISOString()})`);

    // The group, whose owner is the bootstrap key.
    expectStatus(await call(serviceUrl, "POST", "/v1/groups", ownerKey, { group_id: GROUP_ID, budget: true }), 201, "creating the budgeted group");

    // Three merchants: a key each, a recorder in front of the shop (its public origin), a recorder to the service, a webhook endpoint.
    const merchants = {} as Record<"A" | "B" | "C", { origin: string; key: string; keyId: string; transcript: Transcript }>;
    const webhookSink = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(request) {
        const name = new URL(request.url).pathname.slice(1) as "A" | "B" | "C";
        const body = await request.text();
        merchants[name]?.transcript.write("webhook", { request: { method: request.method, headers: headersOf(request.headers), body: parseBody(body) } });
        for (const receipt of receiptsIn(parseBody(body)))
          merchants[name]?.transcript.write("receipt", { receipt, decoded: jwsPayload(receipt), from: "webhook" });
        return new Response(null, { status: 204 });
      },
    });
    servers.push(webhookSink);
    for (const name of ["A", "B", "C"] as const) {
      const created = await cli(["keys", "create", "--name", `shop-${name.toLowerCase()}`, "--rate-limit", "0", "--json"], serviceEnv);
      if (created.code !== 0) throw new DemoError(`zkagent keys create failed: ${created.stderr || created.stdout}`);
      const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };
      const transcript = new Transcript(join(out, `merchant-${name.toLowerCase()}`));
      let shopUrl = "";
      const front = recorder(transcript, "agent", () => shopUrl);
      const back = recorder(transcript, "service", "forward");
      servers.push(front, back);
      const origin = `http://127.0.0.1:${front.port}`;
      const origins = await cli(["keys", "set-origins", id, origin], serviceEnv);
      if (origins.code !== 0)
        throw new DemoError(
          `zkagent keys set-origins (the merchant key's registered origins) failed: ${(origins.stderr || origins.stdout).trim().slice(0, 400)}`,
        );
      const shop = Bun.spawn([process.execPath, SHOP], {
        cwd: ROOT,
        env: {
          ...process.env,
          PORT: "0",
          ZKAGENT_URL: serviceUrl,
          HTTP_PROXY: `http://127.0.0.1:${back.port}`,
          http_proxy: `http://127.0.0.1:${back.port}`,
          NO_PROXY: "",
          no_proxy: "",
          ZKAGENT_API_KEY: key,
          ZKAGENT_ORIGIN: origin,
          ZKAGENT_BUDGET_GROUPS: GROUP_ID,
        },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      children.push(shop);
      shopUrl = (await waitForOutput(shop, /shop listening on (http:\/\/\S+)\n/, `shop ${name}`))[1]!;
      const hook = await call(serviceUrl, "POST", "/v1/webhooks", key, {
        url: `http://127.0.0.1:${webhookSink.port}/${name}`,
        events: ["session.verified", "session.failed"],
      });
      expectStatus(hook, 201, `registering shop ${name}'s webhook`);
      merchants[name] = { origin, key, keyId: id, transcript };
      log(`shop ${name}: ${origin} (key ${id})`);
    }

    // The agent: its identity (zkagent identity new; the secret stays in its folder) and its key (the mandate's cnf), on its side.
    const agentDir = join(work, "agent");
    mkdirSync(agentDir, { recursive: true, mode: 0o700 });
    const identity = await agent(["identity", "new", "--json"], agentDir, clockFile);
    if (identity.code !== 0) throw new DemoError(`zkagent identity new failed: ${identity.stderr.trim()}`);
    writeFileSync(join(agentDir, "member.json"), identity.stdout, { mode: 0o600 });
    const identityCommitment = BigInt((JSON.parse(identity.stdout) as { identity_commitment: string }).identity_commitment);
    const agentKeys = await generateKeyPair("ES256", { extractable: true });
    const agentKey = { privateKey: agentKeys.privateKey, publicJwk: await exportJWK(agentKeys.publicKey) };

    // The principal signs the mandate; the agent presents it for this enrolment; the owner enrols.
    const principal = await generateKeyPair("ES256", { extractable: true });
    const principalJwk = await exportJWK(principal.publicKey);
    const mandate = await openPaymentMandate({
      principal: principal.privateKey,
      agent: agentKey,
      payees: [
        { id: "shop-a", name: "Shop A", website: merchants.A.origin },
        { id: "shop-b", name: "Shop B", website: merchants.B.origin },
      ],
      nowS: Math.floor(clock.now() / 1000),
      groupId: GROUP_ID,
      identityCommitment,
    });
    const enrolment = expectStatus(
      await call(serviceUrl, "POST", `/v1/groups/${GROUP_ID}/enrolments`, ownerKey, {
        identity_commitment: identityCommitment.toString(),
        ap2_mandate: mandate,
        principal_keys: [principalJwk],
      }),
      201,
      "enrolling the member with its AP2 mandate",
    );
    // Other members of the household, enrolled with zkagent mandate JSON: a member is one of several, never the group's only leaf.
    for (const [i, limit] of [
      { currency: CURRENCY, max_amount: "50.00", max_total: "200.00", period: "week" },
      { currency: CURRENCY, max_amount: "25.00", max_total: "60.00", period: "day" },
    ].entries()) {
      const other = BigInt(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`) % R;
      const validUntil = new Date(clock.now() + 30 * DAY_MS).toISOString();
      expectStatus(
        await call(serviceUrl, "POST", `/v1/groups/${GROUP_ID}/enrolments`, ownerKey, {
          identity_commitment: H1(other).toString(),
          mandate: { limits: [limit], valid_until: validUntil },
        }),
        201,
        `enrolling household member ${i + 2}`,
      );
    }

    // The owner hands the enrolment's answer to the member; the agent keeps it as its membership (leaf recomputed, terms checked).
    writeFileSync(join(agentDir, "enrolment.json"), `${JSON.stringify(enrolment, null, 2)}\n`, { mode: 0o600 });
    const kept = await agent(
      ["budget", "join", "--enrolment", join(agentDir, "enrolment.json"), "--identity", join(agentDir, "member.json"), "--service", serviceUrl],
      agentDir,
      clockFile,
    );
    if (kept.code !== 0) throw new DemoError(`the agent could not keep its membership: ${(kept.stderr || kept.stdout).trim().slice(0, 600)}`);
    log(
      `enrolled: leaf ${enrolment.leaf_index}, ${enrolment.terms.budget} minor units a ${enrolment.terms.period}, payees ${enrolment.terms.payees.join(", ")}`,
    );

    // The purchases.
    const summary: SummaryEntry[] = [];
    let movedDay = false;
    for (const purchase of SCENARIO) {
      if (purchase.nextDay && !movedDay) {
        setTestClock(clockFile, clock.now() + DAY_MS);
        movedDay = true;
        log(`the clock moves a day ahead: ${new Date(clock.now()).toISOString()}`);
      }
      const merchant = merchants[purchase.merchant];
      merchant.transcript.lastAgentStatus = null;
      const outcome = await agentPurchase({ agentDir, origin: merchant.origin, amount: purchase.amount, clockFile, serviceUrl });
      // The status is what the shop last answered the agent (its recorder saw it), 0 when the agent never reached it.
      const entry = { ...outcome, status: merchant.transcript.lastAgentStatus ?? 0 };
      const expected = String(purchase.expect);
      const row: SummaryEntry = {
        merchant: purchase.merchant,
        origin: merchant.origin,
        amount: purchase.amount,
        currency: CURRENCY,
        day: dayOf(),
        ...entry,
        expected,
        as_expected: purchase.expect === 201 ? entry.status === 201 : entry.status !== 201 && entry.reason === purchase.expect,
      };
      summary.push(row);
      log(
        `${row.day} ${row.merchant} ${row.amount} ${row.currency}: ${row.status}${row.reason ? ` (${row.reason})` : ""}${row.as_expected ? "" : `  ✗ expected ${expected}`}`,
      );
    }
    writeFileSync(join(out, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);

    // Every decision's webhook event delivered before the transcripts close (the outbox is polled every 200 ms here).
    for (const name of ["A", "B", "C"] as const) {
      for (let i = 0; ; i++) {
        const pending = expectStatus(
          await call(serviceUrl, "GET", "/v1/webhook-deliveries?state=pending", merchants[name].key),
          200,
          "reading webhook deliveries",
        );
        if (pending.deliveries.length === 0) break;
        if (i > 100) throw new DemoError(`shop ${name}'s webhook events were not delivered in 10 s`);
        await Bun.sleep(100);
      }
    }

    // What anyone may read, after the run: the group, its roots, the notes' checkpoints, the circuits, the JWKS.
    await writePublic(join(out, "public"), serviceUrl, ownerKey, { A: merchants.A.origin, B: merchants.B.origin });
    return { summary, ok: summary.every((row) => row.as_expected) };
  } finally {
    for (const server of servers) server.stop(true);
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await Promise.race([child.exited, Bun.sleep(10_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    if (!options.work) rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The public parameters, each as the service serves it: the group (any key
 * may read it; the owner's is used), its members' leaves, the roots (the
 * enrolment tree's, the notes checkpoints a spend may name; the notes
 * themselves stay out, each being one spend's output), the circuits and the
 * spend circuit's verification key, the receipts' JWKS.
 */
async function writePublic(dir: string, serviceUrl: string, ownerKey: string, origins: Record<string, string>): Promise<void> {
  const read = async (path: string, key: string | null = null) =>
    expectStatus(await call(serviceUrl, "GET", path, key), 200, `reading the public ${path}`) as Record<string, unknown>;
  const save = (name: string, body: unknown) => writeFileSync(join(dir, name), `${JSON.stringify(body, null, 2)}\n`);
  // The group's and the currency's field values are derived from public names (src/budgets/encoding.ts): every challenge carries them.
  save("service.json", {
    url: serviceUrl,
    group_id: GROUP_ID,
    group_field: budgetGroup(GROUP_ID).toString(),
    currency_field: currencyField(CURRENCY).toString(),
    merchants: origins,
  });
  save("group.json", await read(`/v1/groups/${GROUP_ID}`, ownerKey));
  const members = await read(`/v1/groups/${GROUP_ID}/members`);
  save("members.json", members);
  const notes = await read(`/v1/groups/${GROUP_ID}/notes`);
  save("roots.json", { enrolment_root: members.merkle_tree_root, notes_size: notes.size, checkpoints: notes.checkpoints });
  const circuits = await read("/v1/circuits");
  save("circuits.json", circuits);
  const budget = (circuits.circuits as { id: string }[]).find((c) => c.id.startsWith("budget_spend-"));
  if (!budget) throw new DemoError("the service lists no budget_spend circuit under /v1/circuits");
  save("verification_key.json", await read(`/v1/circuits/${budget.id}/vk`));
  save("jwks.json", await read("/.well-known/jwks.json"));
}

/**
 * The agent's command (`zkagent …`) as a process of its own: its identity,
 * memberships and wallet in `agentDir`, its clock the service's test clock
 * (TEST_CLOCK_FILE, which the CLI takes on a loopback HOST only).
 */
async function agent(args: string[], agentDir: string, clockFile: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const budgetDir = args[0] === "budget" || args[0] === "fetch" ? ["--budget-dir", join(agentDir, "budgets")] : [];
  const child = Bun.spawn([process.execPath, CLI, ...args, ...budgetDir], {
    cwd: agentDir,
    env: { ...process.env, TEST_CLOCK_FILE: clockFile, HOST: "127.0.0.1", XDG_CACHE_HOME: join(agentDir, "cache") },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

interface PurchaseOutcome {
  reason: string | null;
  refused_by: SummaryEntry["refused_by"];
  detail: string | null;
}

/** The agent's refusal in the scenario's words: which of its terms refused the spend. */
function termsReason(message: string): string {
  if (/per-purchase range/.test(message)) return "per_purchase";
  if (/not an allowed payee/.test(message)) return "payee";
  if (/passes the budget/.test(message)) return "budget";
  return "terms";
}

/** One purchase: `zkagent fetch --budget` as a process of its own, as a member's agent runs it. */
async function agentPurchase(input: { agentDir: string; origin: string; amount: string; clockFile: string; serviceUrl: string }): Promise<PurchaseOutcome> {
  const body = JSON.stringify({ amount: input.amount, currency: CURRENCY });
  const run = await agent(
    ["fetch", `${input.origin}/orders`, "-d", body, "--budget", GROUP_ID, "--trust", input.serviceUrl, "--allow-insecure-loopback"],
    input.agentDir,
    input.clockFile,
  );
  if (run.code === 0) return { reason: null, refused_by: null, detail: null };
  // The agent refused before proving: `zkagent: refused to spend (<code>): <why>` (its own terms, checked first).
  const refused = /zkagent: refused to (?:spend|prove) \(([^)]+)\): (.*)/.exec(run.stderr);
  if (refused) {
    const [code, message] = [refused[1]!, refused[2]!.trim()];
    return { reason: code === "terms" ? termsReason(message) : code, refused_by: "agent", detail: message };
  }
  // The shop answered otherwise: its body (on stdout) names the service's reason, or the shop's error.
  let answer: { reason?: string; error?: string } | null = null;
  try {
    answer = JSON.parse(run.stdout);
  } catch {}
  const reason = answer?.reason ?? answer?.error ?? "agent_failed";
  return { reason, refused_by: answer?.reason ? "service" : answer ? "shop" : "agent", detail: (run.stderr || run.stdout).trim().slice(-800) };
}

if (import.meta.main) {
  let values: { out?: string; work?: string; help?: boolean };
  try {
    ({ values } = parseArgs({ args: Bun.argv.slice(2), options: { out: { type: "string" }, work: { type: "string" }, help: { type: "boolean" } } }));
  } catch (error) {
    process.stderr.write(`demo:budgets: ${(error as Error).message}\n`);
    process.exit(2);
  }
  if (values.help || !values.out) {
    process.stderr.write(
      "usage: bun run demo:budgets -- --out DIR [--work DIR]\n  --work: where the processes keep their files (the service's SQLite database, the agent's), kept after the run; default a temporary folder, removed\n",
    );
    process.exit(values.help ? 0 : 2);
  }
  try {
    const { ok, summary } = await runDemo({ out: values.out, ...(values.work ? { work: resolve(values.work) } : {}) });
    process.stderr.write(
      `${ok ? "every purchase ended as the scenario says" : `${summary.filter((r) => !r.as_expected).length} purchase(s) did not`}: ${join(resolve(values.out), "summary.json")}\n`,
    );
    process.exit(ok ? 0 : 1);
  } catch (error) {
    process.stderr.write(`demo:budgets: ${error instanceof DemoError ? error.message : (error as Error).stack}\n`);
    process.exit(3);
  }
}
