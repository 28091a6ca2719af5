// What the guard tells the merchant and never the agent: why a request was
// answered 502 or 500 (the service refused the API key, could not be reached,
// a context function threw) and settings that weaken it. An agent sees only
// the reason; the merchant's `onError` gets the cause. Without one, each
// problem is one line on stderr, so a wrong key or URL shows on the first
// request rather than as a silent 502.
import type { GuardProblem } from "./types";

export type Report = (problem: GuardProblem) => void;

const toConsole: Report = (problem) => {
  const line = `zkagent guard: ${problem.reason}: ${problem.message}`;
  if (problem.level === "warn") console.warn(line);
  else if (problem.reason === "internal_error") console.error(line, problem.cause);
  else console.error(line);
};

/** The `onError` hook, or stderr; a hook that throws is not allowed to turn a refusal into a crash. */
export function reporter(onError: ((problem: GuardProblem) => void) | undefined): Report {
  const hook = onError ?? toConsole;
  return (problem) => {
    try {
      hook(problem);
    } catch {
      // The merchant's logger failed: the request's answer stands.
    }
  };
}

const warned = new WeakMap<object, Set<string>>();

/** Reports a warning about a setting once per hook (once per process for stderr), however many routes share it. */
export function warnOnce(onError: ((problem: GuardProblem) => void) | undefined, reason: GuardProblem["reason"], message: string): void {
  const key = onError ?? toConsole;
  const seen = warned.get(key) ?? new Set<string>();
  warned.set(key, seen);
  if (seen.has(reason)) return;
  seen.add(reason);
  reporter(onError)({ reason, level: "warn", message });
}
