import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';

/** The workspace file whose catalog pins the runtime (`catalog.node`). */
const WORKSPACE_FILE = new URL('../../../../pnpm-workspace.yaml', import.meta.url);

/** The Node version the project pins, as `process.version` spells it (`v24.21.0`). */
export async function pinnedNodeVersion(): Promise<string> {
  const workspace: unknown = parse(await readFile(WORKSPACE_FILE, 'utf8'));
  const catalog =
    typeof workspace === 'object' && workspace !== null && 'catalog' in workspace ? workspace.catalog : undefined;
  const pin = typeof catalog === 'object' && catalog !== null && 'node' in catalog ? catalog.node : undefined;
  if (typeof pin !== 'string' || !/^\d+\.\d+\.\d+$/.test(pin)) {
    throw new Error(`pnpm-workspace.yaml must pin the runtime as catalog.node: an exact version, not ${String(pin)}`);
  }
  return `v${pin}`;
}
