import { ErrorSchema } from '@plant-store/schema';
import * as v from 'valibot';
import { expect } from 'vitest';
import type { TestResponse } from './test-service.js';

/**
 * Asserts an answer in the contract's Error shape: HTTP `status`, JSON, `error` naming the same
 * status, and `message` matching `message` when given.
 */
export function expectError(response: TestResponse, status: number, message?: string | RegExp): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = v.parse(ErrorSchema, response.body);
  expect(body.error).toBe(status);
  if (message !== undefined) expect(body.message).toMatch(message);
}
