// One "process" of the budget spend race in budgets.test.ts: its own handle
// on the shared SQLite file, started with the others, recording every spend
// it was given (the same nullifiers as the other worker's).
import { openSqlite } from "../../src/store/sqlite";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<{ path: string; group: string; nullifiers: string[]; worker: number }>) => {
  const { path, group, nullifiers, worker } = event.data;
  const store = openSqlite(path);
  const won: string[] = [];
  for (const nf of nullifiers) {
    const result = await store.recordBudgetSpend(group, nf, `cm-${nf}-by-${worker}`, 1_760_000_000_000);
    if (result.recorded) won.push(nf);
  }
  await store.close();
  self.postMessage({ worker, won });
};
