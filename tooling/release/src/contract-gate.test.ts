/**
 * The gate on documents made from the committed one: a removed operation and a newly required
 * field are breaking; a new optional field and a new description are not. The exit code follows:
 * a breaking change passes only with a pending major changeset for a contract package, and a
 * stale committed document always fails.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { compareDocuments, formatDocument, runContractGate } from './contract-gate.js';

const COMMAND = fileURLToPath(new URL('./openapi-command.ts', import.meta.url));
const COMMITTED_TEXT = await readFile(new URL('../../../apps/api/openapi.json', import.meta.url), 'utf8');

type Document = {
  paths: Record<string, Record<string, { description?: string }>>;
  components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> };
};

/** The committed document, changed by `edit`, in its committed form. */
function changed(edit: (document: Document) => void): string {
  const document = JSON.parse(COMMITTED_TEXT) as Document;
  edit(document);
  return formatDocument(JSON.stringify(document));
}

const removedOperation = changed((document) => {
  delete document.paths['/plants/{id}']?.delete;
});
const requiredTag = changed((document) => {
  document.components.schemas.NewPlant?.required.push('tag');
});
const optionalField = changed((document) => {
  const newPlant = document.components.schemas.NewPlant;
  if (newPlant) newPlant.properties.color = { type: 'string', description: 'Leaf colour' };
});
const newDescription = changed((document) => {
  const get = document.paths['/plants']?.get;
  if (get) get.description = 'Lists the plants, a page at a time.';
});

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

/** A checkout with the given documents and pending changesets. */
async function checkout(documents: { committed: string; released: string }, changesets: Record<string, string> = {}) {
  const root = await mkdtemp(join(tmpdir(), 'plant-store-gate-'));
  roots.push(root);
  await mkdir(join(root, '.changeset'));
  await mkdir(join(root, 'apps/api'), { recursive: true });
  await writeFile(join(root, 'apps/api/openapi.json'), documents.committed);
  await writeFile(join(root, 'apps/api/openapi.released.json'), documents.released);
  for (const [name, text] of Object.entries(changesets)) await writeFile(join(root, '.changeset', `${name}.md`), text);
  return root;
}

const MAJOR = '---\n"@plant-store/client": major\n---\n\nDELETE /plants/{id} is gone.\n';
const MINOR = '---\n"@plant-store/schema": minor\n"@plant-store/client": minor\n---\n\nA colour.\n';
const MAJOR_ELSEWHERE = '---\n"@plant-store/db": major\n---\n\nNot the contract.\n';

describe('classifying a change to the committed document', () => {
  it('calls a removed operation and a newly required field breaking', () => {
    expect(compareDocuments(COMMITTED_TEXT, removedOperation)).toEqual({
      verdict: 'breaking',
      changes: [{ type: 'breaking', description: '[Removed] operation DELETE /plants/{id}' }],
    });
    const required = compareDocuments(COMMITTED_TEXT, requiredTag);
    expect(required.verdict).toBe('breaking');
    expect(required.changes).toContainEqual({
      type: 'breaking',
      description: '[Added] required status to `tag` in Request Body content (application/json)',
    });
  });

  it('calls a new optional field and a new description non-breaking', () => {
    const optional = compareDocuments(COMMITTED_TEXT, optionalField);
    expect(optional.verdict).toBe('non-breaking');
    expect(optional.changes).toContainEqual({
      type: 'non-breaking',
      description: '[Added] property `color` in Request Body content (application/json)',
    });
    const described = compareDocuments(COMMITTED_TEXT, newDescription);
    expect(described.verdict).toBe('non-breaking');
    expect(described.changes.map((change) => change.type)).toEqual(['annotation']);
  });

  it('calls a changed or added response example an annotation, not breaking', () => {
    const withExample = changed((document) => {
      const post = document.paths['/webhooks']?.post as unknown as {
        responses: Record<string, { content: Record<string, { examples?: Record<string, unknown> }> }>;
      };
      const json = post.responses['400']?.content['application/json'];
      if (!json) throw new Error('the committed document has no 400 JSON answer for POST /webhooks');
      json.examples = { ...json.examples, another: { value: { error: 400, message: 'another example' } } };
    });
    const comparison = compareDocuments(COMMITTED_TEXT, withExample);
    expect(comparison.verdict).toBe('non-breaking');
    expect(comparison.changes.length).toBeGreaterThan(0);
    expect(comparison.changes.every((change) => change.type === 'annotation')).toBe(true);
  });

  it('sees no change between the document and its committed form', () => {
    expect(compareDocuments(COMMITTED_TEXT, JSON.stringify(JSON.parse(COMMITTED_TEXT)))).toEqual({
      verdict: 'unchanged',
      changes: [],
    });
  });
});

