// The in-process signal from a committed decision that wrote webhook events
// to this process's delivery worker, so the first attempt starts within
// milliseconds instead of at the next poll. Only a hint: the worker polls the
// outbox too (events other nodes committed, or a signal missed), so nothing
// depends on it arriving.
const listeners = new Set<() => void>();

/** Calls `listener` after each commit that wrote events; returns the unsubscribe. */
export function onOutboxWritten(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Called by the stores after such a commit. */
export function outboxWritten(): void {
  for (const listener of listeners) listener();
}
