// Writes the OpenAPI document (GET /swagger/json) to a file, or stdout, for
// tools that lint or generate from a file: `bun scripts/openapi.ts [PATH]`.
// PUBLIC_URL, when set, becomes its server, as it does on a running service.
import { createApp } from "../src/app";
import { systemClock } from "../src/clock";
import { silentLogger } from "../src/log";
import { openSqlite } from "../src/store/sqlite";
import type { Verifier } from "../src/verifier/types";

// The document is built from the routes alone: nothing here verifies or stores anything.
const app = createApp({
  store: openSqlite(":memory:"),
  clock: systemClock,
  verifier: {} as Verifier,
  logger: silentLogger,
  publicUrl: process.env.PUBLIC_URL || undefined,
});
const response = await app.handle(new Request("http://localhost/swagger/json"));
const text = `${JSON.stringify(await response.json(), null, 2)}\n`;
const [path] = process.argv.slice(2);
if (path) await Bun.write(path, text);
else process.stdout.write(text);
