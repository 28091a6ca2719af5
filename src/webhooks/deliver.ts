// One delivery attempt over the network: POST the body to the checked
// address, with the URL's host name kept for the Host header and TLS (SNI and
// certificate check), within a deadline, reading at most a few KB of the
// answer, following no redirect. Only a 2xx counts as delivered.
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { ResolvedTarget } from "./policy";

/** How much of a response is read (kept in the delivery's last_error); the rest is discarded unread. */
export const RESPONSE_READ_LIMIT = 4096;

export interface AttemptResult {
  delivered: boolean;
  /** The response status, or null when none came (refused, timed out, TLS failure). */
  status: number | null;
  /** Why it did not count, in a line; null when delivered. */
  error: string | null;
}

// One keep-alive pool per checked address (and the host name TLS checks):
// a reused connection goes to the address that was checked for it, never to
// what a name resolves to later. A new connection per attempt cost the event
// loop ~2.8 ms against ~0.5 ms reused (docs/reliability.md, Issue 27), which
// the decisions sharing that loop waited behind.
const IDLE_SOCKET_MS = 30_000;
const agents = new Map<string, http.Agent>();
function agentFor(target: ResolvedTarget): http.Agent {
  const { url, address } = target;
  const key = `${url.protocol}//${url.hostname}@${address}:${url.port}`;
  let agent = agents.get(key);
  if (!agent) {
    const options = { keepAlive: true, timeout: IDLE_SOCKET_MS };
    agent = url.protocol === "https:" ? new https.Agent(options) : new http.Agent(options);
    agents.set(key, agent);
  }
  return agent;
}

export function send(target: ResolvedTarget, headers: Record<string, string>, body: string, timeoutMs: number): Promise<AttemptResult> {
  const { url, address, family } = target;
  // The connection goes to the address the policy checked, whatever the name resolves to now.
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const client = url.protocol === "https:" ? https : http;
  const payload = Buffer.from(body);
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    /** `keep`: the answer was read to its end, so its connection may serve the next attempt. */
    const finish = (result: AttemptResult, keep = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!keep) request.destroy();
      resolve(result);
    };
    const request = client.request(
      {
        protocol: url.protocol,
        host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
        port: url.port || (url.protocol === "https:" ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: "POST",
        lookup: pinned,
        agent: agentFor(target),
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": String(payload.length),
          "user-agent": "zkagent-webhooks",
        },
      },
      (response) => {
        const status = response.statusCode ?? 0;
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
          // Enough to say why; never more, whatever the receiver sends.
          if (text.length >= RESPONSE_READ_LIMIT) done(false);
        });
        response.on("end", () => done(true));
        response.on("error", () => done(false));
        const done = (keep: boolean) => {
          const ok = status >= 200 && status < 300;
          const why = status >= 300 && status < 400 ? `redirect (${status}) not followed` : `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ""}`;
          finish({ delivered: ok, status, error: ok ? null : why }, keep);
        };
      },
    );
    const timer = setTimeout(() => finish({ delivered: false, status: null, error: `no answer within ${timeoutMs} ms` }), timeoutMs);
    request.on("error", (error) => finish({ delivered: false, status: null, error: error.message.slice(0, 200) }));
    request.end(payload);
  });
}
