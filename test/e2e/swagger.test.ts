// Swagger UI in a real browser (Chromium, driven by playwright-core; see
// ../support/chromium.ts for which one):
// every operation of the served document is listed (and nothing else), "Authorize" + "Try it out" + "Execute" reach the
// service, and the page never contacts another host. The page is opened as
// http://zkagent.test:PORT (mapped to 127.0.0.1 inside Chromium) because
// Swagger UI behaves differently on localhost: e.g. it only fetches its
// validator badge from validator.swagger.io when the host is not localhost.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { systemClock } from "../../src/clock";
import { loadConfig } from "../../src/config";
import { startServer, type RunningServer } from "../../src/main";
import { createKey } from "../../src/modules/keys/service";
import { openStore } from "../../src/store";
import { chromiumPath } from "../support/chromium";

const HOST = "zkagent.test";
const ARTIFACTS = join(import.meta.dir, "../artifacts");

let dir: string;
let server: RunningServer;
let browser: Browser;
let key: string;
let port: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "zkagent-e2e-"));
  const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", DATABASE_URL: join(dir, "e2e.db"), LOG_LEVEL: "silent" });
  // The key exists before the server starts, so the server does not bootstrap (and print) one.
  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  key = (await createKey(store, systemClock, "swagger-e2e", 0)).key;
  await store.close();
  server = await startServer(config, { bootstrap: false });
  port = new URL(server.url).port;
  browser = await chromium.launch({
    executablePath: await chromiumPath(),
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--host-resolver-rules=MAP ${HOST} 127.0.0.1`,
    ],
  });
}, 60_000); // a first run unpacks the npm Chromium (see ../support/chromium.ts)

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("Swagger UI lists every operation, authorizes with a key, executes a challenge request, and loads nothing from elsewhere", async () => {
  const origin = `http://${HOST}:${port}`;
  const page = await browser.newPage();
  const requested: string[] = [];
  page.on("request", (request) => requested.push(request.url()));

  await page.goto(`${origin}/swagger`, { waitUntil: "networkidle" });
  await page.locator(".opblock").first().waitFor();

  const listed = await page.$$eval(".opblock", (blocks) =>
    blocks.map((b) => [b.querySelector(".opblock-summary-method")?.textContent?.trim(), b.querySelector(".opblock-summary-path")?.getAttribute("data-path")]),
  );
  // Exactly the operations the served document has, read from it rather than kept by hand.
  // Its webhooks (OpenAPI 3.1) are listed too, under their event names.
  const document = (await (await fetch(`${server.url}/swagger/json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
    webhooks?: Record<string, Record<string, unknown>>;
  };
  const operations = [...Object.entries(document.paths), ...Object.entries(document.webhooks ?? {})].flatMap(([path, item]) =>
    Object.keys(item).map((method) => [method.toUpperCase(), path]),
  );
  expect(operations.length).toBeGreaterThanOrEqual(19);
  const order = (list: (string | null | undefined)[][]) => list.map((op) => op.join(" ")).sort();
  expect(order(listed)).toEqual(order(operations));

  // Authorize: the X-Api-Key scheme's part of the dialog (the other is /metrics' bearer token).
  await page.locator(".auth-wrapper button.authorize").click();
  const dialog = page.locator(".modal-ux");
  const apiKey = dialog.locator(".auth-container").filter({ hasText: "X-Api-Key" });
  await apiKey.locator("input").fill(key);
  await apiKey.locator("button.authorize").click();
  await dialog.locator("button.btn-done, button.close-modal").first().click();

  // POST /v1/verify/challenge → Try it out → body → Execute.
  const op = page.locator(".opblock-post").filter({ has: page.locator('.opblock-summary-path[data-path="/v1/verify/challenge"]') });
  await op.locator(".opblock-summary").first().click();
  await op.locator("button.try-out__btn").click();
  await op
    .locator("textarea.body-param__text")
    .fill(JSON.stringify({ agent_id: "swagger-agent", action: "purchase", context: { amount: 20, currency: "EUR" } }));
  const response = page.waitForResponse((r) => r.url() === `${origin}/v1/verify/challenge` && r.request().method() === "POST");
  await op.locator("button.execute").click();
  const sent = await response;
  expect(sent.request().headers()["x-api-key"]).toBe(key);

  const live = op.locator(".live-responses-table");
  const status = live.locator("tr.response .response-col_status").first();
  await status.waitFor();
  expect((await status.textContent())?.trim()).toBe("200");
  const body = JSON.parse((await live.locator("tr.response .response-col_description pre").first().textContent()) ?? "{}");
  expect(body.challenge_id).toMatch(/^ch_/);
  expect(body.expires_in).toBe(300);

  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, "swagger.png"), fullPage: true });

  // Everything the page loaded came from the service itself (data: URIs are inline, not requests to a host).
  const foreign = requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"));
  expect(foreign).toEqual([]);
  expect(requested).toContain(`${origin}/swagger/assets/swagger-ui-bundle.js`);
}, 60_000);
