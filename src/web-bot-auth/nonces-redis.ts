// A NonceStore on Redis or Valkey, shared by every merchant process that
// talks to the same server: one command per nonce,
//
//   SET <key> 1 NX EXAT <expiresAt>
//
// atomic on the server (no read-then-write race between two processes: of two
// claims of one key exactly one is answered OK), and gone by itself when the
// signature's window has passed. It takes the client the merchant already
// has, so @zkagent/merchant depends on none:
//
//   Bun's built-in client      new RedisClient(url)      client.send(command, args)
//   ioredis / iovalkey         new Redis(url)            client.call(command, ...args)
//   node-redis (redis)         createClient({ url })     client.sendCommand([command, ...args])
//
// Fails closed: a client that errs or does not answer within `timeoutMs`
// throws NonceStoreUnavailable, and the guard refuses (503, Retry-After).
import { type NonceStore, NonceStoreUnavailable, withTimeout } from "./nonces";

/** Any of the clients above: the one method each has for an arbitrary command. */
export type RedisCommandClient =
  | { call(command: string, ...args: string[]): Promise<unknown> }
  | { send(command: string, args: string[]): Promise<unknown> }
  | { sendCommand(args: string[]): Promise<unknown> };

export interface RedisNonceStoreOptions {
  /** How long a claim may take before it is refused, ms. Default 1 000. */
  timeoutMs?: number;
  /** Prepended to every key (several applications on one server). Default "zkagent:". */
  prefix?: string;
}

/** One command on whichever client it is. ioredis also has a sendCommand (of its own Command objects), so `call` is looked for first. */
function commandOf(client: RedisCommandClient): (args: string[]) => Promise<unknown> {
  if ("call" in client && typeof client.call === "function") return (args) => client.call(args[0]!, ...args.slice(1));
  if ("send" in client && typeof client.send === "function") return (args) => client.send(args[0]!, args.slice(1));
  if ("sendCommand" in client && typeof client.sendCommand === "function") return (args) => client.sendCommand(args);
  throw new TypeError("RedisNonceStore needs a Redis client: Bun's RedisClient (send), ioredis/iovalkey (call) or node-redis (sendCommand)");
}

export class RedisNonceStore implements NonceStore {
  private readonly command: (args: string[]) => Promise<unknown>;
  private readonly timeoutMs: number;
  private readonly prefix: string;

  constructor(client: RedisCommandClient, options: RedisNonceStoreOptions = {}) {
    this.command = commandOf(client);
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.prefix = options.prefix ?? "zkagent:";
  }

  async claim(key: string, expiresAt: number): Promise<boolean> {
    let answer: unknown;
    try {
      const sent = this.command(["SET", this.prefix + key, "1", "NX", "EXAT", String(Math.ceil(expiresAt))]);
      answer = await withTimeout(Promise.resolve(sent), this.timeoutMs, "the Redis nonce store");
    } catch (error) {
      if (error instanceof NonceStoreUnavailable) throw error;
      throw new NonceStoreUnavailable(`the Redis nonce store failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (answer === "OK") return true;
    if (answer === null || answer === undefined) return false;
    // Anything else is not what SET … NX answers: never read as a first claim.
    throw new NonceStoreUnavailable(`the Redis nonce store answered ${String(answer).slice(0, 40)} to SET NX`);
  }
}
