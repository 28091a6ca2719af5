// The real zkagent app in process, a merchant key, a registered agent "bot"
// (with a signing key), and the guard's options for them: what the guard's
// tests and its adapters' tests start from.
import { expect } from "bun:test";
import { createIdentity } from "../../src/agent";
import type { GuardOptions } from "../../src/merchant";
import { createHarness } from "../support/harness";

export async function merchantService(context: GuardOptions["context"]) {
  const harness = await createHarness();
  const apiKey = await harness.newKey();
  const identity = { ...(await createIdentity()), agent_id: "bot" };
  const registered = await harness.call("POST", "/v1/agents", {
    key: apiKey,
    body: { agent_id: "bot", identity_commitment: identity.identity_commitment, signing_key: identity.signing_key },
  });
  expect(registered.status).toBe(201);
  const options: GuardOptions = { url: "http://zkagent.test", apiKey, action: "purchase", context, fetch: (request) => harness.app.handle(request) };
  return { harness, identity, options };
}

/** One HTTP/1.1 exchange written byte for byte on a socket (a request line or Host no fetch would send): the status and body answered. */
export async function rawRequest(port: number, head: string, body = ""): Promise<{ status: number; body: string }> {
  const { connect } = await import("node:net");
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      const length = body === "" ? "" : `content-length: ${Buffer.byteLength(body)}\r\n`;
      socket.write(`${head}\r\n${length}connection: close\r\n\r\n${body}`);
    });
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      received += chunk;
    });
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
  });
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  if (!match) throw new Error(`not an HTTP answer: ${JSON.stringify(text.slice(0, 200))}`);
  const split = text.indexOf("\r\n\r\n");
  let answered = text.slice(split + 4);
  // Node answers chunked when the handler did not set a length: the one chunk's text is enough here.
  if (/\r\ntransfer-encoding: chunked/i.test(text.slice(0, split))) answered = answered.replace(/^[0-9a-f]+\r\n/i, "").replace(/\r\n0\r\n\r\n$/, "");
  return { status: Number(match[1]), body: answered };
}
