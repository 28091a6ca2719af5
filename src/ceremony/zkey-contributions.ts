// The phase-2 contributions a zkey carries (its section 10, as snarkjs writes
// it: the circuit hash, then per contribution deltaAfter and the delta proof
// (three G1 points, one G2), the 64-byte transcript hash, the type — 0 a
// contribution, 1 a beacon — and the parameters: name, beacon iterations and
// hash). Read with @iden3/binfileutils, the reader snarkjs itself uses. Each
// contribution's hash is the one its contributor published and `snarkjs zkey
// verify` prints: BLAKE2b-512 over its four points, uncompressed, and its
// transcript hash (snarkjs's hashPubKey), the points converted by
// ffjavascript's BN254 (single-threaded: src/ceremony/snarkjs.ts). The points
// are not checked here: that is `snarkjs zkey verify`'s job, with the
// circuit's r1cs and the phase-1 file. For zkeys we did not make (the
// Semaphore v4 ceremony's, src/circuits/semaphore.ts): who contributed.
import * as binFileUtils from "@iden3/binfileutils";
import { blake2b } from "@noble/hashes/blake2b";
import { buildBn128 } from "ffjavascript";

const MPC_SECTION = 10;
/** A G1 point as stored: two 32-byte coordinates (BN254). */
const G1_BYTES = 64;
const G2_BYTES = 128;
const PARAM_NAME = 1;
const PARAM_ITERATIONS = 2;
const PARAM_BEACON_HASH = 3;

export interface ZkeyContribution {
  type: "contribution" | "beacon";
  name: string;
  /** The contribution hash (BLAKE2b-512, hex), as its contributor published it. */
  hash: string;
  /** Beacons only. */
  iterationsExp?: number;
  beaconHash?: string;
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

let bn128: Promise<any> | undefined;

export async function zkeyContributions(bytes: Uint8Array): Promise<{ circuitHash: string; contributions: ZkeyContribution[] }> {
  const curve = await (bn128 ??= buildBn128(true));
  /** A point as the zkey stores it (Montgomery, little-endian) → its uncompressed bytes, as snarkjs hashes it. */
  const uncompressed = (group: any, stored: Uint8Array) => {
    const out = new Uint8Array(stored.length);
    group.toRprUncompressed(out, 0, group.fromRprLEM(stored, 0));
    return out;
  };
  const { fd, sections } = await binFileUtils.readBinFile({ type: "mem", data: bytes }, "zkey", 2);
  try {
    await binFileUtils.startReadUniqueSection(fd, sections, MPC_SECTION);
    const circuitHash = hex(await fd.read(64));
    const count = await fd.readULE32();
    const contributions: ZkeyContribution[] = [];
    for (let i = 0; i < count; i++) {
      const hasher = blake2b.create({ dkLen: 64 });
      for (let p = 0; p < 3; p++) hasher.update(uncompressed(curve.G1, await fd.read(G1_BYTES)));
      hasher.update(uncompressed(curve.G2, await fd.read(G2_BYTES)));
      hasher.update(await fd.read(64));
      const hash = hex(hasher.digest());
      const type = await fd.readULE32();
      const length = await fd.readULE32();
      const end = fd.pos + length;
      const c: ZkeyContribution = { type: type === 1 ? "beacon" : "contribution", name: "", hash };
      while (fd.pos < end) {
        const [param] = await fd.read(1);
        if (param === PARAM_NAME) c.name = new TextDecoder().decode(await fd.read((await fd.read(1))[0]));
        else if (param === PARAM_ITERATIONS) c.iterationsExp = (await fd.read(1))[0];
        else if (param === PARAM_BEACON_HASH) c.beaconHash = hex(await fd.read((await fd.read(1))[0]));
        else throw new Error(`zkey contribution ${i}: unknown parameter ${param}`);
      }
      contributions.push(c);
    }
    await binFileUtils.endReadSection(fd);
    return { circuitHash, contributions };
  } finally {
    await fd.close();
  }
}
