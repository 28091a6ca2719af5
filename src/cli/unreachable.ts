// A service the CLI called could not be reached (refused, unknown host, no
// answer in time, a TLS failure): the command exits 3 and says which URL it
// tried, so a wrong --url or a stopped server is told apart from a server that
// answered with an error (exit 1).

/** The exit code of a network failure; an HTTP error answer keeps 1. */
export const EXIT_UNREACHABLE = 3;

export class UnreachableError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`cannot reach ${url}: ${reason}`);
  }
}

/** What a network error code means, in words; other codes are shown as they are. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused (is the server running on that port?)",
  ConnectionRefused: "connection refused (is the server running on that port?)",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found (DNS lookup failed)",
  ECONNRESET: "connection reset",
  ConnectionClosed: "connection closed before an answer",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
};

// Bun's and Node's fetch (undici) connection failures, and TLS failures.
const NETWORK_CODE =
  /^(E(CONN(REFUSED|RESET|ABORTED)|NOTFOUND|AI_AGAIN|HOSTUNREACH|NETUNREACH|NETDOWN|TIMEDOUT)|UND_ERR_(CONNECT|SOCKET|HEADERS_TIMEOUT)|Connection(Refused|Closed)|FailedToOpenSocket|ERR_TLS|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_SSL)/;

/**
 * The network failure in `error` or its causes, as an UnreachableError naming
 * the URL (the one the error names — Bun's fetch sets `path` — else `url`);
 * null when the error is something else, or names no URL at all (a database
 * connection: its own message says where).
 */
export function unreachable(error: unknown, url?: string): UnreachableError | null {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    if (current instanceof UnreachableError) return current;
    const { code, path, name, message } = current as { code?: unknown; path?: unknown; name?: unknown; message?: unknown };
    const timedOut = name === "TimeoutError";
    if (timedOut || (typeof code === "string" && NETWORK_CODE.test(code))) {
      const where = typeof path === "string" && URL.canParse(path) ? path : url;
      if (where === undefined) return null;
      const reason = timedOut ? "no answer in time" : (REASONS[code as string] ?? (typeof message === "string" && message ? message : (code as string)));
      return new UnreachableError(where, reason);
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** fetch, with a network failure turned into an UnreachableError naming the URL. */
export async function reach(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    throw unreachable(error, url) ?? error;
  }
}
