import type { CpuShare } from './cpu-usage.js';

/** Requests or inserts per second, whole and grouped: 12,345. */
export function formatRate(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** Milliseconds to about three significant digits. */
export function formatMs(value: number): string {
  if (!Number.isFinite(value)) return '-';
  return value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0);
}

/** Bytes as whole MiB (what /proc calls kB is KiB). */
export function formatMegabytes(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0);
}

/** server/generator/machine CPU in percent of one core: `98/95/196`, `-` where not measured. */
export function formatCpu(cpu: CpuShare): string {
  return [cpu.server, cpu.loadGenerator, cpu.machine].map((value) => (value === null ? '-' : String(value))).join('/');
}
