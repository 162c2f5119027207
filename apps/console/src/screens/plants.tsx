import type { StoredPlant } from '@plant-store/client';
import { useState } from 'preact/hooks';
import { Done, Empty, Loading, ProblemNotice } from '../components/feedback.js';
import { Pager } from '../components/pager.js';
import { ScrollRegion } from '../components/scroll-region.js';
import { useAction, useLoad } from '../components/use-call.js';
import { usePages } from '../components/use-pages.js';
import { PLANT_ID_HINT, readPlantId } from '../plant-id.js';
import { hrefOf, navigate } from '../route.js';
import { ExportPlants, ImportPlants } from './plant-transfer.js';

const PAGE_SIZE = 20;

/** Browse (paged, by tag), look one up by id, create, import a file, export to one. */
export function PlantsScreen() {
  const [tag, setTag] = useState<string | undefined>(undefined);
  const pages = usePages<bigint>();
  const listing = useLoad(
    (client, signal) =>
      client.listPlants(
        {
          limit: PAGE_SIZE,
          ...(tag === undefined ? {} : { tag }),
          ...(pages.after === undefined ? {} : { after: pages.after }),
        },
        { signal },
      ),
    `${tag ?? ''}|${pages.after ?? ''}`,
  );
  return (
    <>
      <h1>Plants</h1>
      <div class="panels">
        <LookUpPlant />
        <CreatePlant onCreated={listing.reload} />
        <ImportPlants onImported={listing.reload} />
        <ExportPlants tag={tag} />
      </div>
      <section aria-labelledby="browse-plants">
        <h2 id="browse-plants">Browse</h2>
        <TagFilter
          tag={tag}
          onChange={(next) => {
            setTag(next);
            pages.reset();
          }}
        />
        {listing.state === 'loading' && <Loading what="plants" />}
        {listing.state === 'failed' && <ProblemNotice problem={listing.problem} />}
        {listing.state === 'ready' && (
          <>
            {listing.value.plants.length === 0 ? (
              <Empty>{tag === undefined ? 'No plants yet.' : `No plants tagged “${tag}”.`}</Empty>
            ) : (
              <PlantTable plants={listing.value.plants} />
            )}
            <Pager
              label="Plant pages"
              page={pages.page}
              hasPrevious={pages.hasPrevious}
              hasNext={listing.value.next !== null}
              onPrevious={pages.previous}
              onNext={() => {
                const after = listing.value.next?.after;
                if (after !== undefined) pages.next(after);
              }}
            />
          </>
        )}
      </section>
    </>
  );
}

function PlantTable({ plants }: { readonly plants: readonly StoredPlant[] }) {
  return (
    <ScrollRegion label="Plants">
      <table>
        <caption class="visually-hidden">Plants, by id</caption>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Name</th>
            <th scope="col">Tag</th>
          </tr>
        </thead>
        <tbody>
          {plants.map((plant) => (
            <tr key={String(plant.id)}>
              <td class="id">
                <a href={hrefOf('plants', String(plant.id))}>{String(plant.id)}</a>
              </td>
              <td>{plant.name}</td>
              <td>{plant.tag ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}

function TagFilter(props: { readonly tag: string | undefined; readonly onChange: (tag: string | undefined) => void }) {
  const [text, setText] = useState(props.tag ?? '');
  return (
    <form
      class="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        props.onChange(text === '' ? undefined : text);
      }}
    >
      <label for="tag-filter">Tag</label>
      <input id="tag-filter" value={text} onInput={(event) => setText(event.currentTarget.value)} />
      <button type="submit">Filter</button>
      {props.tag !== undefined && (
        <button
          type="button"
          onClick={() => {
            setText('');
            props.onChange(undefined);
          }}
        >
          Show all
        </button>
      )}
    </form>
  );
}

function LookUpPlant() {
  const [text, setText] = useState('');
  const [invalid, setInvalid] = useState(false);
  return (
    <section aria-labelledby="look-up-plant" class="panel">
      <h2 id="look-up-plant">Look up by id</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const id = readPlantId(text);
          setInvalid(id === null);
          if (id !== null) navigate('plants', String(id));
        }}
      >
        <label for="lookup-id">Plant id</label>
        <input
          id="lookup-id"
          inputMode="numeric"
          value={text}
          aria-invalid={invalid}
          aria-describedby={invalid ? 'lookup-id-error' : undefined}
          onInput={(event) => setText(event.currentTarget.value)}
        />
        {invalid && (
          <p id="lookup-id-error" class="notice" role="alert">
            The id must be {PLANT_ID_HINT}.
          </p>
        )}
        <button type="submit">Open</button>
      </form>
    </section>
  );
}

function CreatePlant({ onCreated }: { readonly onCreated: () => void }) {
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [tag, setTag] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const action = useAction();
  return (
    <section aria-labelledby="create-plant" class="panel">
      <h2 id="create-plant">Create</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setDone(null);
          const plantId = readPlantId(id);
          const created = await action.run(async (client) => {
            if (plantId === null) throw new TypeError(`The id must be ${PLANT_ID_HINT}.`);
            const plant = await client.createPlant({ id: plantId, name, ...(tag === '' ? {} : { tag }) });
            setDone(`Created plant ${plant.id} (${plant.name}).`);
          });
          if (created) {
            setId('');
            setName('');
            setTag('');
            onCreated();
          }
        }}
      >
        <label for="create-id">Id</label>
        <input id="create-id" inputMode="numeric" required value={id} onInput={(e) => setId(e.currentTarget.value)} />
        <label for="create-name">Name</label>
        <input id="create-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <label for="create-tag">Tag (optional)</label>
        <input id="create-tag" value={tag} onInput={(e) => setTag(e.currentTarget.value)} />
        <button type="submit" disabled={action.busy}>
          Create plant
        </button>
      </form>
      <ProblemNotice problem={action.problem} />
      <Done message={done} />
    </section>
  );
}
