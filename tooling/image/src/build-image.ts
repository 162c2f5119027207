/**
 * `pnpm image:build`: builds apps/api/Containerfile with Podman or Docker and tags it
 * `localhost/plant-store-api:latest` and `:<version>` in the engine's default image store, so that
 * `podman run --network host localhost/plant-store-api` works right after. Then prints the image's
 * size, what it adds over its base, and its layers.
 *
 * The base image: BASE_IMAGE when set; else the official `node:<pinned>-bookworm-slim`, from the
 * engine's store or pulled; else (no registry reachable, as on this project's CI machines) a local
 * base made from Debian packages and the npm registry's Node binary (local-base.sh).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type ContainerEngine, findContainerEngine, ImageToolError } from './container-engine.js';
import { formatMegabytes, readImageLayers, readImageSize } from './image-facts.js';
import { IMAGE_NAME, REPOSITORY_ROOT, readWorkspacePins, type WorkspacePins } from './workspace-pins.js';

/** npm for the local base's build stages (the official images carry the npm of their Node). */
const LOCAL_BASE_NPM_VERSION = '11.19.1';
/** A TLS-inspecting proxy's CA, where the machine has one: mounted into the build's npm steps. */
const MACHINE_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

async function main(): Promise<void> {
  const engine = await findContainerEngine();
  const pins = await readWorkspacePins();
  const base = process.env.BASE_IMAGE || (await findBaseImage(engine, pins));
  const tags = [`${IMAGE_NAME}:latest`, `${IMAGE_NAME}:${pins.serviceVersion}`];
  log(`building ${tags.join(', ')} with ${engine.name}, from ${base} (Node ${pins.node})`);
  const started = Date.now();
  await engine.stream([
    'build',
    ...(engine.name === 'podman' ? ['--format', 'docker', '--network', 'host'] : []),
    ...caBundleArguments(engine),
    '--file',
    join(REPOSITORY_ROOT, 'apps/api/Containerfile'),
    '--build-arg',
    `BASE_IMAGE=${base}`,
    '--label',
    `org.opencontainers.image.version=${pins.serviceVersion}`,
    '--label',
    `org.opencontainers.image.revision=${pins.revision}`,
    '--label',
    'org.opencontainers.image.title=plant-store-api',
    ...tags.flatMap((tag) => ['--tag', tag]),
    REPOSITORY_ROOT,
  ]);
  const seconds = Math.round((Date.now() - started) / 1000);

  const imageBytes = await readImageSize(engine, tags[0] ?? IMAGE_NAME);
  const baseBytes = await readImageSize(engine, base);
  log('');
  log(`built ${tags.join(', ')} in ${seconds} s`);
  log(`image ${formatMegabytes(imageBytes)} MB = base ${formatMegabytes(baseBytes)} MB (${base})`);
  log(`      + ${formatMegabytes(imageBytes - baseBytes)} MB added by the service's layers:`);
  // History lists the newest first; the base's own layers are the last ones.
  const layers = await readImageLayers(engine, tags[0] ?? IMAGE_NAME);
  const added = layers.slice(0, layers.length - (await readImageLayers(engine, base)).length);
  for (const layer of added) {
    if (layer.bytes > 0) log(`        ${formatMegabytes(layer.bytes).padStart(7)} MB  ${layer.createdBy}`);
  }
}

/** The official node image of the pinned version if the engine has or can pull it, else a local one. */
async function findBaseImage(engine: ContainerEngine, pins: WorkspacePins): Promise<string> {
  const official = `docker.io/library/node:${pins.node}-bookworm-slim`;
  if ((await engine.run(['image', 'inspect', official])).code === 0) return official;
  const pulled = await engine.run(['pull', official], { timeoutMs: 300_000 });
  if (pulled.code === 0) return official;
  log(`cannot pull ${official} (${pulled.stderr.trim().split('\n').at(-1) ?? 'no registry'}); using a local base`);
  if (engine.name !== 'podman' || process.getuid?.() !== 0) {
    throw new ImageToolError(
      `no registry to pull ${official} from: set BASE_IMAGE to an image with Node ${pins.node} and npm, ` +
        'or run as root with Podman and debootstrap to make a local one',
    );
  }
  const local = `localhost/plant-store-node:${pins.node}-bookworm`;
  const made = spawnSync(
    join(REPOSITORY_ROOT, 'tooling/image/local-base.sh'),
    [local, pins.node, LOCAL_BASE_NPM_VERSION],
    { stdio: 'inherit' },
  );
  if (made.status !== 0) throw new ImageToolError(`making the local base image ${local} failed`);
  return local;
}

/**
 * Podman mounts the machine's CA bundle into the build's npm and pnpm steps (needed where the
 * registry is reached through a TLS-inspecting proxy, harmless elsewhere). Docker builds have no
 * volumes; they reach the registry directly.
 */
function caBundleArguments(engine: ContainerEngine): string[] {
  if (engine.name !== 'podman' || !existsSync(MACHINE_CA_BUNDLE)) return [];
  return [
    '--volume',
    `${MACHINE_CA_BUNDLE}:${MACHINE_CA_BUNDLE}:ro`,
    '--build-arg',
    `NODE_EXTRA_CA_CERTS=${MACHINE_CA_BUNDLE}`,
  ];
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`image:build: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
