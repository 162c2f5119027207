import { describe, expect, it } from 'vitest';
import { pinnedNodeVersion } from './test-support/pinned-runtime.js';

describe('the pinned runtime', () => {
  it('runs the tests: pnpm test reaches vitest through turbo and pnpm on the pinned Node', async () => {
    // Not the machine's own Node: the quick start runs pnpm on whatever Node it finds, and the
    // pinned binary in node_modules/.bin must take over from there (see the README's Runtime).
    expect(process.version).toBe(await pinnedNodeVersion());
    // Every process a test starts (the service, the token command) is started with this binary.
    expect(process.execPath).toMatch(/node_modules/);
  });
});
