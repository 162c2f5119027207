import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import lockfile from 'proper-lockfile';
import { DataDirLockedError } from './errors.js';

export interface DataDirLockOptions {
  /**
   * How long to wait for a lock left by a process that died without releasing it (the lock is
   * refreshed every 2 s and counts as abandoned after 10 s). 0 fails at once.
   */
  readonly waitMs?: number;
  /**
   * Called if the lock is lost while held (another process took it over after this one stalled
   * for longer than the stale time). Writing on would risk the data: stop the process. Without
   * a handler the error is thrown from a timer, which crashes the process.
   */
  readonly onLost?: (error: DataDirLockedError) => void;
}

const STALE_MS = 10_000;
const UPDATE_MS = 2_000;
const RETRY_EVERY_MS = 500;

/**
 * Takes the embedded data folder for this process alone: PGlite is a single-process database,
 * and two processes writing one folder would corrupt it. Returns the release function.
 */
export async function lockDataDir(dataDir: string, options: DataDirLockOptions = {}): Promise<() => Promise<void>> {
  const folder = resolve(dataDir);
  await mkdir(folder, { recursive: true });
  const waitMs = options.waitMs ?? STALE_MS + 2 * UPDATE_MS;
  try {
    return await lockfile.lock(folder, {
      lockfilePath: join(folder, 'lock'),
      stale: STALE_MS,
      update: UPDATE_MS,
      retries: {
        retries: Math.ceil(waitMs / RETRY_EVERY_MS),
        factor: 1,
        minTimeout: RETRY_EVERY_MS,
        maxTimeout: RETRY_EVERY_MS,
      },
      onCompromised: () => {
        const error = new DataDirLockedError(folder);
        if (!options.onLost) throw error;
        options.onLost(error);
      },
    });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ELOCKED') throw new DataDirLockedError(folder);
    throw error;
  }
}