describe('the gate', () => {
  it('passes an up-to-date document with no change since the release', async () => {
    const root = await checkout({ committed: COMMITTED_TEXT, released: COMMITTED_TEXT });
    const result = await runContractGate({
      served: COMMITTED_TEXT,
      committed: COMMITTED_TEXT,
      released: COMMITTED_TEXT,
      root,
    });
    expect(result.exitCode).toBe(0);
  });

  it('fails a breaking change without a major changeset for a contract package, and passes it with one', async () => {
    for (const [served, changesets, exitCode] of [
      [removedOperation, {}, 1],
      [removedOperation, { minor: MINOR, elsewhere: MAJOR_ELSEWHERE }, 1],
      [removedOperation, { 'drop-delete': MAJOR }, 0],
      [requiredTag, { minor: MINOR }, 1],
      [requiredTag, { 'drop-delete': MAJOR }, 0],
    ] as const) {
      const root = await checkout({ committed: served, released: COMMITTED_TEXT }, changesets);
      const result = await runContractGate({ served, committed: served, released: COMMITTED_TEXT, root });
      expect(result.sinceRelease.verdict).toBe('breaking');
      expect(result.exitCode, `${Object.keys(changesets)}`).toBe(exitCode);
      expect(result.majorChangesets).toEqual(exitCode === 0 ? ['.changeset/drop-delete.md'] : []);
    }
  });

  it('passes a non-breaking change without any changeset', async () => {
    for (const served of [optionalField, newDescription]) {
      const root = await checkout({ committed: served, released: COMMITTED_TEXT });
      const result = await runContractGate({ served, committed: served, released: COMMITTED_TEXT, root });
      expect(result.sinceRelease.verdict).toBe('non-breaking');
      expect(result.exitCode).toBe(0);
    }
  });

  it('passes a breaking change reviewed as breaking no client, and fails a review of a change that does not occur', async () => {
    const review = {
      change: '[Added] required status to `tag` in Request Body content (application/json)',
      reason: 'every client sends a tag already',
    };
    const root = await checkout({ committed: requiredTag, released: COMMITTED_TEXT });
    // NewPlant is in more than one body (POST /plants, and each line of an import): the tag made
    // required there is a change of each, and each needs its own review.
    const unreviewed = await runContractGate({
      served: requiredTag,
      committed: requiredTag,
      released: COMMITTED_TEXT,
      root,
    });
    const breaking = unreviewed.sinceRelease.changes.filter((change) => change.type === 'breaking');
    expect(breaking.map((change) => change.description)).toContain(review.change);
    const others = breaking
      .filter((change) => change.description !== review.change)
      .map((change) => ({ change: change.description, reason: review.reason }));
    const reviewed = await runContractGate({
      served: requiredTag,
      committed: requiredTag,
      released: COMMITTED_TEXT,
      reviewed: [review, ...others],
      root,
    });
    expect(reviewed.sinceRelease.verdict).toBe('non-breaking');
    expect(reviewed.sinceRelease.changes).toContainEqual({ type: 'reviewed', description: review.change });
    expect(reviewed.report).toContain(`reviewed: ${review.change}: every client sends a tag already`);
    expect(reviewed.exitCode).toBe(0);

    // The same review where the change does not occur (a removed operation instead): both fail.
    const other = await runContractGate({
      served: removedOperation,
      committed: removedOperation,
      released: COMMITTED_TEXT,
      reviewed: [review],
      root,
    });
    expect(other.sinceRelease.verdict).toBe('breaking');
    expect(other.report).toContain(`FAIL: apps/api/openapi.reviewed.json names a change that does not occur`);
    expect(other.exitCode).toBe(1);
  });

  it('fails a stale committed document even when the change is declared', async () => {
    const root = await checkout({ committed: COMMITTED_TEXT, released: COMMITTED_TEXT }, { 'drop-delete': MAJOR });
    const result = await runContractGate({
      served: removedOperation,
      committed: COMMITTED_TEXT,
      released: COMMITTED_TEXT,
      root,
    });
    expect(result.stale.verdict).toBe('breaking');
    expect(result.exitCode).toBe(1);
    expect(result.report).toContain('run `pnpm openapi:write`');
  });

  it('exits 1 as a command on an undeclared breaking change, and 0 once a major changeset declares it', async () => {
    const root = await checkout({ committed: removedOperation, released: COMMITTED_TEXT });
    const served = join(root, 'apps/api/openapi.json');
    const gate = () =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', COMMAND, 'check', '--served', served, '--root', root]);
    await expect(gate()).rejects.toMatchObject({
      code: 1,
      stdout: expect.stringContaining('FAIL: a breaking change needs a major changeset'),
    });
    await writeFile(join(root, '.changeset/drop-delete.md'), MAJOR);
    const { stdout } = await gate();
    expect(stdout).toContain('ok: breaking, and declared: a major release in .changeset/drop-delete.md');
  });

  it('reads reviews from apps/api/openapi.reviewed.json, and a release records the contract and empties them', async () => {
    const root = await checkout({ committed: requiredTag, released: COMMITTED_TEXT });
    const reviewedFile = join(root, 'apps/api/openapi.reviewed.json');
    await writeFile(
      reviewedFile,
      JSON.stringify({
        changes: [
          {
            change: '[Added] required status to `tag` in Request Body content (application/json)',
            reason: 'every client sends a tag already',
          },
          {
            change: '[Added] annotation (2) in Request Body content (application/x-ndjson)',
            reason: 'every import has a tag on each line already',
          },
        ],
      }),
    );
    const run = (...args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', COMMAND, ...args, '--root', root]);
    const served = join(root, 'apps/api/openapi.json');
    const { stdout } = await run('check', '--served', served);
    expect(stdout).toContain('ok: no breaking change');

    await run('release');
    expect(await readFile(join(root, 'apps/api/openapi.released.json'), 'utf8')).toBe(requiredTag);
    expect(JSON.parse(await readFile(reviewedFile, 'utf8'))).toMatchObject({ changes: [] });
    const after = await run('check', '--served', served);
    expect(after.stdout).toContain('since the last release (apps/api/openapi.released.json): no change');
  });
});
