// Which URLs a webhook may be sent to: the guard against server-side request
// forgery. Only https, and only public addresses, unless the operator sets
// WEBHOOKS_ALLOW_PRIVATE=true (local development, tests). The name is
// resolved first and every address it resolves to is checked; the delivery
// then connects to the address that was checked (deliver.ts pins it), so a
// name that resolves differently the second time (DNS rebinding) reaches
// nothing new. Checked when an endpoint is registered and again at every
// delivery.
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/** Addresses that are not the public Internet (IANA special-purpose registries, RFC 6890 and successors). */
const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const)
  PRIVATE.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const)
  PRIVATE.addSubnet(net, prefix, "ipv6");

/** True for an address outside the public Internet (IPv4-mapped IPv6 is judged as its IPv4 address). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, "ipv4");
  if (family === 6) return PRIVATE.check(address, "ipv6");
  return true; // not an address at all: never connect to it
}

export interface ResolvedTarget {
  url: URL;
  /** The checked address the delivery connects to. */
  address: string;
  family: 4 | 6;
}

export type TargetCheck = { ok: true; target: ResolvedTarget } | { ok: false; problem: string };

/** Resolves a host name to all its addresses (node:dns by default; tests pass their own). */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (host) => lookup(host, { all: true, verbatim: true });

/** The URL's form alone, before any lookup: null when acceptable, else what is wrong. */
export function urlProblem(text: string, allowPrivate: boolean): string | null {
  // Stored and shown as given: no control characters (U+0000 cannot even be stored by PostgreSQL).
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return "must not contain control characters";
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return `must use https (got ${url.protocol.replace(/:$/, "")})`;
  if (url.protocol === "http:" && !allowPrivate) return "must use https (http is allowed only where the operator sets WEBHOOKS_ALLOW_PRIVATE=true)";
  if (url.username || url.password) return "must not carry credentials";
  if (url.hash) return "must not have a fragment";
  if (text.length > 2048) return "must be at most 2048 characters";
  return null;
}

/**
 * The URL checked in full: its form, then the addresses its host resolves to.
 * All of them must be public (a name with one private address among public
 * ones is refused: which one a connection gets is not ours to choose), unless
 * private ones are allowed. The first address is the one to connect to.
 */
export async function checkTarget(text: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<TargetCheck> {
  const problem = urlProblem(text, allowPrivate);
  if (problem) return { ok: false, problem };
  const url = new URL(text);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  let addresses: { address: string; family: number }[];
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      return { ok: false, problem: `host ${host} does not resolve` };
    }
  }
  if (addresses.length === 0) return { ok: false, problem: `host ${host} does not resolve` };
  if (!allowPrivate) {
    const inside = addresses.find((a) => isPrivateAddress(a.address));
    if (inside)
      return {
        ok: false,
        problem: `resolves to ${inside.address}, a loopback, link-local or private address (allowed only where the operator sets WEBHOOKS_ALLOW_PRIVATE=true)`,
      };
  }
  const first = addresses[0]!;
  return { ok: true, target: { url, address: first.address, family: first.family === 6 ? 6 : 4 } };
}
