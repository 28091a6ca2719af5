// A value read from the store and kept for a while, as several parts of the
// service see shared state that any process may change (the receipt signing
// keys, the circuit versions): each node reads again once its copy is
// `ttlMs` old, so a change made anywhere holds everywhere within that time,
// without a restart; concurrent callers share one read.
export class Refreshing<T> {
  private cached?: { value: T; readAt: number };
  private loading?: Promise<T>;

  constructor(
    /** Reads the value; `readAt` is the time the read started (the copy's age counts from it). */
    private readonly read: (readAt: number) => Promise<T>,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The value as of at most ttlMs ago. */
  get(): Promise<T> {
    if (this.cached && this.age() < this.ttlMs) return Promise.resolve(this.cached.value);
    return this.reload();
  }

  /** A fresh read, shared with the one already in flight. A failed read keeps nothing. */
  reload(): Promise<T> {
    this.loading ??= (async () => {
      const readAt = this.now();
      const value = await this.read(readAt);
      this.cached = { value, readAt };
      return value;
    })().finally(() => (this.loading = undefined));
    return this.loading;
  }

  /** Milliseconds since the kept value was read; Infinity before the first read. */
  age(): number {
    return this.cached ? this.now() - this.cached.readAt : Number.POSITIVE_INFINITY;
  }

  /** Whether a value has been read. */
  get loaded(): boolean {
    return this.cached !== undefined;
  }
}
