// The guard's calls to the zkagent service, with the merchant's API key. An
// answer the guard cannot use (unreachable, timed out, 5xx, 429, the key
// refused, not a JSON object) is Unavailable: the merchant's problem, not
// the agent's, answered 502 with no detail.
import type { GuardOptions } from "./types";

/** A service answer that could not be used. */
export class Unavailable extends Error {}

export interface ServiceAnswer {
  status: number;
  body: Record<string, unknown>;
}

export type ServiceCall = (method: string, path: string, body?: unknown) => Promise<ServiceAnswer>;

export function serviceClient(options: Pick<GuardOptions, "url" | "apiKey" | "fetch" | "timeoutMs">): ServiceCall {
  const base = options.url.replace(/\/+$/, "");
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const timeoutMs = options.timeoutMs ?? 10_000;
  return async (method, path, body) => {
    let response: Response;
    try {
      response = await send(
        new Request(base + path, {
          method,
          headers: body === undefined ? { "x-api-key": options.apiKey } : { "x-api-key": options.apiKey, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        }),
      );
    } catch {
      throw new Unavailable();
    }
    // 401/403 on the merchant's own key, 429, 5xx: nothing the agent can mend.
    if (response.status >= 500 || response.status === 401 || response.status === 429) throw new Unavailable();
    let parsed: unknown;
    try {
      parsed = await response.json();
    } catch {
      throw new Unavailable();
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Unavailable();
    return { status: response.status, body: parsed as Record<string, unknown> };
  };
}
