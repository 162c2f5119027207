import { stringifyJson } from '@plant-store/schema';
import type { Context } from 'koa';

/**
 * Every JSON response goes out through here: Koa's own JSON encoding uses JSON.stringify,
 * which throws on bigint ids; this writes them as exact JSON integers.
 */
export function respondJson(ctx: Context, status: number, value: unknown): void {
  respondJsonText(ctx, status, stringifyJson(value));
}

/** A response whose JSON text is already written. */
export function respondJsonText(ctx: Context, status: number, json: string): void {
  ctx.status = status;
  // Straight onto the response: ctx.type would look the media type up on every response.
  ctx.res.setHeader('Content-Type', 'application/json; charset=utf-8');
  ctx.body = json;
}
