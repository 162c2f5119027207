// Every Markdown link in the repository's docs stays inside the repository and points at a file
// that exists, and at a heading of it that exists when it names one (`file.md#anchor`, `#anchor`).
// The deploy files (compose.yaml, deploy/**) point readers at docs by path the same way
// (`docs/operations.md#deploying-it`): those are checked too. Docs must stand alone: a reader with
// a clone has them all.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const tracked = (...patterns) =>
  execFileSync('git', ['ls-files', ...patterns], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
const files = tracked('*.md', ':!:**/CHANGELOG.md');
const problems = [];

/** The anchors GitHub gives a Markdown file's headings (github-slugger's rules), outside code blocks. */
const anchorCache = new Map();
function anchorsOf(absolute) {
  let anchors = anchorCache.get(absolute);
  if (anchors) return anchors;
  anchors = new Set();
  const seen = new Map();
  const text = readFileSync(absolute, 'utf8').replace(/```[\s\S]*?```/g, '');
  for (const [, heading] of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  anchorCache.set(absolute, anchors);
  return anchors;
}

/** Checks `target` (a path, optionally with #anchor) written in `file`, relative to `base`. */
function check(file, target, base) {
  const [path, anchor] = target.split('#');
  const absolute = path === '' ? join(root, file) : resolve(base, decodeURIComponent(path));
  if (!absolute.startsWith(root)) problems.push(`${file}: link leaves the repository: ${target}`);
  else if (!existsSync(absolute)) problems.push(`${file}: no such file: ${relative(root, absolute)}`);
  else if (anchor !== undefined && absolute.endsWith('.md') && !anchorsOf(absolute).has(anchor)) {
    problems.push(`${file}: no heading for #${anchor} in ${relative(root, absolute)}`);
  }
}

for (const file of files) {
  const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      problems.push(`${file}: link leaves the repository: ${target}`);
      continue;
    }
    check(file, target, dirname(join(root, file)));
  }
}

const deployFiles = tracked('compose.yaml', 'deploy');
for (const file of deployFiles) {
  const text = readFileSync(join(root, file), 'utf8');
  for (const [, target] of text.matchAll(/(?<![\w/.-])((?:docs\/[\w.-]+|README)\.md(?:#[\w-]+)?)/g)) {
    check(file, target, root);
  }
  // A section named in prose ("the README's Traces section") cannot be checked: name the file.
  for (const [mention] of text.matchAll(/the README's [^\n]*?(?:section|table)/g)) {
    problems.push(`${file}: "${mention}": point at the doc by path and anchor (docs/....md#...)`);
  }
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(
  `doc links: ${files.length} Markdown files and ${deployFiles.length} deploy files, every link inside the repository, every anchor a heading`,
);
