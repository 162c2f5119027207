import type { VersionedStoredPlant } from '@plant-store/client';
import { useEffect, useState } from 'preact/hooks';
import { ConfirmButton } from '../components/confirm-button.js';
import { Done, Loading, ProblemNotice } from '../components/feedback.js';
import { useAction, useLoad } from '../components/use-call.js';
import { PLANT_ID_HINT, readPlantId } from '../plant-id.js';
import { hrefOf, navigate } from '../route.js';

/** One plant: its fields and version; change it or delete it, each only while it has the version shown (If-Match). */
export function PlantDetailScreen({ idText }: { readonly idText: string }) {
  const id = readPlantId(idText);
  if (id === null) {
    return (
      <>
        <h1>Plant</h1>
        <p class="notice" role="alert">
          “{idText}” is no plant id: an id is {PLANT_ID_HINT}.
        </p>
        <a href={hrefOf('plants')}>Back to plants</a>
      </>
    );
  }
  return <PlantDetail id={id} />;
}

function PlantDetail({ id }: { readonly id: bigint }) {
  const loaded = useLoad((client, signal) => client.getVersionedPlant(id, { signal }), String(id));
  const [current, setCurrent] = useState<VersionedStoredPlant | null>(null);
  // Kept here: the form below starts afresh with each version.
  const [done, setDone] = useState<string | null>(null);
  useEffect(() => setCurrent(loaded.state === 'ready' ? loaded.value : null), [loaded.state]);
  return (
    <>
      <h1>Plant {String(id)}</h1>
      <p>
        <a href={hrefOf('plants')}>Back to plants</a>
      </p>
      {loaded.state === 'loading' && <Loading what="the plant" />}
      {loaded.state === 'failed' && <ProblemNotice problem={loaded.problem} />}
      {current !== null && (
        <EditPlant
          key={String(current.version)}
          versioned={current}
          onChanged={(changed) => {
            setCurrent(changed);
            setDone(`Saved: version ${changed.version}.`);
          }}
          onReload={() => {
            setDone(null);
            loaded.reload();
          }}
        />
      )}
      <Done message={done} />
    </>
  );
}

function EditPlant(props: {
  readonly versioned: VersionedStoredPlant;
  readonly onChanged: (versioned: VersionedStoredPlant) => void;
  readonly onReload: () => void;
}) {
  const { plant, version } = props.versioned;
  const [name, setName] = useState(plant.name);
  const [tag, setTag] = useState(plant.tag ?? '');
  const action = useAction();
  const save = async (event: Event) => {
    event.preventDefault();
    await action.run(async (client) => {
      const patch = { name, tag: tag === '' ? null : tag };
      props.onChanged(await client.updatePlant(plant.id, patch, { ifMatch: version }));
    });
  };
  const remove = () =>
    action.run(async (client) => {
      await client.deletePlant(plant.id, { ifMatch: version });
      navigate('plants');
    });
  return (
    <section aria-labelledby="plant-fields">
      <h2 id="plant-fields">{plant.name}</h2>
      <dl class="facts">
        <dt>Id</dt>
        <dd class="id">{String(plant.id)}</dd>
        <dt>Tag</dt>
        <dd>{plant.tag ?? '(none)'}</dd>
        <dt>Version</dt>
        <dd data-testid="plant-version">{String(version)}</dd>
      </dl>
      <form onSubmit={save}>
        <label for="edit-name">Name</label>
        <input id="edit-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <label for="edit-tag">Tag (empty removes it)</label>
        <input id="edit-tag" value={tag} onInput={(e) => setTag(e.currentTarget.value)} />
        <div class="actions">
          <button type="submit" disabled={action.busy}>
            Save changes
          </button>
          <ConfirmButton
            label="Delete"
            confirmLabel="Confirm delete"
            what={`plant ${plant.id}`}
            busy={action.busy}
            onConfirm={remove}
          />
          <button type="button" onClick={props.onReload}>
            Reload
          </button>
        </div>
      </form>
      <p class="hint">
        Saving and deleting apply only while the plant is at version {String(version)}: if someone changed it since, the
        service refuses and you can reload.
      </p>
      <ProblemNotice problem={action.problem} />
    </section>
  );
}
