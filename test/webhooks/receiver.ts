// A real webhook receiver on a real port, as a platform would run one: it
// verifies every delivery with the stock `standardwebhooks` library and logs
// what arrived, when, and whether another delivery of the same webhook-id was
// in progress at the time (concurrent double delivery).
import { Webhook } from "standardwebhooks";

export interface Received {
  id: string;
  body: any;
  at: number;
  /** true when the signature verified with the library under one of the receiver's secrets. */
  valid: boolean;
  signatures: number;
}

export interface Receiver {
  url: string;
  port: number;
  log: Received[];
  /** Deliveries of a webhook-id that began while another of the same id was still being handled. */
  overlaps: string[];
  secrets: string[];
  /** The distinct webhook-ids received with a valid signature. */
  ids(): Set<string>;
  stop(): void;
  /** Listens again on the same port (after stop: the receiver was "down"). */
  restart(): void;
}

/** `failFirst`: answer 500 to the first delivery of each webhook-id (it is then retried). */
export function startReceiver(options: { port?: number; delayMs?: number; path?: string; failFirst?: boolean } = {}): Receiver {
  const log: Received[] = [];
  const overlaps: string[] = [];
  const inProgress = new Set<string>();
  const secrets: string[] = [];
  const refused = new Set<string>();
  const path = options.path ?? "/hooks";
  const handler = async (request: Request) => {
    const text = await request.text();
    const headers = Object.fromEntries(request.headers);
    const id = headers["webhook-id"] ?? "";
    if (inProgress.has(id)) overlaps.push(id);
    inProgress.add(id);
    try {
      if (options.delayMs) await Bun.sleep(options.delayMs);
      let valid = false;
      for (const secret of secrets) {
        try {
          new Webhook(secret).verify(text, headers);
          valid = true;
          break;
        } catch {}
      }
      if (options.failFirst && !refused.has(id)) {
        refused.add(id);
        return new Response("try again", { status: 500 });
      }
      log.push({ id, body: JSON.parse(text), at: Date.now(), valid, signatures: (headers["webhook-signature"] ?? "").split(" ").length });
      return new Response(valid ? "ok" : "bad signature", { status: valid ? 200 : 400 });
    } finally {
      inProgress.delete(id);
    }
  };
  let server = Bun.serve({ port: options.port ?? 0, hostname: "127.0.0.1", fetch: handler });
  const port = server.port!;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    log,
    overlaps,
    secrets,
    ids: () => new Set(log.filter((r) => r.valid).map((r) => r.id)),
    stop: () => server.stop(true),
    restart: () => {
      server = Bun.serve({ port, hostname: "127.0.0.1", fetch: handler });
    },
  };
}

/** Waits until `done()` holds, polling every 20 ms; throws with `what` after `ms`. */
export async function until(done: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(20);
  }
}
