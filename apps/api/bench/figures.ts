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

/** CPU microseconds per request, whole: `54`; `-` where not measured. */
export function formatMicros(value: number | null): string {
  return value === null || !Number.isFinite(value) ? '-' : String(Math.round(value));
}

/** Bytes as whole MiB (what /proc calls kB is KiB). */
export function formatMegabytes(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0);
}

/** server/generator/machine CPU in percent of one core: `98/95/196`, `-` where not measured. */
export function formatCpu(cpu: CpuShare): string {
  return [cpu.server, cpu.loadGenerator, cpu.machine].map((value) => (value === null ? '-' : String(value))).join('/');
}

/** A table column: its title and which side its cells line up on. */
export type Column = readonly [title: string, align: 'left' | 'right'];

/**
 * Left- or right-aligned columns two spaces apart, a dashed line under the titles; a blank line
 * before each row `breakBefore` names (to keep groups of rows apart).
 */
export function formatColumns(
  columns: readonly Column[],
  rows: readonly (readonly string[])[],
  breakBefore: (index: number) => boolean = () => false,
): string {
  const widths = columns.map(([title], index) => Math.max(title.length, ...rows.map((row) => row[index]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, index) => {
        const width = widths[index] ?? 0;
        return columns[index]?.[1] === 'left' ? cell.padEnd(width) : cell.padStart(width);
      })
      .join('  ')
      .trimEnd();
  const separator = widths.map((width) => '-'.repeat(width)).join('  ');
  const body = rows.flatMap((row, index) => (breakBefore(index) ? ['', line(row)] : [line(row)]));
  return [line(columns.map(([title]) => title)), separator, ...body].join('\n');
}
