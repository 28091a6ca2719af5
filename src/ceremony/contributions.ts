// The contributions a zkey holds, read from the zkey itself (section 10),
// not from snarkjs's log: a contributor's name is text she chose, and a log
// line is whatever that text makes it. Each contribution's hash is computed
// here the way snarkjs defines it (zkey_utils.js hashPubKey, BLAKE2b-512 over
// δ after, the public key's three points and the transcript hash, each point
// uncompressed big-endian); `verifyFromR1cs` checks the chain itself.
//
// Section 10 (snarkjs zkey_utils.js writeMPCParams), little-endian counts:
//   csHash (64) ‖ n u32 ‖ n × { δ after G1 ‖ g1_s G1 ‖ g1_sx G1 ‖ g2_spx G2 ‖
//   transcript (64) ‖ type u32 (1 = beacon) ‖ paramLength u32 ‖ params }
//   params: 1 name (len u8 ‖ utf-8), 2 iterations exp (u8), 3 beacon (len u8 ‖ bytes)
import { createHash } from "node:crypto";
import { bn128 } from "./snarkjs";

export interface ZkeyContribution {
  /** 1-based, oldest first. */
  index: number;
  name: string;
  /** BLAKE2b-512, hex. */
  hash: string;
  beacon?: string;
  iterations_exp?: number;
}

export class ZkeyContributionsError extends Error {}

const G1 = 64;
const G2 = 128;

function section10(zkey: Uint8Array): Uint8Array {
  const view = new DataView(zkey.buffer, zkey.byteOffset, zkey.byteLength);
  if (zkey.length < 12 || new TextDecoder().decode(zkey.subarray(0, 4)) !== "zkey") throw new ZkeyContributionsError("not a zkey file");
  const n = view.getUint32(8, true);
  let at = 12;
  for (let i = 0; i < n; i++) {
    if (at + 12 > zkey.length) break;
    const type = view.getUint32(at, true);
    const size = Number(view.getBigUint64(at + 4, true));
    at += 12;
    if (size > zkey.length - at) throw new ZkeyContributionsError(`section ${type} runs past the end of the zkey`);
    if (type === 10) return zkey.subarray(at, at + size);
    at += size;
  }
  throw new ZkeyContributionsError("the zkey has no contributions section");
}

/** Every contribution recorded in `zkey`, oldest first, with its hash. */
export async function zkeyContributions(zkey: Uint8Array): Promise<ZkeyContribution[]> {
  const curve = await bn128();
  const s = section10(zkey);
  const view = new DataView(s.buffer, s.byteOffset, s.byteLength);
  const need = (at: number, n: number) => {
    if (at + n > s.length) throw new ZkeyContributionsError("the contributions section is truncated");
  };
  need(0, 68);
  const count = view.getUint32(64, true);
  let at = 68;
  const found: ZkeyContribution[] = [];
  for (let i = 0; i < count; i++) {
    need(at, 3 * G1 + G2 + 64 + 8);
    const hasher = createHash("blake2b512");
    for (const [group, size] of [
      [curve.G1, G1],
      [curve.G1, G1],
      [curve.G1, G1],
      [curve.G2, G2],
    ] as const) {
      const out = new Uint8Array(size);
      group.toRprUncompressed(out, 0, group.fromRprLEM(s, at));
      hasher.update(out);
      at += size;
    }
    hasher.update(s.subarray(at, at + 64));
    at += 64;
    const type = view.getUint32(at, true);
    const paramLength = view.getUint32(at + 4, true);
    at += 8;
    need(at, paramLength);
    const end = at + paramLength;
    const c: ZkeyContribution = { index: i + 1, name: "", hash: hasher.digest("hex") };
    while (at < end) {
      const param = s[at++]!;
      if (param === 2) c.iterations_exp = s[at++]!;
      else if (param === 1 || param === 3) {
        const length = s[at++]!;
        if (at + length > end) throw new ZkeyContributionsError("a contribution's parameter runs past its end");
        const bytes = s.subarray(at, at + length);
        if (param === 1) c.name = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
        else c.beacon = Buffer.from(bytes).toString("hex");
        at += length;
      } else throw new ZkeyContributionsError(`a contribution has an unknown parameter ${param}`);
    }
    if ((type === 1) !== (c.beacon !== undefined)) throw new ZkeyContributionsError(`contribution #${i + 1}: its type and its beacon disagree`);
    found.push(c);
  }
  return found;
}
