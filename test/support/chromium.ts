// The Chromium the browser tests drive, without anything installed by hand:
//   1. CHROMIUM_PATH, when set (must exist);
//   2. a system Chromium: /usr/bin/chromium, else chromium, chromium-browser
//      or google-chrome on PATH;
//   3. the headless Chromium inside the @sparticuz/chromium npm package,
//      unpacked once into <tmp>/zkagent-chromium-<version>/ and reused by
//      later runs.
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export const CHROMIUM_PATH_VARIABLE = "CHROMIUM_PATH";

export async function chromiumPath(): Promise<string> {
  const configured = process.env[CHROMIUM_PATH_VARIABLE]?.trim();
  if (configured) {
    if (!existsSync(configured)) throw new Error(`${CHROMIUM_PATH_VARIABLE}=${configured} does not exist`);
    return configured;
  }
  return systemChromium() ?? (await packagedChromium());
}

function systemChromium(): string | undefined {
  if (existsSync("/usr/bin/chromium")) return "/usr/bin/chromium";
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    const found = Bun.which(name);
    if (found) return found;
  }
  return undefined;
}

// The package unpacks into os.tmpdir() itself, file by file, and takes any
// file already there as done: a run interrupted mid-way, or two runs at once,
// would leave or meet a truncated browser. So it unpacks into a private
// directory that is then renamed into place in one step.
async function packagedChromium(): Promise<string> {
  const pkg = dirname(dirname(Bun.resolveSync("@sparticuz/chromium", import.meta.dir)));
  const { version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as { version: string };
  const home = join(tmpdir(), `zkagent-chromium-${version}`);
  const binary = join(home, "chromium");
  if (existsSync(binary)) return binary;

  const { default: packaged } = await import("@sparticuz/chromium");
  const staging = mkdtempSync(join(tmpdir(), "zkagent-chromium-unpack-"));
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = staging;
  try {
    const unpacked = await packaged.executablePath();
    if (unpacked !== join(staging, "chromium")) throw new Error(`@sparticuz/chromium unpacked to ${unpacked}, not into ${staging}`);
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
  try {
    renameSync(staging, home);
  } catch {
    rmSync(staging, { recursive: true, force: true }); // another run got there first
  }
  return binary;
}
