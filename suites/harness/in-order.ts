/**
 * `fn` over every item with at most `limit` calls in flight, the results in the items' order.
 * The first failure is thrown once every call already started has settled, so nothing a call
 * started is left running behind the caller.
 */
export async function inOrder<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (next < items.length && !failure) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failure) throw failure.error;
  return results;
}

/**
 * `fn` over every item, at most `limit` calls ahead of the caller, each result handed over in
 * the items' order as soon as it and those before it are in: `for await (const [item, r] of
 * ahead(...))`. When the loop ends early (a check threw), no new call starts, and the ones
 * already started settle before the loop's error goes on: a failing server costs no more
 * requests than one after another would have sent, plus those in flight.
 */
export async function* ahead<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): AsyncGenerator<[T, R]> {
  // A result handed over is dropped from here (undefined): a settled promise would keep its
  // reply alive until the loop ends, and a loop over every list would hold every reply.
  const started: Array<Promise<R> | undefined> = [];
  let consumed = 0;
  const launch = () => {
    while (started.length < items.length && started.length - consumed < Math.max(1, limit)) {
      const i = started.length;
      const p = fn(items[i]!, i);
      p.catch(() => {});
      started.push(p);
    }
  };
  try {
    launch();
    while (consumed < items.length) {
      const result = await started[consumed]!;
      const item = items[consumed]!;
      started[consumed] = undefined;
      consumed++;
      launch();
      yield [item, result];
    }
  } finally {
    await Promise.allSettled(started.slice(consumed).filter((p): p is Promise<R> => p !== undefined));
  }
}

/**
 * Promise.all of calls already started, except that a failure goes on only once every call has
 * settled, so nothing a call started is left running behind the caller (a creation still in
 * flight when the file's cleanup runs would be left behind).
 */
export async function together<T extends readonly unknown[] | []>(calls: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled: Array<PromiseSettledResult<unknown>> = await Promise.allSettled(calls as readonly unknown[]);
  const values: unknown[] = [];
  for (const r of settled) {
    if (r.status === 'rejected') throw r.reason;
    values.push(r.value);
  }
  return values as { -readonly [K in keyof T]: Awaited<T[K]> };
}
