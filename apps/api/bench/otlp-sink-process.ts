import { join } from 'node:path';
import { isMessage } from './ceilings/ceiling-protocol.js';
import type { SinkCountRequest, SinkCounts, SinkReady } from './otlp-sink/sink-protocol.js';
import { nextMessage, type StartedProcess, startProcess } from './started-process.js';

export interface OtlpSink extends StartedProcess {
  /** `http://127.0.0.1:<port>`: the service's OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  /** What it has received since it started. */
  counts(): Promise<SinkCounts>;
}

/** The OTLP sink (see otlp-sink/otlp-sink.ts), listening; TypeScript run through tsx like the ceilings. */
export async function startOtlpSink(options: {
  readonly apiRoot: string;
  readonly env: Readonly<Record<string, string>>;
  readonly logFile: string;
}): Promise<OtlpSink> {
  const started = startProcess(
    ['--import', 'tsx', join(options.apiRoot, 'bench/otlp-sink/otlp-sink.ts')],
    { cwd: options.apiRoot, env: options.env, logFile: options.logFile },
    true,
  );
  try {
    const ready = await nextMessage(started, isMessage<SinkReady>('ready'), 'the OTLP sink');
    return {
      ...started,
      url: `http://127.0.0.1:${ready.port}`,
      async counts() {
        const answer = nextMessage(started, isMessage<SinkCounts>('counts'), 'the OTLP sink');
        const request: SinkCountRequest = { type: 'count' };
        started.child.send(request);
        return answer;
      },
    };
  } catch (error) {
    await started.stop();
    throw new Error(`${String(error)} (log: ${options.logFile})`);
  }
}
