// The wide build's Poseidon pieces (method and bounds in ./core.ts).

import { R } from "../asc-constants.ts";
import { Fn, ZERO, k, mul, mulAdd, pack, redcStore, words } from "./core.ts";

const FR_BYTES = 36;

/**
 * out = a0·b0 + a1·b1 + a2·b2 mod r (poseidon.ts dot3: a row of Poseidon's
 * matrix times the state): the three products summed unreduced (T < 3·2^512,
 * below the 33r·2^256 redc allows), one reduction instead of three.
 */
export function dot3(name: string): string {
  const f = new Fn();
  pack(f, "a", 0, "x", R);
  pack(f, "b", 0, "y", R);
  mul(f, "x", "y", "t");
  for (let j = 1; j < 3; j++) {
    pack(f, "a", j * FR_BYTES, "x", R);
    pack(f, "b", j * FR_BYTES, "y", R);
    mulAdd(f, "x", "y", "t");
  }
  redcStore(f, "t", R, "out", 0);
  return f.text(name, ["out", "a", "b"]);
}

/**
 * poseidon.ts poseidonLevel on the one-lane path: io holds n 32-byte
 * little-endian nodes; POSEIDON_NOT_CANONICAL (−1) when one is ≥ r, else
 * parent i = hashPair(node 2i, node 2i + 1) over node i (never a node still
 * to be read), a lone last node copied up, and the parent count returned.
 */
export function poseidonLevel(name: string): string {
  const f = new Fn();
  const rw = words(R);
  // x ≥ r exactly when x − r does not borrow (h = 0).
  for (let i = 0; i < 4; i++) f.set(`x${i}`, `(i64.load offset=${8 * i} (local.get $p))`);
  f.sub128("d", "h", f.get("x0"), ZERO, k(rw[0]!), ZERO);
  for (let i = 1; i < 4; i++) {
    f.sub128("d", "g", f.get(`x${i}`), ZERO, k(rw[i]!), ZERO);
    f.add128("d", "h", f.get("d"), f.get("g"), f.get("h"), f.get("h"));
  }
  const decl = [...f.locals].map((l) => `  (local $${l} i64)`).join("\n");
  const io = "(global.get $assembly/io/ioBase)";
  return ` (func ${name} (param $n i32) (result i32)
  (local $i i32) (local $p i32) (local $pairs i32)
${decl}
  (block $checked
   (loop $check
    (br_if $checked (i32.ge_u (local.get $i) (local.get $n)))
    (local.set $p (i32.add ${io} (i32.shl (local.get $i) (i32.const 5))))
${f.lines.map((l) => `   ${l}`).join("\n")}
    (if (i64.eqz (local.get $h)) (then (return (i32.const -1))))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (br $check)))
  (local.set $pairs (i32.shr_u (local.get $n) (i32.const 1)))
  (local.set $i (i32.const 0))
  (block $hashed
   (loop $hash
    (br_if $hashed (i32.ge_u (local.get $i) (local.get $pairs)))
    (call $assembly/poseidon/hashPair
     (i32.add ${io} (i32.shl (local.get $i) (i32.const 5)))
     (i32.add ${io} (i32.shl (local.get $i) (i32.const 6)))
     (i32.add ${io} (i32.add (i32.shl (local.get $i) (i32.const 6)) (i32.const 32))))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (br $hash)))
  (if (i32.and (local.get $n) (i32.const 1))
   (then
    (memory.copy
     (i32.add ${io} (i32.shl (local.get $pairs) (i32.const 5)))
     (i32.add ${io} (i32.shl (i32.sub (local.get $n) (i32.const 1)) (i32.const 5)))
     (i32.const 32))))
  (i32.add (local.get $pairs) (i32.and (local.get $n) (i32.const 1)))
 )
`;
}
