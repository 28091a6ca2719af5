// One "process" of the cross-thread SQLite race in sqlite.test.ts: opens its
// own handle on the shared file, waits for the start signal so all workers
// begin together, then tries to decide every challenge it was given.
import { openSqlite } from "../../src/store/sqlite";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<{ path: string; ids: string[]; worker: number }>) => {
  const { path, ids, worker } = event.data;
  const store = openSqlite(path);
  const won: string[] = [];
  for (const id of ids) {
    const result = await store.decideChallenge(id, { status: "verified", decidedAt: 1_760_000_001_000, confidence: 0.9, reason: `worker ${worker}` });
    if (result.decided) won.push(id);
  }
  await store.close();
  self.postMessage({ worker, won });
};
