/** Where a progress bar is drawn: standard error, which is a terminal or not. */
export interface ProgressOutput {
  readonly isTTY?: boolean | undefined;
  write(text: string): unknown;
}

export interface Progress {
  /** Rows done so far, and bytes of `totalBytes` when known. */
  update(rows: number, bytes: number): void;
  /** Ends the bar (its line is cleared); a second call does nothing. */
  done(): void;
}

/** How often the bar is drawn again, at most. */
const REDRAW_MS = 100;
const WIDTH = 24;

/**
 * A one-line progress bar on a terminal: rows, rows a second and, when the total size is known,
 * a bar and the time left (from the bytes sent and the rate so far). Not a terminal (a pipe, a CI
 * log): draws nothing.
 */
export function createProgress(output: ProgressOutput, { totalBytes }: { readonly totalBytes?: number }): Progress {
  if (output.isTTY !== true) return { update() {}, done() {} };
  const started = performance.now();
  let drawnAt = Number.NEGATIVE_INFINITY;
  let finished = false;
  return {
    update(rows, bytes) {
      const now = performance.now();
      if (finished || now - drawnAt < REDRAW_MS) return;
      drawnAt = now;
      output.write(`\r\x1b[2K${describeProgress(rows, bytes, (now - started) / 1_000, totalBytes)}`);
    },
    done() {
      if (finished) return;
      finished = true;
      output.write('\r\x1b[2K');
    },
  };
}

/** `[#####-----]  42%  120,000 rows  35,000 rows/s  time left 0:07` (without a total: rows and rate). */
export function describeProgress(rows: number, bytes: number, seconds: number, totalBytes?: number): string {
  const rate = seconds > 0 ? Math.round(rows / seconds) : 0;
  const counts = `${rows.toLocaleString('en-US')} rows  ${rate.toLocaleString('en-US')} rows/s`;
  if (totalBytes === undefined || totalBytes === 0) return counts;
  const share = Math.min(1, bytes / totalBytes);
  const filled = Math.round(share * WIDTH);
  const left = share > 0 ? (seconds / share) * (1 - share) : Number.NaN;
  return `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${Math.floor(share * 100)
    .toString()
    .padStart(3)}%  ${counts}  time left ${formatDuration(left)}`;
}

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--:--';
  const whole = Math.round(seconds);
  const minutes = Math.floor(whole / 60);
  return `${minutes}:${String(whole % 60).padStart(2, '0')}`;
}
