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
  ["2001::", 32], // Teredo: an obfuscated IPv4 address behind a relay
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated, still routed inside some sites)
  ["ff00::", 8], // multicast
] as const)
  PRIVATE.addSubnet(net, prefix, "ipv6");

/**
 * The IPv6 prefixes that carry an IPv4 address a connection ends up at, and
 * where in the 128 bits it sits (its first byte): the address is judged by
 * that IPv4 address, so 64:ff9b::7f00:1 (NAT64 to 127.0.0.1) is as private
 * as 127.0.0.1, and 2002:0808:0808:: (6to4 via 8.8.8.8) as public as it.
 */
const EMBEDDING = [
  { net: "64:ff9b::", prefix: 96, at: 12 }, // NAT64 (RFC 6052)
  { net: "::ffff:0:0", prefix: 96, at: 12 }, // IPv4-mapped
  { net: "::ffff:0:0:0", prefix: 96, at: 12 }, // IPv4-translated (RFC 2765)
  { net: "::", prefix: 96, at: 12 }, // IPv4-compatible (deprecated; :: and ::1 among them)
  { net: "2002::", prefix: 16, at: 2 }, // 6to4 (RFC 3056): bits 16–47
].map(({ net, prefix, at }) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, "ipv6");
  return { list, at };
});

/** The 16 bytes of an IPv6 address (any spelling isIP accepts, dotted tail included). */
function ipv6Bytes(address: string): Uint8Array {
  // The URL parser writes every spelling in one canonical form: hex groups, "::" at most once, no dotted tail.
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head, tail] = canonical.split("::") as [string, string | undefined];
  const groups = (text: string | undefined) => (text ? text.split(":") : []);
  const left = groups(head);
  const right = groups(tail);
  const all = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  const bytes = new Uint8Array(16);
  all.forEach((group, i) => {
    const value = Number.parseInt(group, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  });
  return bytes;
}

/** The IPv4 address an IPv6 address reaches through NAT64, 6to4, mapping or compatibility; null for any other. */
export function embeddedIpv4(address: string): string | null {
  const embedding = EMBEDDING.find((e) => e.list.check(address, "ipv6"));
  if (!embedding) return null;
  const bytes = ipv6Bytes(address);
  return [...bytes.subarray(embedding.at, embedding.at + 4)].join(".");
}

/** True for an address outside the public Internet (one that embeds an IPv4 address is judged as that address too). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, "ipv4");
  if (family === 6) {
    if (PRIVATE.check(address, "ipv6")) return true;
    const v4 = embeddedIpv4(address);
    return v4 !== null && PRIVATE.check(v4, "ipv4");
  }
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
