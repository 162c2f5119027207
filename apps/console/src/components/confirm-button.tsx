import { useState } from 'preact/hooks';

/**
 * A destructive action asked twice: the first press arms it ("Delete"), the second does it
 * ("Confirm delete"), Cancel disarms. No window.confirm: keyboard and screen readers see both.
 */
export function ConfirmButton(props: {
  readonly label: string;
  readonly confirmLabel: string;
  readonly busy: boolean;
  readonly onConfirm: () => void;
  /** Names what is acted on, for a screen reader (`Delete plant 42`). */
  readonly what: string;
}) {
  const [armed, setArmed] = useState(false);
  if (!armed) {
    return (
      <button type="button" class="danger" aria-label={`${props.label} ${props.what}`} onClick={() => setArmed(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <span class="confirm">
      <button
        type="button"
        class="danger"
        disabled={props.busy}
        aria-label={`${props.confirmLabel} ${props.what}`}
        onClick={() => {
          setArmed(false);
          props.onConfirm();
        }}
      >
        {props.confirmLabel}
      </button>
      <button type="button" onClick={() => setArmed(false)}>
        Cancel
      </button>
    </span>
  );
}
