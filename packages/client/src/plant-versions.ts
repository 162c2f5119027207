import type { StoredPlant } from '@plant-store/schema';
import type { PlantStoreAnswer } from './send-request.js';

/** A plant with its version: what `ETag` said, for a later `If-Match` or `If-None-Match`. */
export interface VersionedStoredPlant {
  readonly plant: StoredPlant;
  /** The plant's version (its ETag's decimal): versions only grow for an id. */
  readonly version: bigint;
}

/** Options of a change that may name the version it expects (`If-Match`). */
export interface PreconditionOptions {
  /**
   * Change only while the plant has this version (a `version` a read or change returned);
   * otherwise a PlantStoreError with `error` 412, and nothing changes.
   */
  readonly ifMatch?: bigint;
}

const VERSION_TAG = /^"(0|[1-9][0-9]{0,18})"$/;

/** The version an answer's `ETag` names, or null when it names none (a strong `"<decimal>"`). */
export function versionOf(answer: PlantStoreAnswer): bigint | null {
  const match = VERSION_TAG.exec(answer.headers.get('ETag') ?? '');
  return match === null ? null : BigInt(match[1] ?? '');
}

/** The `If-Match` header a precondition sends, or none. */
export function ifMatchHeader(options: PreconditionOptions): Readonly<Record<string, string>> | undefined {
  return options.ifMatch === undefined ? undefined : { 'If-Match': `"${options.ifMatch}"` };
}
