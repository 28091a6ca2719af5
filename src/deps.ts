// What the HTTP layer is built from; main.ts assembles it once, tests build their own.
import type { Clock } from "./clock";
import type { Logger } from "./log";
import type { Verifier } from "./modules/proofs/service";
import type { Store } from "./store/interface";

export interface AppDeps {
  store: Store;
  clock: Clock;
  verifier: Verifier;
  logger: Logger;
}
