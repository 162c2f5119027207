import { stringifyJson } from '@plant-store/schema';
import type { Context } from 'koa';

/**
 * Every JSON response goes out through here: Koa's own JSON encoding uses JSON.stringify,
 * which throws on bigint ids; this writes them as exact JSON integers.
 */
export function respondJson(ctx: Context, status: number, value: unknown): void {
  ctx.status = status;
  // Set as a header, not through ctx.type, which looks the media type up on every response.
  ctx.set('Content-Type', 'application/json; charset=utf-8');
  ctx.body = stringifyJson(value);
}
