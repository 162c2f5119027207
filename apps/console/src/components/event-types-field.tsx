import { WEBHOOK_EVENT_TYPES } from '@plant-store/schema';

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The event types a subscription gets, one checkbox each (none checked: the API refuses, and says why). */
export function EventTypesField(props: {
  readonly value: readonly WebhookEventType[];
  readonly onChange: (next: WebhookEventType[]) => void;
}) {
  return (
    <fieldset>
      <legend>Event types</legend>
      {WEBHOOK_EVENT_TYPES.map((type) => (
        <label key={type} class="check">
          <input
            type="checkbox"
            checked={props.value.includes(type)}
            onChange={(event) => {
              const checked = event.currentTarget.checked;
              props.onChange(
                WEBHOOK_EVENT_TYPES.filter((known) => (known === type ? checked : props.value.includes(known))),
              );
            }}
          />{' '}
          {type}
        </label>
      ))}
    </fieldset>
  );
}
