import { describe, expect, it } from 'vitest';
import { COMMON_ERROR_CODES, type OperationDeclaration } from './operation.js';
import { operations } from './operations.js';
import { operationParameters } from './parameters.js';
import { isScope, SCOPE_DESCRIPTIONS, SCOPES } from './scopes.js';

const entries: Array<[string, OperationDeclaration]> = Object.entries(operations);

describe('the operations table', () => {
  it('declares each method and path once', () => {
    const keys = entries.map(([, operation]) => `${operation.method} ${operation.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toHaveLength(22);
  });

  it.each(entries)('%s: names every {parameter} of its path, in order, and no other path parameter', (_, operation) => {
    const templated = [...operation.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
    const declared = (operation.parameters ?? [])
      .map((name) => operationParameters[name])
      .filter((parameter) => parameter.in === 'path')
      .map((parameter) => parameter.name);
    expect(declared).toEqual(templated);
  });

  it.each(entries)('%s: lists exactly the entries of its query schema as query parameters', (_, operation) => {
    const queryParameters = (operation.parameters ?? [])
      .map((name) => operationParameters[name])
      .filter((parameter) => parameter.in === 'query');
    const { query } = operation;
    expect(queryParameters.map((parameter) => parameter.name)).toEqual(Object.keys(query?.entries ?? {}));
    for (const parameter of queryParameters) expect(parameter.schema).toBe(query?.entries[parameter.name]);
  });

  it.each(entries)('%s: has a success body unless it answers 204, a body only on POST and PATCH', (_, operation) => {
    expect('schema' in operation.success).toBe(operation.success.status !== 204);
    if (operation.body) expect(['POST', 'PATCH']).toContain(operation.method);
    // Pages are walked by `after`, the last id of a page: a paged listing takes one.
    if (operation.success.paged) expect(Object.keys(operation.query?.entries ?? {})).toContain('after');
  });

  it.each(entries)('%s: declares its own errors only, each with a reason', (_, operation) => {
    for (const [code, reason] of Object.entries(operation.errors)) {
      expect(COMMON_ERROR_CODES).not.toContain(Number(code));
      expect(reason).not.toBe('');
    }
  });
});

describe('the scopes', () => {
  it('are the five the tokens carry, each described', () => {
    expect(SCOPES).toEqual(['plants:read', 'plants:write', 'webhooks:manage', 'tokens:manage', 'platform:admin']);
    for (const scope of SCOPES) expect(SCOPE_DESCRIPTIONS[scope]).not.toBe('');
    expect(isScope('plants:read')).toBe(true);
    expect(isScope('toString')).toBe(false);
    expect(isScope('plants:*')).toBe(false);
  });

  it('are all required by some operation, but platform:admin, which widens what the others reach', () => {
    const required = entries.flatMap(([, operation]) => [operation.scope, ...(operation.alsoRequires ?? [])]);
    expect(new Set([...required, 'platform:admin'])).toEqual(new Set(SCOPES));
    expect(required).not.toContain('platform:admin');
  });
});
