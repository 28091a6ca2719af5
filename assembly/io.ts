// The I/O buffer both modules (verifier and prover) exchange data through:
// JavaScript asks for `io(size)`, writes its input there and calls; outputs
// come back in the same buffer. Each module compiles its own copy of these
// globals.

export let ioBase: usize = 0;
let ioSize: usize = 0;

/** Returns the I/O buffer, grown to at least size bytes (its address may change). */
export function io(size: u32): usize {
  if (<usize>size > ioSize) {
    const grown = max(<usize>size, ioSize * 2);
    ioBase = heap.alloc(grown);
    ioSize = grown;
  }
  return ioBase;
}
