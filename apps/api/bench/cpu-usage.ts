import { readFile } from 'node:fs/promises';

/** Linux reports CPU time in clock ticks; USER_HZ is 100 on every mainstream kernel build. */
const TICKS_PER_SECOND = 100;

/**
 * CPU used over one measured window, in percent of one core (200 = two cores fully busy): it
 * shows which side saturated, the process under test, the load generator, or the whole machine.
 */
export interface CpuShare {
  /** The process answering: the service, or the bare HTTP server; null for raw inserts. */
  readonly server: number | null;
  /** The process making the load: this one for HTTP (autocannon), the insert loop's for raw inserts. */
  readonly loadGenerator: number | null;
  /** All processes on the machine, PostgreSQL and other work included. */
  readonly machine: number | null;
  /** CPU seconds the server used over the window (for CPU per request), null where not measured. */
  readonly serverSeconds: number | null;
  /** CPU seconds the load generator used over the window. */
  readonly generatorSeconds: number | null;
}

export interface CpuWindow {
  stop(): Promise<CpuShare>;
}

/** Starts measuring; `serverPid`/`generatorPid` undefined means "not this kind of point" or "this process". */
export async function startCpuWindow(pids: {
  readonly serverPid: number | undefined;
  readonly generatorPid: number | undefined;
}): Promise<CpuWindow> {
  const started = performance.now();
  const self = process.cpuUsage();
  const [server, generator, machine] = await Promise.all([
    pids.serverPid === undefined ? undefined : processCpuSeconds(pids.serverPid),
    pids.generatorPid === undefined ? undefined : processCpuSeconds(pids.generatorPid),
    machineCpuSeconds(),
  ]);
  return {
    async stop() {
      const [serverEnd, generatorEnd, machineEnd] = await Promise.all([
        pids.serverPid === undefined ? undefined : processCpuSeconds(pids.serverPid),
        pids.generatorPid === undefined ? undefined : processCpuSeconds(pids.generatorPid),
        machineCpuSeconds(),
      ]);
      const seconds = (performance.now() - started) / 1000;
      const share = (from: number | undefined, to: number | undefined) =>
        from === undefined || to === undefined ? null : Math.round(((to - from) / seconds) * 100);
      const selfUsed = process.cpuUsage(self);
      const used = (from: number | undefined, to: number | undefined) =>
        from === undefined || to === undefined ? null : to - from;
      const serverSeconds = used(server, serverEnd);
      const generatorSeconds =
        pids.generatorPid === undefined ? (selfUsed.user + selfUsed.system) / 1e6 : used(generator, generatorEnd);
      return {
        server: share(server, serverEnd),
        loadGenerator: generatorSeconds === null ? null : Math.round((generatorSeconds / seconds) * 100),
        machine: share(machine, machineEnd),
        serverSeconds,
        generatorSeconds,
      };
    },
  };
}

/** utime + stime of a process, from /proc/<pid>/stat (fields 14 and 15). */
export async function processCpuSeconds(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

/** Busy CPU time of the whole machine (all cores, idle and iowait excluded), from /proc/stat. */
async function machineCpuSeconds(): Promise<number | undefined> {
  try {
    const stat = await readFile('/proc/stat', 'utf8');
    const [user, nice, system, , , irq, softirq, steal] = (stat.split('\n')[0] ?? '')
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    const busy = [user, nice, system, irq, softirq, steal].reduce<number>((sum, value) => sum + (value ?? 0), 0);
    return Number.isFinite(busy) ? busy / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}
