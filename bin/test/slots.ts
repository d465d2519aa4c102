/**
 * At most `n` holders at once, the others waiting in the order they asked: `const slot = slots(2)`,
 * then `const release = await slot()` before the work and `release()` after it. The tests that
 * start CLIs or front ends side by side keep them to what two cores serve.
 */
export function slots(n: number): () => Promise<() => void> {
  let running = 0;
  const queue: Array<() => void> = [];
  return async () => {
    if (running >= n) await new Promise<void>((r) => queue.push(r));
    running++;
    return () => {
      running--;
      queue.shift()?.();
    };
  };
}
