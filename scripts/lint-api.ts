// bun run lint:api: Redocly CLI lints a file, so the document the service
// serves (scripts/openapi.ts) is written to a temporary one first, then linted
// with redocly.yaml. Fails on any error or warning.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const dir = mkdtempSync(join(tmpdir(), "zkagent-openapi-"));
try {
  const path = join(dir, "openapi.json");
  const dump = Bun.spawnSync(["bun", join(root, "scripts/openapi.ts"), path], { cwd: root, stdout: "inherit", stderr: "inherit" });
  if (dump.exitCode !== 0) process.exit(dump.exitCode ?? 1);
  const lint = Bun.spawnSync([join(root, "node_modules/.bin/redocly"), "lint", path, "--config", join(root, "redocly.yaml"), "--max-problems", "1000"], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
  });
  const output = `${lint.stdout.toString()}${lint.stderr.toString()}`;
  process.stdout.write(output);
  // Warnings do not fail `redocly lint`; here they do.
  if (lint.exitCode !== 0 || /You have \d+ warnings?/.test(output)) {
    console.error("lint:api: the OpenAPI document has errors or warnings");
    process.exit(1);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
