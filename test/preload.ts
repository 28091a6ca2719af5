// Test preload (register in bunfig.toml: [test] preload = ["./test/preload.ts"]):
// builds build/verifier.wasm when it is missing or older than its sources,
// before any test file starts, so no test hook pays for the ≈5 s compile.
// src/verifier/wasm.ts would also build on demand; this keeps it out of
// test timeouts.
import { buildWasm, isStale } from "../scripts/asc-build.ts";

if (isStale()) buildWasm();
