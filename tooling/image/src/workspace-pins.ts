import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';

/** The repository's root: the image's build context. */
export const REPOSITORY_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The image's name in the engine's default store. */
export const IMAGE_NAME = 'localhost/plant-store-api';

/** What the image is built from, as the repository pins it. */
export interface WorkspacePins {
  /** The Node the project runs on (pnpm-workspace.yaml, catalog `node`). */
  readonly node: string;
  /** The service's version (apps/api/package.json): the image's second tag. */
  readonly serviceVersion: string;
  /** The commit the image is built from, or `unknown` outside a git checkout. */
  readonly revision: string;
}

export async function readWorkspacePins(): Promise<WorkspacePins> {
  const workspace: unknown = parse(await readFile(join(REPOSITORY_ROOT, 'pnpm-workspace.yaml'), 'utf8'));
  const node = pickString(workspace, ['catalog', 'node']);
  const service: unknown = JSON.parse(await readFile(join(REPOSITORY_ROOT, 'apps/api/package.json'), 'utf8'));
  const serviceVersion = pickString(service, ['version']);
  if (node === undefined || serviceVersion === undefined) {
    throw new Error('pnpm-workspace.yaml must pin catalog.node, and apps/api/package.json must have a version');
  }
  let revision = 'unknown';
  try {
    revision = (await promisify(execFile)('git', ['rev-parse', 'HEAD'], { cwd: REPOSITORY_ROOT })).stdout.trim();
  } catch {
    // A source tarball without .git: the label says so.
  }
  return { node, serviceVersion, revision };
}

function pickString(value: unknown, path: readonly string[]): string | undefined {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null || !(key in current)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return typeof current === 'string' ? current : undefined;
}
