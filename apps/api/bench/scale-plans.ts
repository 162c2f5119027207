import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { BenchOptions, Engine } from './options.js';

const run = promisify(execFile);

/**
 * Runs packages/db's statement-plan test (EXPLAIN ANALYZE of every statement the service runs on
 * plants and events: index reads only, pages at most limit + 1 rows) on a table of `rows` plants
 * and as many events, on one engine: the CI runs it at 100,000, the bench at up to a million.
 */
export async function runPlanTest(
  options: BenchOptions,
  engine: Engine,
  rows: number,
): Promise<{ rows: number; passed: boolean; summary: string }> {
  const packageRoot = join(options.apiRoot, '../../packages/db');
  const env = {
    ...options.childEnv,
    PLANT_STORE_PLAN_ROWS: String(rows),
    PLANT_STORE_PLAN_ENGINES: engine,
    ...(engine === 'postgres' ? { TEST_DATABASE_URL: options.serverUrl } : {}),
  };
  const vitest = join(packageRoot, 'node_modules/.bin/vitest');
  try {
    const { stdout } = await run(vitest, ['run', 'src/plants/statement-plans.test.ts'], {
      cwd: packageRoot,
      env,
      timeout: 60 * 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { rows, passed: true, summary: testsLine(stdout) };
  } catch (error) {
    const output = error instanceof Error && 'stdout' in error ? String(error.stdout) : String(error);
    process.stderr.write(`${output}\n`);
    return { rows, passed: false, summary: testsLine(output) };
  }
}

/** vitest's `Tests  7 passed (7)` line, without its colours. */
function testsLine(output: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: vitest's ANSI colours
  const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
  return plain.match(/Tests\s+([^\n]+)/)?.[1]?.trim() ?? 'no summary';
}
