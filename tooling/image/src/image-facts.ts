import { type ContainerEngine, runChecked } from './container-engine.js';

/** The image's size in bytes, as the engine reports it (all layers, uncompressed). */
export async function readImageSize(engine: ContainerEngine, image: string): Promise<number> {
  return Number(await runChecked(engine, ['image', 'inspect', '--format', '{{.Size}}', image]));
}

export interface ImageLayer {
  readonly bytes: number;
  /** The instruction that made it, shortened for a report. */
  readonly createdBy: string;
}

/** The image's layers, newest first, as `history` lists them. */
export async function readImageLayers(engine: ContainerEngine, image: string): Promise<ImageLayer[]> {
  const text = await runChecked(engine, ['history', '--no-trunc', '--format', '{{.Size}}\t{{.CreatedBy}}', image]);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [size = '0 B', ...rest] = line.split('\t');
      const createdBy = rest
        .join('\t')
        .replace(/^\/bin\/sh -c (#\(nop\) )?/, '')
        .replace(/\s+/g, ' ');
      return {
        bytes: parseSize(size),
        createdBy: createdBy.length > 100 ? `${createdBy.slice(0, 97)}...` : createdBy,
      };
    });
}

const SIZE_UNITS: Readonly<Record<string, number>> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9 };

/**
 * A size as `history` prints it: `139 MB`, `12.3 kB`, `0 B` (Podman, always in this human form)
 * or `139MB` (Docker); decimal units. NaN-free: anything unreadable counts as 0.
 */
export function parseSize(text: string): number {
  const match = /^([\d.]+)\s*([kmg]?b)$/i.exec(text.trim());
  if (!match) return 0;
  return Math.round(Number(match[1]) * (SIZE_UNITS[match[2]?.toLowerCase() ?? 'b'] ?? 0));
}

export function formatMegabytes(bytes: number): string {
  return (bytes / 1_000_000).toFixed(1);
}
