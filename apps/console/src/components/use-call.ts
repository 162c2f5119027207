import type { PlantStoreClient } from '@plant-store/client';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type Problem, problemOf } from '../api.js';
import { useConsole } from './console-context.js';

export type Loaded<T> =
  | { readonly state: 'loading' }
  | { readonly state: 'ready'; readonly value: T }
  | { readonly state: 'failed'; readonly problem: Problem };

/**
 * Loads what `load` asks the service for, again whenever `key` changes or `reload` is called; a
 * load that a newer one replaced is dropped. A refused token signs out.
 */
export function useLoad<T>(
  load: (client: PlantStoreClient, signal: AbortSignal) => Promise<T>,
  key: string,
): Loaded<T> & { reload: () => void } {
  const { client, onTokenRefused } = useConsole();
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  // `key` and `round` say when to load again; `load` is read through a ref.
  useEffect(() => {
    const controller = new AbortController();
    setLoaded({ state: 'loading' });
    loadRef.current(client, controller.signal).then(
      (value) => {
        if (!controller.signal.aborted) setLoaded({ state: 'ready', value });
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        const problem = problemOf(error);
        if (problem.kind === 'expired') onTokenRefused(problem.message);
        else setLoaded({ state: 'failed', problem });
      },
    );
    return () => controller.abort();
  }, [client, key, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { ...loaded, reload };
}

export interface Action {
  readonly busy: boolean;
  readonly problem: Problem | null;
  /** Runs `act`; its failure is kept in `problem` (a refused token signs out). Resolves true on success. */
  run(act: (client: PlantStoreClient) => Promise<void>): Promise<boolean>;
  clear(): void;
}

/** A change a person asks for: one at a time, its failure shown with the API's message. */
export function useAction(): Action {
  const { client, onTokenRefused } = useConsole();
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const run = useCallback(
    async (act: (client: PlantStoreClient) => Promise<void>) => {
      setBusy(true);
      setProblem(null);
      try {
        await act(client);
        return true;
      } catch (error) {
        const found = problemOf(error);
        if (found.kind === 'expired') onTokenRefused(found.message);
        else setProblem(found);
        return false;
      } finally {
        setBusy(false);
      }
    },
    [client, onTokenRefused],
  );
  return { busy, problem, run, clear: () => setProblem(null) };
}
