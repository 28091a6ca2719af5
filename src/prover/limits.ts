// Bounds of the prover's options shared by the SDK and the CLI (imported by
// the CLI's argument parsing, so it stays free of the prover's code).

/** Threads per proof at most: more helpers than this only cost memory (each holds a copy of its share of the tables). */
export const MAX_PROVER_THREADS = 64;
