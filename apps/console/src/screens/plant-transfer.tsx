import { stringifyJson } from '@plant-store/schema';
import { useState } from 'preact/hooks';
import { Done, ProblemNotice } from '../components/feedback.js';
import { useAction } from '../components/use-call.js';

/** gzip's first two bytes: a `.ndjson.gz` goes as it is, with `Content-Encoding: gzip`. */
async function isGzip(file: Blob): Promise<boolean> {
  const head = new Uint8Array(await file.slice(0, 2).arrayBuffer());
  return head[0] === 0x1f && head[1] === 0x8b;
}

/** `POST /plants/import`: a file uploaded as it is (NDJSON, or NDJSON gzip), all or nothing. */
export function ImportPlants({ onImported }: { readonly onImported: () => void }) {
  const [file, setFile] = useState<File | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="import-plants" class="panel">
      <h2 id="import-plants">Import</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setDone(null);
          if (file === null) return;
          const imported = await action.run(async (client) => {
            const result = await client.importPlants(file, { gzipped: await isGzip(file) });
            setDone(
              `Imported ${file.name}: ${result.lines} ${result.lines === 1 ? 'line' : 'lines'}, ${result.stored} stored, ${result.alreadyStored} already stored.`,
            );
          });
          if (imported) onImported();
        }}
      >
        <label for="import-file">NDJSON file (.ndjson or .ndjson.gz)</label>
        <input
          id="import-file"
          type="file"
          required
          accept=".ndjson,.gz,.jsonl,application/x-ndjson,application/gzip"
          aria-describedby="import-hint"
          onChange={(event) => setFile(event.currentTarget.files?.[0] ?? null)}
        />
        <p id="import-hint" class="hint">
          One plant a line. All or nothing: a line the service refuses stores none, and says which.
        </p>
        <button type="submit" disabled={action.busy || file === null}>
          Import plants
        </button>
      </form>
      <ProblemNotice problem={action.problem} />
      <Done message={done} />
    </section>
  );
}

/**
 * `GET /plants/export` into a file the browser downloads: every plant (with the tag filter, those
 * with its tag) from one snapshot, one a line, ids exact. Kept in a Blob until saved.
 */
export function ExportPlants({ tag }: { readonly tag: string | undefined }) {
  const [done, setDone] = useState<string | null>(null);
  const [link, setLink] = useState<{ readonly href: string; readonly name: string } | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="export-plants" class="panel">
      <h2 id="export-plants">Export</h2>
      <p class="hint">{tag === undefined ? 'Every plant' : `The plants tagged “${tag}”`}, as NDJSON.</p>
      <button
        type="button"
        disabled={action.busy}
        onClick={async () => {
          setDone(null);
          if (link !== null) URL.revokeObjectURL(link.href);
          setLink(null);
          await action.run(async (client) => {
            const lines: string[] = [];
            for await (const plant of client.exportPlants(tag === undefined ? {} : { tag })) {
              lines.push(`${stringifyJson(plant)}\n`);
            }
            const name = `plants${tag === undefined ? '' : `-${tag.replace(/[^A-Za-z0-9._-]+/g, '_')}`}.ndjson`;
            const href = URL.createObjectURL(new Blob(lines, { type: 'application/x-ndjson' }));
            setLink({ href, name });
            setDone(`Exported ${lines.length} ${lines.length === 1 ? 'plant' : 'plants'}.`);
            // Saves it at once; the link stays for a second try.
            const anchor = document.createElement('a');
            anchor.href = href;
            anchor.download = name;
            anchor.click();
          });
        }}
      >
        Export plants
      </button>
      <ProblemNotice problem={action.problem} />
      <Done message={done} />
      {link !== null && (
        <p>
          <a href={link.href} download={link.name}>
            Save {link.name} again
          </a>
        </p>
      )}
    </section>
  );
}
