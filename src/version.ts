// The release this code is: the repository's package.json version, which
// scripts/pack.ts also gives the three npm packages, so `zkagent --version`
// from a clone, the single binary and an installed package agree.
import manifest from "../package.json" with { type: "json" };

export const VERSION: string = manifest.version;
