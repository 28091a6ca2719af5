// Time comes from a Clock so tests can move it (expiry, retention) without sleeping.
import { readFileSync, renameSync, writeFileSync } from "node:fs";

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  constructor(private current = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/**
 * The clock of TEST_CLOCK_FILE (tests and demos only, never production:
 * config.ts refuses it there): the system clock shifted by the offset, in
 * ms, that the file holds, read at every reading. A process outside the
 * service (a demo, a test) moves the service's time by rewriting the file
 * (setTestClock), e.g. a day ahead to show a new day's budget. The clock
 * keeps running between moves: timers and intervals (checkpoints, purges,
 * webhook polls) still see time pass, as they would in production.
 */
export class FileOffsetClock implements Clock {
  private offset = 0;
  constructor(readonly path: string) {
    this.offset = readOffset(path);
  }
  now(): number {
    try {
      this.offset = readOffset(this.path);
    } catch {
      // A file being replaced (setTestClock renames, so this is rare): the last offset read.
    }
    return Date.now() + this.offset;
  }
}

function readOffset(path: string): number {
  const text = readFileSync(path, "utf8").trim();
  const offset = Number(text);
  if (text === "" || !Number.isSafeInteger(offset)) throw new RangeError(`${path} must hold an integer offset in ms, not ${JSON.stringify(text.slice(0, 40))}`);
  return offset;
}

/** Sets a TEST_CLOCK_FILE so its clock reads `at` (Unix ms) now and runs on from there; written whole (rename), so no reader sees half of it. */
export function setTestClock(path: string, at: number): void {
  writeFileSync(`${path}.tmp`, `${Math.round(at - Date.now())}\n`);
  renameSync(`${path}.tmp`, path);
}

/** The service's clock: TEST_CLOCK_FILE's when set (config.ts allows it only on a loopback address, outside NODE_ENV=production), else the system's. */
export const clockFor = (config: { testClockFile: string }): Clock => (config.testClockFile ? new FileOffsetClock(config.testClockFile) : systemClock);
