/**
 * Moves through a listing one page at a time: the pages seen are a stack of `after` values, so
 * Previous goes back without the service having to list backwards.
 */
export function Pager(props: {
  readonly label: string;
  readonly hasPrevious: boolean;
  readonly hasNext: boolean;
  readonly onPrevious: () => void;
  readonly onNext: () => void;
  readonly page: number;
}) {
  if (!props.hasPrevious && !props.hasNext) return null;
  return (
    <nav class="pager" aria-label={props.label}>
      <button type="button" disabled={!props.hasPrevious} onClick={props.onPrevious}>
        Previous page
      </button>
      <span>Page {props.page}</span>
      <button type="button" disabled={!props.hasNext} onClick={props.onNext}>
        Next page
      </button>
    </nav>
  );
}
