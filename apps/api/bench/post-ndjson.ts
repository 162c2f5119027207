import { request as httpRequest } from 'node:http';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * POSTs `body` as NDJSON (an import) with node:http and reads the whole answer. Not fetch: fetch
 * gives up on an answer that takes more than 5 minutes to begin (undici's headers timeout), and
 * the final statement of an import of millions of plants takes about that long.
 */
export function postNdjson(url: string, token: string, body: Readable): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    });
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', reject);
    });
    request.on('error', reject);
    pipeline(body, request).catch(reject);
  });
}
