import { describe, expect, it } from 'vitest';
import { TargetChooser } from './target-chooser.js';

const hosts = [
  { host: 'a', port: 1 },
  { host: 'b', port: 2 },
];

function chooser(sslAttempts: Array<false | object> = [false]) {
  let now = 0;
  const chosen = new TargetChooser({ hosts, sslAttempts }, { recheckMs: 10_000, noneRetryMs: 250, now: () => now });
  return { chosen, at: (ms: number) => (now = ms) };
}

describe('TargetChooser', () => {
  it('tries the hosts in order, each with its TLS attempts in order', () => {
    const { chosen } = chooser([{ rejectUnauthorized: false }, false]);
    expect(chosen.targets.map((target) => [target.name, target.ssl])).toEqual([
      ['a:1', { rejectUnauthorized: false }],
      ['a:1', false],
      ['b:2', { rejectUnauthorized: false }],
      ['b:2', false],
    ]);
    expect(chosen.pick()).toBe(chosen.targets[0]);
    chosen.failed(chosen.targets[0] as never);
    expect(chosen.pick()).toBe(chosen.targets[1]);
  });

  it('puts a host that failed after the others until recheckMs has passed, then back in its place', () => {
    const { chosen, at } = chooser();
    const [a, b] = chosen.targets;
    chosen.failed(a as never);
    expect(chosen.pick()).toBe(b);
    at(9_999);
    expect(chosen.pick()).toBe(b);
    at(10_000);
    expect(chosen.pick()).toBe(a);
  });

  it('when every host failed a moment ago, tries the one that failed longest ago', () => {
    const { chosen, at } = chooser();
    const [a, b] = chosen.targets;
    chosen.failed(b as never);
    at(5);
    chosen.failed(a as never);
    expect(chosen.pick()).toBe(b);
  });

  it('reports a change of the qualifying host, and knows when none qualified recently', () => {
    const { chosen, at } = chooser();
    const [a, b] = chosen.targets;
    expect(chosen.qualified(a as never)).toEqual({ changed: true, previous: undefined });
    expect(chosen.qualified(a as never)).toEqual({ changed: false, previous: 'a:1' });
    expect(chosen.current).toBe('a:1');
    chosen.foundNone();
    expect(chosen.foundNoneRecently()).toBe(true);
    at(250);
    expect(chosen.foundNoneRecently()).toBe(false);
    chosen.foundNone();
    expect(chosen.qualified(b as never)).toEqual({ changed: true, previous: 'a:1' });
    expect(chosen.foundNoneRecently()).toBe(false);
  });
});
