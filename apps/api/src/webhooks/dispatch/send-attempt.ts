import type { ClaimedDelivery } from '@plant-store/db';
import type { Agent } from 'undici';
import type { Logger } from '../../logger.js';
import type { DeliveryTracing } from '../../tracing/tracing.js';
import type { postWebhook as PostWebhook, PostWebhookResult } from '../safe-http.js';
import type { signWebhook as SignWebhook } from '../sign.js';
import type { ResolveHost } from '../url-policy.js';
import { describeClaim } from './describe-claim.js';

export interface AttemptSenderOptions {
  readonly allowPrivateNetworks: boolean;
  /** One attempt's deadline: connect, send, response headers and the capped body read. */
  readonly timeoutMs: number;
  /** Default: postWebhook's. */
  readonly maxResponseBytes?: number | undefined;
  /** Default: the system resolver. */
  readonly resolve?: ResolveHost | undefined;
  /** A span per attempt, its traceparent sent along. Absent: none. */
  readonly tracing?: DeliveryTracing | undefined;
  /** Aborts every attempt under way (close() after the drain time). */
  readonly signal: AbortSignal;
  readonly log: Logger;
}

export interface AttemptSender {
  /** Signs the claimed delivery for `at` and POSTs it; how it went (rejects only if the HTTP client cannot load). */
  send(claimed: ClaimedDelivery, at: Date): Promise<PostWebhookResult>;
  /** Closes the HTTP client's connections, if it was ever loaded. */
  close(): Promise<void>;
}

/** What sends an attempt: the HTTP client's agent and functions, and the signer. */
interface Sender {
  readonly agent: Agent;
  readonly postWebhook: typeof PostWebhook;
  readonly signWebhook: typeof SignWebhook;
}

/**
 * Makes the HTTP call of one attempt: signs it afresh (the attempt's own timestamp), starts its
 * span, POSTs it through the agent that refuses private addresses, ends the span. Owns the HTTP
 * client, loaded with the first attempt: a service with no subscription never pays for it (undici
 * alone is about 20 MB of memory).
 */
export function createAttemptSender(options: AttemptSenderOptions): AttemptSender {
  const { timeoutMs, tracing, signal, log } = options;
  let sender: Promise<Sender> | undefined;
  const loadSender = () => {
    sender ??= loadSenderModules(options);
    return sender;
  };
  const postOptions = {
    timeoutMs,
    signal,
    ...(options.maxResponseBytes === undefined ? {} : { maxResponseBytes: options.maxResponseBytes }),
  };

  return {
    async send(claimed, at) {
      const { agent, postWebhook, signWebhook } = await loadSender();
      let headers: Record<string, string>;
      try {
        headers = signWebhook(claimed.secrets, claimed.eventId, claimed.payload, at);
      } catch (error) {
        // A corrupt secret. Not logged: the error could quote it.
        log.error(
          { ...describeClaim(claimed), errorType: error instanceof Error ? error.name : typeof error },
          'webhook signing failed',
        );
        return { statusCode: null, latencyMs: 0, error: 'could not sign the request' };
      }
      const span = tracing?.start(claimed, headers);
      const result = await postWebhook(agent, claimed.url, claimed.payload, headers, postOptions);
      if (span !== undefined) tracing?.end(span, result);
      return result;
    },
    async close() {
      if (sender) await (await sender).agent.destroy().catch(() => {});
    },
  };
}

async function loadSenderModules({ allowPrivateNetworks, timeoutMs, resolve }: AttemptSenderOptions): Promise<Sender> {
  const [http, sign] = await Promise.all([import('../safe-http.js'), import('../sign.js')]);
  const agent = http.createSafeAgent({ allowPrivateNetworks, timeoutMs, ...(resolve ? { resolve } : {}) });
  return { agent, postWebhook: http.postWebhook, signWebhook: sign.signWebhook };
}
