import type { ComponentChildren } from 'preact';

/**
 * A table that may be wider than a narrow screen: it scrolls sideways inside this region, which
 * the keyboard can focus (and so scroll) and a screen reader names.
 */
export function ScrollRegion({ label, children }: { readonly label: string; readonly children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard (WCAG 2.1.1)
    <section class="table-wrap" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
