// A value read from somewhere costly (a COUNT over every tenant's rows), kept
// for a while. Scrapes are public and come in loops: issue 11 measured 40 ms
// per COUNT at 1M pending rows, and 8 scrape loops slowed /v1/usage from
// 0.2 ms to 286 ms. Cached, the read runs at most once per `ttlMs` however
// many scrapes arrive, concurrent ones share it, and a failed refresh keeps
// serving the last value (a gauge may lag; it must not take the process down).
import type { Clock } from "../clock";

export function cachedRead(read: () => Promise<number>, clock: Clock, ttlMs: number): () => Promise<number> {
  let value: number | undefined;
  let readAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<number> | undefined;
  return async () => {
    const now = clock.now();
    if (value !== undefined && now - readAt < ttlMs && now >= readAt) return value;
    inFlight ??= read()
      .then((fresh) => {
        value = fresh;
        readAt = now;
        return fresh;
      })
      .catch((error) => {
        if (value === undefined) throw error;
        return value;
      })
      .finally(() => (inFlight = undefined));
    return inFlight;
  };
}
