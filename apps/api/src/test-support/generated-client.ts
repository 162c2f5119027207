import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from '@plant-store/openapi-typescript';

/** This package's folder: its node_modules has openapi-fetch, @types/node and the project's tsc. */
const API_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A folder where a client is generated and built as a team outside would: types written by
 * openapi-typescript from a served document, a program using openapi-fetch typechecked and
 * compiled by the project's own tsc (TypeScript 7, the project's strict settings), then loaded.
 * Its node_modules is a link to this package's, where openapi-fetch is installed.
 */
export interface GeneratedClientFolder {
  readonly path: string;
  /** Writes `<name>.ts`: openapi-typescript's types of the document at `url`. Returns the types. */
  generateTypes(name: string, url: URL): Promise<string>;
  writeProgram(name: string, source: string): Promise<void>;
  /** Removes a program (`<name>.ts`) again. */
  remove(name: string): Promise<void>;
  /** Typechecks and compiles every .ts file; rejects with tsc's diagnostics if any. */
  compile(): Promise<void>;
  /** Loads a compiled program (`<name>.js`). */
  load<TModule>(name: string): Promise<TModule>;
  dispose(): Promise<void>;
}

const TSCONFIG = {
  extends: '@plant-store/tsconfig/base.json',
  compilerOptions: { types: ['node'], outDir: 'out', rootDir: '.', declaration: false, declarationMap: false },
  include: ['*.ts'],
};

export async function createGeneratedClientFolder(): Promise<GeneratedClientFolder> {
  const path = await mkdtemp(join(tmpdir(), 'plant-store-generated-client-'));
  await symlink(join(API_ROOT, 'node_modules'), join(path, 'node_modules'), 'dir');
  await writeFile(join(path, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  await writeFile(join(path, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
  return {
    path,
    async generateTypes(name, url) {
      const types = astToString(await openapiTS(url));
      await writeFile(join(path, `${name}.ts`), types);
      return types;
    },
    async writeProgram(name, source) {
      await writeFile(join(path, `${name}.ts`), source);
    },
    remove: (name) => rm(join(path, `${name}.ts`)),
    async compile() {
      const tsc = join(API_ROOT, 'node_modules/.bin/tsc');
      try {
        await promisify(execFile)(tsc, ['-p', join(path, 'tsconfig.json')], { cwd: path });
      } catch (error) {
        const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
        throw new Error(`tsc refused the generated client:\n${stdout}${stderr}`);
      }
    },
    load: (name) => import(pathToFileURL(join(path, 'out', `${name}.js`)).href),
    dispose: () => rm(path, { recursive: true, force: true }),
  };
}
