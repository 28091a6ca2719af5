// What several benches share: a loopback port, waiting for a started server,
// challenges written straight to the store (setup, not measured), and running
// a bench once per WebAssembly build, each in its own process.
import type { Subprocess } from "bun";
import { pendingChallenge } from "../src/modules/challenges/service";
import type { Store } from "../src/store/interface";
import { chooseWasmBuild, type WasmBuild, wideArithmeticSupported } from "../src/wasm-engine";

/** A loopback port nobody listens on right now. */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

/** Resolves after five healthy answers in a row from `url`; throws when `child` exits or after 30 s. */
export async function waitHealthy(url: string, child: Subprocess): Promise<void> {
  const deadline = Date.now() + 30_000;
  let ok = 0;
  while (ok < 5) {
    if (child.exitCode !== null) throw new Error(`server for ${url} exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`${url} not healthy in time`);
    const healthy = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    ok = healthy ? ok + 1 : 0;
    if (!healthy) await Bun.sleep(50);
  }
}

/** A pending challenge issued at `now`, written straight to the store outside any rate limit. */
export function seedChallenge(
  store: Store,
  challenge: { id: string; keyId: string; agentId: string; action: string; nonce: string },
  now: number,
): ReturnType<Store["createChallenge"]> {
  return store.createChallenge(pendingChallenge({ ...challenge, context: null }, now), { windowStart: now - (now % 60_000), limit: 0 });
}

/** The middle of the sorted sample (the upper middle for an even count). */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/**
 * The WebAssembly builds (src/wasm-engine.ts) a bench compares: `--builds`
 * when given (wide,portable), else both where this engine runs the wide one.
 */
export function benchBuilds(option: string | undefined): WasmBuild[] {
  const builds = option
    ? option.split(",").map((b) => chooseWasmBuild(b))
    : wideArithmeticSupported()
      ? (["wide", "portable"] as WasmBuild[])
      : ["portable" as WasmBuild];
  return [...new Set(builds)];
}

/**
 * Runs `script` again in a new process on one build (ZKAGENT_WASM set: the
 * hashing, the prover and any server it starts load that build) and returns
 * the JSON its last line of output prints. Its stderr passes through.
 */
export async function runOnBuild<T>(script: string, args: string[], build: WasmBuild): Promise<T> {
  const child = Bun.spawn([process.execPath, script, ...args], {
    env: { ...process.env, ZKAGENT_WASM: build },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  if (code !== 0) throw new Error(`${script} on the ${build} build exited with ${code}`);
  const last = out.trim().split("\n").at(-1) ?? "";
  return JSON.parse(last) as T;
}

/** `--name value` / `--name` arguments for a child run, from parsed options (those in `drop` left out). */
export function argsOf(values: Record<string, string | boolean | undefined>, drop: string[]): string[] {
  return Object.entries(values).flatMap(([name, value]) =>
    drop.includes(name) || value === undefined || value === false ? [] : value === true ? [`--${name}`] : [`--${name}`, value],
  );
}
