import { useState } from 'preact/hooks';

/** The pages of a listing walked so far: each page's `after` (undefined for the first). */
export function usePages<TAfter>() {
  const [stack, setStack] = useState<Array<TAfter | undefined>>([undefined]);
  const after = stack[stack.length - 1];
  return {
    after,
    page: stack.length,
    hasPrevious: stack.length > 1,
    next: (nextAfter: TAfter) => setStack((pages) => [...pages, nextAfter]),
    previous: () => setStack((pages) => (pages.length > 1 ? pages.slice(0, -1) : pages)),
    reset: () => setStack([undefined]),
  };
}
