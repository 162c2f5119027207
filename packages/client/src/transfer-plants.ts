import {
  EXPORT_CURSOR_HEADER,
  type ExportPlantsQueryInput,
  type ImportResult,
  ImportResultSchema,
  NDJSON_TYPE,
  type NewPlantInput,
  NewPlantSchema,
  operations,
  parseJson,
  type StoredPlant,
  StoredPlantSchema,
  stringifyJson,
} from '@plant-store/schema';
import * as v from 'valibot';
import { type CallOptions, type ClientContext, operationTarget } from './client-context.js';
import { parseInput } from './parse-input.js';
import { PlantStoreError } from './plant-store-error.js';
import { abortedError, describeRequest, errorFromAnswer, type PlantStoreRequest } from './send-request.js';

/**
 * What an import reads: a file path (Node only), a Blob (a File, or Node's `fs.openAsBlob`), a
 * stream or an async iterable of NDJSON bytes or text (a Node Readable is one), or an iterable or
 * async iterable of plants (each validated with NewPlantSchema, written one a line).
 */
export type ImportSource =
  | string
  | Blob
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array | string>
  | AsyncIterable<NewPlantInput>
  | Iterable<NewPlantInput>;

export interface ImportPlantsOptions extends CallOptions {
  /** Compress the body with gzip (CompressionStream) before sending. Default false. */
  readonly gzip?: boolean;
  /**
   * The source's bytes are gzip already (a `.ndjson.gz` file): sent as they are, with
   * `Content-Encoding: gzip`. Not with `gzip` (that would compress them twice). Default false.
   */
  readonly gzipped?: boolean;
  /** Called as the body is sent, with the bytes (before compression) and the lines sent so far. */
  readonly onProgress?: (progress: { readonly bytes: number; readonly lines: number }) => void;
}

export interface ExportPlantsOptions extends CallOptions {
  /** Called once the answer starts, with the event-feed cursor of the export's snapshot. */
  readonly onCursor?: (cursor: string) => void;
}

const encoder = new TextEncoder();
const NEWLINE = 0x0a;

/**
 * `POST /plants/import`: streams `source` as NDJSON and resolves with the counts once every line is
 * stored (all or nothing: a PlantStoreError with `error` 400 names the line that stopped it). Never
 * retried by itself (a stream cannot be sent twice), and safe to call again with the same plants
 * after a failure: lines already stored exactly count as `alreadyStored`. No timeout: the import takes
 * as long as its data does (abort it with `signal`).
 */
export async function importPlants(
  context: ClientContext,
  source: ImportSource,
  options: ImportPlantsOptions = {},
): Promise<ImportResult> {
  if (options.gzip && options.gzipped) throw new TypeError('importPlants: gzip and gzipped cannot both be true');
  const target = operationTarget(context, operations.importPlants, {});
  const request: PlantStoreRequest = { ...target, retryMode: 'unprocessed-only', signal: options.signal };
  const headers: Record<string, string> = {
    Accept: 'application/json',
    Authorization: `Bearer ${context.transport.token}`,
    'Content-Type': NDJSON_TYPE,
  };
  if (options.gzip || options.gzipped) headers['Content-Encoding'] = 'gzip';
  // A Blob (a File a person picked) goes as it is, with its length: browsers send a streamed body
  // only over HTTP/2, and a page's service may well answer HTTP/1.1.
  const whole = source instanceof Blob && !options.gzip && options.onProgress === undefined;
  let body: ReadableStream<Uint8Array> | Blob = whole
    ? source
    : readableOf(countingBytes(await bytesOf(source), options.onProgress));
  if (options.gzip && !(body instanceof Blob)) {
    body = body.pipeThrough(new CompressionStream('gzip') as unknown as ReadableWritablePair<Uint8Array, Uint8Array>);
  }
  let response: Response;
  let text: string;
  try {
    response = await context.transport.fetch(target.url, {
      method: target.method,
      headers,
      body,
      redirect: 'manual',
      ...(options.signal === undefined ? {} : { signal: options.signal }),
      // A streamed request body (fetch's `duplex`, not in every lib's RequestInit yet).
      ...(body instanceof Blob ? {} : { duplex: 'half' }),
    });
    text = await response.text();
  } catch (error) {
    throw failedCall(request, error);
  }
  if (response.status !== target.successStatus) throw errorFromAnswer(request, response, text);
  const result = v.safeParse(ImportResultSchema, parseJson(text));
  if (!result.success) throw violation(request, response.status, result.issues[0].message);
  return result.output;
}

/**
 * `GET /plants/export`: every plant (or every plant with `tag`) from one snapshot, in ascending id
 * order, as the answer streams in (each validated with StoredPlantSchema, ids exact). `onCursor`
 * gets the event-feed cursor of the snapshot first: follow `events({ after })` from it to keep a
 * copy up to date. Stopping the iteration early ends the request. No timeout (abort with `signal`).
 */
