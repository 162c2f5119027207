import { stringifyJson } from '@plant-store/schema';
import type { Context } from 'koa';
import { type Int64Form, stringifyJsonWithInt64Strings } from './int64-form.js';

/**
 * Every JSON response goes out through here: Koa's own JSON encoding uses JSON.stringify,
 * which throws on bigint ids; this writes them as exact JSON integers, or as decimal strings
 * for a request that asked for them (`int64Form`, see int64-form.ts).
 */
export function respondJson(ctx: Context, status: number, value: unknown, int64Form: Int64Form = 'number'): void {
  respondJsonText(ctx, status, int64Form === 'string' ? stringifyJsonWithInt64Strings(value) : stringifyJson(value));
}

/** A response whose JSON text is already written. */
export function respondJsonText(ctx: Context, status: number, json: string): void {
  ctx.status = status;
  // Straight onto the response: ctx.type would look the media type up on every response.
  ctx.res.setHeader('Content-Type', 'application/json; charset=utf-8');
  ctx.body = json;
}
