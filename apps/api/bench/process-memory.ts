import { readFile } from 'node:fs/promises';

export interface ProcessMemory {
  /** Resident set size now (VmRSS). */
  readonly rssBytes: number;
  /** The highest RSS over the process's whole life (VmHWM): monotone, so a peak per process. */
  readonly peakRssBytes: number;
}

/** Reads /proc/<pid>/status (Linux); undefined where there is no /proc or the process is gone. */
export async function readProcessMemory(pid: number): Promise<ProcessMemory | undefined> {
  let status: string;
  try {
    status = await readFile(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const rss = kilobytes(status, 'VmRSS');
  const peak = kilobytes(status, 'VmHWM');
  return rss === undefined || peak === undefined ? undefined : { rssBytes: rss * 1024, peakRssBytes: peak * 1024 };
}

function kilobytes(status: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

export interface RssSampler {
  /** Stops sampling; the highest RSS seen since start (undefined if never readable). */
  stop(): Promise<number | undefined>;
}

/** Samples a process's RSS while one point runs: VmHWM cannot tell one point from the next. */
export function sampleRss(pid: number, intervalMs = 200): RssSampler {
  let peak: number | undefined;
  const sample = async () => {
    const memory = await readProcessMemory(pid);
    if (memory !== undefined) peak = Math.max(peak ?? 0, memory.rssBytes);
  };
  void sample();
  const timer = setInterval(() => void sample(), intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await sample();
      return peak;
    },
  };
}
