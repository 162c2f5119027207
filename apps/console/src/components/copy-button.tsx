import { useState } from 'preact/hooks';

/** Copies `text` (a secret shown once) to the clipboard, and says whether it could. */
export function CopyButton({ text, label }: { readonly text: string; readonly label: string }) {
  const [copied, setCopied] = useState<'no' | 'yes' | 'failed'>('no');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <span class="copy">
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span role="status" class="copy-result">
        {copied === 'yes' ? 'Copied.' : copied === 'failed' ? 'Copy failed: select the text and copy it.' : ''}
      </span>
    </span>
  );
}
