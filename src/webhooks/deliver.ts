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
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
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
        agent: false,
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
          if (text.length >= RESPONSE_READ_LIMIT) done();
        });
        response.on("end", () => done());
        response.on("error", () => done());
        const done = () => {
          const ok = status >= 200 && status < 300;
          const why = status >= 300 && status < 400 ? `redirect (${status}) not followed` : `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ""}`;
          finish({ delivered: ok, status, error: ok ? null : why });
        };
      },
    );
    const timer = setTimeout(() => finish({ delivered: false, status: null, error: `no answer within ${timeoutMs} ms` }), timeoutMs);
    request.on("error", (error) => finish({ delivered: false, status: null, error: error.message.slice(0, 200) }));
    request.end(payload);
  });
}