export async function* exportPlants(
  context: ClientContext,
  query: ExportPlantsQueryInput = {},
  options: ExportPlantsOptions = {},
): AsyncGenerator<StoredPlant, void, undefined> {
  const checked = parseInput(operations.exportPlants.query, query);
  const target = operationTarget(context, operations.exportPlants, {});
  if (checked.tag !== undefined) target.url.searchParams.set('tag', checked.tag);
  const request: PlantStoreRequest = { ...target, retryMode: 'idempotent', signal: options.signal };
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    let response: Response;
    try {
      response = await context.transport.fetch(target.url, {
        headers: { Accept: NDJSON_TYPE, Authorization: `Bearer ${context.transport.token}` },
        redirect: 'manual',
        signal: controller.signal,
      });
    } catch (error) {
      throw failedCall(request, error);
    }
    if (response.status !== target.successStatus || response.body === null) {
      throw errorFromAnswer(request, response, await response.text());
    }
    const cursor = response.headers.get(EXPORT_CURSOR_HEADER);
    if (cursor === null) throw violation(request, response.status, `no ${EXPORT_CURSOR_HEADER} header`);
    options.onCursor?.(cursor);
    let lineNumber = 0;
    try {
      for await (const line of linesOf(response.body)) {
        lineNumber += 1;
        const result = v.safeParse(StoredPlantSchema, parseJson(line));
        if (!result.success)
          throw violation(request, response.status, `line ${lineNumber}: ${result.issues[0].message}`);
        yield result.output;
      }
    } catch (error) {
      throw error instanceof PlantStoreError ? error : failedCall(request, error);
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    // Stopped early (or failed): the answer is not read further, and the connection goes.
    controller.abort();
  }
}

/** The source as chunks of NDJSON bytes. */
async function bytesOf(source: ImportSource): Promise<AsyncIterable<Uint8Array>> {
  if (typeof source === 'string') return (await openFile(source)).stream() as unknown as AsyncIterable<Uint8Array>;
  if (source instanceof Blob) return source.stream() as unknown as AsyncIterable<Uint8Array>;
  return chunksOf(source as AsyncIterable<unknown> | Iterable<unknown>);
}

/** A file as a Blob, in Node (`fs.openAsBlob`): the only place the client reaches for a Node module. */
async function openFile(path: string): Promise<Blob> {
  // A specifier the bundlers of browser code do not follow: this runs only when a path is given.
  const fs = (await import(['node', 'fs'].join(':'))) as { openAsBlob(path: string): Promise<Blob> };
  return await fs.openAsBlob(path);
}

/** Bytes and text pass as they are; plants are validated and written one a line. */
async function* chunksOf(items: AsyncIterable<unknown> | Iterable<unknown>): AsyncGenerator<Uint8Array> {
  let lines: string[] = [];
  for await (const item of items) {
    if (item instanceof Uint8Array) {
      yield item;
    } else if (typeof item === 'string') {
      yield encoder.encode(item);
    } else {
      lines.push(stringifyJson(parseInput(NewPlantSchema, item)));
      if (lines.length === 1_000) {
        yield encoder.encode(`${lines.join('\n')}\n`);
        lines = [];
      }
    }
  }
  if (lines.length > 0) yield encoder.encode(`${lines.join('\n')}\n`);
}

async function* countingBytes(
  chunks: AsyncIterable<Uint8Array>,
  onProgress: ImportPlantsOptions['onProgress'],
): AsyncGenerator<Uint8Array> {
  let bytes = 0;
  let lines = 0;
  for await (const chunk of chunks) {
    bytes += chunk.length;
    if (onProgress !== undefined) {
      for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) lines += 1;
      onProgress({ bytes, lines });
    }
    yield chunk;
  }
}

function readableOf(chunks: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel(reason) {
      await iterator.return?.(reason);
    },
  });
}

/** The non-blank lines of a stream of UTF-8 bytes. */
async function* linesOf(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let partial = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    const text = partial + decoder.decode(chunk, { stream: true });
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line !== '') yield line;
  }
  const rest = partial + decoder.decode();
  if (rest !== '') yield rest;
}

function failedCall(request: PlantStoreRequest, cause: unknown): PlantStoreError {
  if (cause instanceof PlantStoreError) return cause;
  if (request.signal?.aborted) return abortedError(request, cause);
  const why =
    cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
  return new PlantStoreError({
    kind: 'network',
    status: 0,
    error: 0,
    message: `${describeRequest(request)} failed: ${why}`,
    cause,
  });
}

function violation(request: PlantStoreRequest, status: number, problem: string): PlantStoreError {
  return new PlantStoreError({
    kind: 'invalid-response',
    status,
    error: 0,
    message: `${describeRequest(request)} answered ${status} with a body that breaks the contract: ${problem}`,
  });
}
