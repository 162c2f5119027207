import { afterEach } from 'vitest';
import { type ContractCheck, loadContract } from './openapi-contract.js';

/**
 * `fetch` for HTTP tests: every response is checked against the OpenAPI document that the
 * same service serves at /openapi.json (loaded once per origin), or for a request that sends
 * `Plant-Store-Int64: string` at /openapi.json?int64=string. A mismatch is thrown and
 * also recorded, so that it fails the test even where a caller (a retrying client) would
 * swallow the throw: see failOnContractViolations.
 */
const contracts = new Map<string, Promise<ContractCheck>>();
const violations: string[] = [];

/** Static files of the docs page and the console: not API operations. */
const UNCHECKED_PATHS = /^\/(?:docs|console)\//;

function contractFor(origin: string, int64Strings: boolean): Promise<ContractCheck> {
  const documentUrl = new URL(int64Strings ? '/openapi.json?int64=string' : '/openapi.json', origin).href;
  let contract = contracts.get(documentUrl);
  if (!contract) {
    contract = (async () => {
      const response = await fetch(documentUrl);
      if (!response.ok) throw new Error(`${documentUrl} answered ${response.status}`);
      return loadContract(await response.json());
    })();
    // A failed load is not kept: the next response from that origin tries again.
    contract.catch(() => contracts.delete(documentUrl));
    contracts.set(documentUrl, contract);
  }
  return contract;
}

export const checkedFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const response = await fetch(request);
  const url = new URL(request.url);
  if (UNCHECKED_PATHS.test(url.pathname)) return response;
  const text = await response.clone().text();
  const contract = await contractFor(url.origin, request.headers.get('plant-store-int64') === 'string');
  const problems = contract.check(request.method, request.url, {
    status: response.status,
    headers: response.headers,
    text,
  });
  if (problems.length > 0) {
    violations.push(...problems);
    throw new Error(`response does not match the OpenAPI document:\n${problems.join('\n')}`);
  }
  return response;
};

/** Call once per test file: every test fails that received a response the document does not describe. */
export function failOnContractViolations(): void {
  afterEach(() => {
    const found = violations.splice(0);
    if (found.length > 0) throw new Error(`responses did not match the OpenAPI document:\n${found.join('\n')}`);
  });
}
