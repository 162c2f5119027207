// Every Markdown link in the repository's docs stays inside the repository and points at a file
// that exists (anchors are not checked). Docs must stand alone: a reader with a clone has them all.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');
const files = execFileSync('git', ['ls-files', '*.md', ':!:**/CHANGELOG.md'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter(Boolean);
const problems = [];
for (const file of files) {
  const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) {
      problems.push(`${file}: link leaves the repository: ${target}`);
      continue;
    }
    const path = target.split('#')[0];
    if (path === '') continue;
    const absolute = resolve(dirname(join(root, file)), decodeURIComponent(path));
    if (!absolute.startsWith(root)) problems.push(`${file}: link leaves the repository: ${target}`);
    else if (!existsSync(absolute)) problems.push(`${file}: no such file: ${relative(root, absolute)}`);
  }
}
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`doc links: ${files.length} Markdown files, every link inside the repository`);
