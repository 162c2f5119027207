import type { ComponentChildren } from 'preact';
import type { Problem } from '../api.js';

/** A failure, with the API's message: announced at once to screen readers. */
export function ProblemNotice({ problem }: { readonly problem: Problem | null }) {
  if (problem === null) return null;
  return (
    <p class={`notice notice-${problem.kind}`} role="alert">
      {problem.message}
    </p>
  );
}

export function Loading({ what }: { readonly what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { readonly children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

/** A success to announce (politely). */
export function Done({ message }: { readonly message: string | null }) {
  return (
    <p class="done" role="status">
      {message ?? ''}
    </p>
  );
}
