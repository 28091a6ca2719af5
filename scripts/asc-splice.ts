// The wide build's splice (run by scripts/asc-build.ts, one process per
// module): reads an asc module as text, replaces the functions that
// assembly/wide.wat defines, and writes the wide module's binary.
//
//   bun scripts/asc-splice.ts module.wat out.wasm

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import binaryen from "binaryen";

const root = join(import.meta.dir, "..");

/** The functions of a module's text, by name: each starts at a line ` (func $name ` and ends at the next line ` )`. */
function functionSpans(text: string): Map<string, { start: number; end: number; signature: string }> {
  const spans = new Map<string, { start: number; end: number; signature: string }>();
  for (const m of text.matchAll(/^ \(func (\$\S+)(.*)$/gm)) {
    const end = text.indexOf("\n )\n", m.index);
    spans.set(m[1]!, { start: m.index!, end: end + 4, signature: signature(m[2]!) });
  }
  return spans;
}

/** A function header's parameter and result types, without names: "(param $0 i32) (param $1 i32)" → "i32 i32 →". */
function signature(header: string): string {
  const params = [...header.matchAll(/\(param \$\S+ (\w+)\)/g)].map((m) => m[1]);
  const results = [...header.matchAll(/\(result (\w+)\)/g)].map((m) => m[1]);
  return `${params.join(" ")} → ${results.join(" ")}`;
}

/**
 * The wide build of an asc module given as text: every function defined in
 * assembly/wide.wat replaces the module's function of the same name and
 * signature (those the module does not have, or has inlined or with fewer
 * parameters, are left out), binaryen validates the result with
 * the wide-arithmetic feature on, and returns the binary (the rest is asc's
 * optimised code, unchanged).
 *
 * The spliced functions are NOT run through binaryen's optimiser by default:
 * they are already straight-line code on explicit locals, and Bun's engine
 * compiles them faster as written. Measured in one process, the same spliced
 * test module with and without binaryen -O3 on the spliced functions: fpMul
 * 41.3 → 38.3 ns, fp2Mul 107.5 → 102.4, fp2Sqr 85.9 → 78.2, fpSqr 40.6 →
 * 36.7, fp12Sqr 2132 → 2036, the final exponentiation 441 → 419 µs.
 * `optimize: true` restores it (bench/field.ts --optimized-splice measures
 * the difference).
 */
export function spliceWide(
  text: string,
  wideText: string = readFileSync(join(root, "assembly", "wide.wat"), "utf8"),
  { optimize = false }: { optimize?: boolean } = {},
): Uint8Array {
  const replacements = functionSpans(wideText);
  const targets = functionSpans(text);
  // A function the module inlined is absent, and one whose parameter binaryen
  // removed (every call passed the same constant) has another signature: the
  // replacement fits neither, and the portable code stays.
  const spliced = [...replacements]
    .filter(([name, span]) => targets.get(name)?.signature === span.signature)
    .sort(([a], [b]) => targets.get(b)!.start - targets.get(a)!.start);
  // Every module multiplies in Fp: a splice that finds nothing means asc
  // renamed or inlined the products, and the "wide" build would silently be
  // the portable one.
  if (!spliced.some(([name]) => name === "$assembly/fp/fpMul")) throw new Error("the module has no $assembly/fp/fpMul to replace");
  let out = text;
  for (const [name, span] of spliced) {
    const target = targets.get(name)!;
    out = out.slice(0, target.start) + wideText.slice(span.start, span.end) + out.slice(target.end);
  }
  const module = binaryen.parseText(out);
  try {
    const F = binaryen.Features;
    module.setFeatures(
      F.MVP | F.SIMD128 | F.BulkMemory | F.BulkMemoryOpt | F.SignExt | F.MutableGlobals | F.NontrappingFPToInt | F.Multivalue | F.WideArithmetic,
    );
    if (!module.validate()) throw new Error("the wide module does not validate");
    if (optimize) {
      binaryen.setOptimizeLevel(3);
      binaryen.setShrinkLevel(0);
      for (const [name] of spliced) module.optimizeFunction(name.slice(1));
    }
    return module.emitBinary();
  } finally {
    module.dispose();
  }
}

if (import.meta.main) {
  const [input, output] = process.argv.slice(2);
  if (!input || !output) throw new Error("usage: bun scripts/asc-splice.ts module.wat out.wasm");
  writeFileSync(output, spliceWide(readFileSync(input, "utf8")));
}
