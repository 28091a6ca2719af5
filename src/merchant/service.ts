// The guard's calls to the zkagent service, with the merchant's API key. An
// answer the guard cannot use is Unavailable, the merchant's problem and not
// the agent's: answered 502, with the cause told to the merchant (onError).
// A service that refuses the key (401, 403 `Invalid API key`) is named apart
// from one that cannot be used (unreachable, timed out, 5xx, 429, not a JSON
// object): one is mended in the configuration, the other by waiting.
import type { Report } from "./problems";
import type { GuardOptions } from "./types";

export type UnavailableReason = "service_rejected_key" | "verifier_unavailable";

/** A service answer that could not be used; `message` says why (for the merchant, never the agent). */
export class Unavailable extends Error {
  constructor(
    message = "the zkagent service answered something the guard does not understand",
    readonly reason: UnavailableReason = "verifier_unavailable",
    options?: { cause?: unknown; retryAfter?: number },
  ) {
    super(message, options);
    this.retryAfter = options?.retryAfter;
  }
  /** Seconds the service asked callers to wait (its own Retry-After on a 429 or 503), when it said. */
  readonly retryAfter: number | undefined;
}

/** A Retry-After of delay-seconds (RFC 9110 §10.2.3), at most an hour; an HTTP-date or anything else is not passed on. */
function retryAfterOf(headers: Headers): number | undefined {
  const value = headers.get("retry-after")?.trim();
  return value !== undefined && /^\d{1,9}$/.test(value) ? Math.min(Number(value), 3600) : undefined;
}

export interface ServiceAnswer {
  status: number;
  body: Record<string, unknown>;
}

export type ServiceCall = (method: string, path: string, body?: unknown) => Promise<ServiceAnswer>;

export type Transport = Pick<GuardOptions, "url" | "apiKey" | "fetch" | "timeoutMs">;

/** One call to the service with the key: its status and its body as text, or the fetch's failure (thrown). */
export async function send(options: Transport, method: string, path: string, body?: unknown): Promise<{ status: number; text: string; headers: Headers }> {
  const base = options.url.replace(/\/+$/, "");
  const fetchOne = options.fetch ?? ((request: Request) => fetch(request));
  const headers: Record<string, string> = { "x-api-key": options.apiKey, accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const signal = AbortSignal.timeout(options.timeoutMs ?? 10_000);
  const response = await fetchOne(new Request(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal }));
  // The body under the same timeout: a service that stalls mid-answer is as unavailable as one that never answers.
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/** The guard's call: a usable answer, or Unavailable (reported once, here, with what happened). */
export function serviceClient(options: Transport, report: Report): ServiceCall {
  const where = options.url.replace(/\/+$/, "");
  const fail = (message: string, reason: UnavailableReason = "verifier_unavailable", cause?: unknown, retryAfter?: number): never => {
    const error = new Unavailable(message, reason, { cause, retryAfter });
    report({ reason, level: "error", message, cause });
    throw error;
  };
  return async (method, path, body) => {
    let answered: Awaited<ReturnType<typeof send>>;
    try {
      answered = await send(options, method, path, body);
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
      return fail(
        timedOut
          ? `${method} ${where}${path}: no answer within ${options.timeoutMs ?? 10_000} ms`
          : `${method} ${where}${path} failed: ${error instanceof Error ? error.message : String(error)}`,
        "verifier_unavailable",
        error,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(answered.text);
    } catch {
      parsed = undefined;
    }
    const said = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
    const error = typeof said?.error === "string" ? said.error : null;
    // 401 Missing API key, 403 Invalid API key (unknown, revoked or mistyped): the service's texts are stable (docs/api.md, "Errors").
    if (answered.status === 401 || (answered.status === 403 && error === "Invalid API key"))
      return fail(
        `the zkagent service at ${where} refused the API key (${answered.status} ${error ?? "without a JSON error"}): check apiKey`,
        "service_rejected_key",
      );
    if (answered.status >= 500 || answered.status === 429)
      return fail(
        `${method} ${where}${path} answered ${answered.status}${error ? ` ${error}` : ""}`,
        "verifier_unavailable",
        undefined,
        retryAfterOf(answered.headers),
      );
    if (said === null) return fail(`${method} ${where}${path} answered ${answered.status} with a body that is not a JSON object`);
    return { status: answered.status, body: said };
  };
}
