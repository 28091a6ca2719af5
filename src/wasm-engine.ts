// Which of the two builds of the project's WebAssembly (build/*.wasm) this
// process loads: the "wide" build, whose field products use WebAssembly's
// wide-arithmetic instructions (i64.mul_wide_u, i64.add128, i64.sub128;
// scripts/asc-wide.ts), or the "portable" build, which any engine with
// 128-bit SIMD runs. Both are built from the same sources and give the same
// results (test/assembly/wide.test.ts); the wide one is faster where the
// engine has the instructions (Bun 1.4.5 does, Node 20 does not).
//
// Decided once, at load: the setting ZKAGENT_WASM — "portable" forces the
// portable build, "wide" the wide one (an error at load when the engine
// lacks the instructions), unset or "auto" probes the engine. This is the
// one variable the SDK reads itself (the service's configuration is
// src/config.ts); both the service and the SDK load their modules through
// here, so one process never mixes the two builds.

/** The two builds of every module. */
export type WasmBuild = "wide" | "portable";

/**
 * A module of one function, (i64, i64) → i64, that uses each of the three
 * instructions: mul_wide_u, add128, sub128 (opcodes 0xFC 0x16, 0x13, 0x14).
 * An engine that validates it runs the wide build.
 */
export const WIDE_PROBE = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00, // magic, version 1
  0x01,
  0x07,
  0x01,
  0x60,
  0x02,
  0x7e,
  0x7e,
  0x01,
  0x7e, // type section: (i64, i64) → i64
  0x03,
  0x02,
  0x01,
  0x00, // function section: one function of type 0
  0x0a,
  0x17,
  0x01,
  0x15,
  0x00, // code section: one body of 21 bytes, no locals
  0x20,
  0x00,
  0x20,
  0x01,
  0xfc,
  0x16, // local.get 0, local.get 1, i64.mul_wide_u
  0x20,
  0x00,
  0x20,
  0x01,
  0xfc,
  0x13, // local.get 0, local.get 1, i64.add128
  0x20,
  0x00,
  0x20,
  0x01,
  0xfc,
  0x14, // local.get 0, local.get 1, i64.sub128
  0x1a,
  0x0b, // drop, end
]);

/** True when the engine validates the probe (validate is injectable so tests can simulate an engine without the instructions). */
export function wideArithmeticSupported(validate: (bytes: Uint8Array) => boolean = (b) => WebAssembly.validate(b)): boolean {
  try {
    return validate(WIDE_PROBE);
  } catch {
    return false;
  }
}

/** The build for a setting of ZKAGENT_WASM and an engine probe; throws, naming the problem, on a value it does not know or "wide" on an engine without the instructions. */
export function chooseWasmBuild(setting: string | undefined, supported: () => boolean = wideArithmeticSupported): WasmBuild {
  const value = (setting ?? "").trim().toLowerCase();
  if (value === "portable") return "portable";
  if (value === "wide") {
    if (!supported())
      throw new Error("ZKAGENT_WASM=wide, but this JavaScript engine does not run WebAssembly's wide-arithmetic instructions; unset it or set it to portable");
    return "wide";
  }
  if (value === "" || value === "auto") return supported() ? "wide" : "portable";
  throw new Error(`ZKAGENT_WASM must be auto, wide or portable (got ${JSON.stringify(setting)})`);
}

/** This process's build: read and probed once, at load. */
export const WASM_BUILD: WasmBuild = chooseWasmBuild(typeof process === "undefined" ? undefined : process.env.ZKAGENT_WASM);
