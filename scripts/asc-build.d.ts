export declare const WASM_PATH: string;
export declare const TEST_WASM_PATH: string;
export declare const PROVER_WASM_PATH: string;
export declare const PROVER_TEST_WASM_PATH: string;
/** Every module this script builds. */
export declare const ALL_WASM_PATHS: string[];
/** True when the module at path (default: the production one) is missing or older than an input. */
export declare function isStale(path?: string): boolean;
/** Compiles one module (default: the production one). */
export declare function buildWasm(path?: string): void;
