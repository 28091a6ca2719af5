// What several benches share: a loopback port, waiting for a started server,
// and challenges written straight to the store (setup, not measured).
import type { Subprocess } from "bun";
import { pendingChallenge } from "../src/modules/challenges/service";
import type { Store } from "../src/store/interface";

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
