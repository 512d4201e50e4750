/**
 * libphonenumber-js says "not a number" by throwing a ParseError (and catching it inside); on a digit-heavy text it
 * does so for every candidate, and capturing each error's stack trace was then the largest single cost of the scrub
 * (about 40 % of `1 1 1 …` at the maximum size). Nothing reads those stacks, so none is captured inside `run`.
 * Synchronous code only: the limit is restored before anything else can run.
 */
export function withoutStackTraces<T>(run: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return run();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
