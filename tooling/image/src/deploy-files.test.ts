/**
 * compose.yaml and deploy/kubernetes cannot run on this project's machines (no Docker daemon, no
 * cluster): here they are parsed and validated against their formats' own schemas (the Compose
 * Specification through composeverter; the Kubernetes API's OpenAPI schemas through
 * kubernetes-models), and checked against what the image and the service really do.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import composeverter from 'composeverter';
import { Deployment, type IDeployment } from 'kubernetes-models/apps/v1';
import { type IJob, Job } from 'kubernetes-models/batch/v1';
import { type IService, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { REPOSITORY_ROOT } from './workspace-pins.js';

const read = (path: string) => readFile(join(REPOSITORY_ROOT, path), 'utf8');
const KUBERNETES_DIR = 'deploy/kubernetes';

/** The USER the Containerfile's runtime stage runs as: `10001:10001` -> [10001, 10001]. */
async function imageUser(): Promise<[number, number]> {
  const user = /^USER (\d+):(\d+)$/m.exec(await read('apps/api/Containerfile'));
  if (!user) throw new Error('the Containerfile sets no numeric USER uid:gid');
  return [Number(user[1]), Number(user[2])];
}

describe('compose.yaml', () => {
  it('is a valid Compose file (the Compose Specification schema)', async () => {
    // composeverter reads YAML integers as bigints, which its schema check then refuses: the file
    // keeps to strings and durations (no `retries:`), as Compose itself accepts them.
    expect(composeverter.validateDockerComposeToCommonSpec(await read('compose.yaml'))).toEqual([]);
  });

  it('would be refused if it broke the schema: the validator is not a formality', () => {
    const broken = 'services:\n  api:\n    image: x\n    restart: sometimes\n    ports: 3000\n';
    expect(composeverter.validateDockerComposeToCommonSpec(broken).length).toBeGreaterThan(0);
  });

  it('migrates as a one-off step, then starts the service, which does not migrate itself', async () => {
    const compose = parse(await read('compose.yaml'));
    expect(compose.services.migrate).toMatchObject({
      image: 'localhost/plant-store-api:latest',
      command: ['migrate'],
      depends_on: { postgres: { condition: 'service_healthy' } },
    });
    expect(compose.services.api).toMatchObject({
      image: 'localhost/plant-store-api:latest',
      environment: {
        MIGRATE_ON_START: 'false',
        DATABASE_URL: expect.stringMatching(/^postgres:\/\/.*@postgres:5432\//),
      },
      depends_on: { migrate: { condition: 'service_completed_successfully' } },
      ports: ['3000:3000'],
    });
  });
});

describe('deploy/kubernetes', () => {
  async function manifests(): Promise<{ file: string; document: Record<string, unknown> }[]> {
    const files = (await readdir(join(REPOSITORY_ROOT, KUBERNETES_DIR))).filter((file) => file.endsWith('.yaml'));
    const all = [];
    for (const file of files) {
      for (const document of parseAllDocuments(await read(join(KUBERNETES_DIR, file)))) {
        if (document.errors.length > 0) throw new Error(`${file}: ${document.errors.join('; ')}`);
        all.push({ file, document: document.toJSON() as Record<string, unknown> });
      }
    }
    return all;
  }

  /**
   * A manifest as its kind's model, validated against the Kubernetes API schema: what the YAML
   * holds is only assumed to be that kind until validate() has passed.
   */
  function toModel(document: Record<string, unknown>): Deployment | Job | Service | undefined {
    let model: Deployment | Job | Service;
    switch (`${document.apiVersion}/${document.kind}`) {
      case 'apps/v1/Deployment':
        model = new Deployment(document as unknown as IDeployment);
        break;
      case 'batch/v1/Job':
        model = new Job(document as unknown as IJob);
        break;
      case 'v1/Service':
        model = new Service(document as unknown as IService);
        break;
      case 'kustomize.config.k8s.io/v1beta1/Kustomization':
        return undefined;
      default:
        throw new Error(`no schema check for ${String(document.apiVersion)} ${String(document.kind)}`);
    }
    model.validate();
    return model;
  }

  it('are valid Kubernetes objects, and the kustomization lists every one of them', async () => {
    const all = await manifests();
    for (const { document } of all) toModel(document);
    const kustomization = all.find(({ document }) => document.kind === 'Kustomization')?.document;
    const resources = all.filter(({ document }) => document.kind !== 'Kustomization').map(({ file }) => file);
    expect([...((kustomization?.resources as string[] | undefined) ?? [])].sort()).toEqual([...resources].sort());
  });

  it('would be refused if a manifest broke the schema: the validator is not a formality', () => {
    const broken = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'x' },
      spec: { replicas: 'three', selector: {}, template: { spec: { containers: [{ image: 'x' }] } } },
    };
    expect(() => toModel(broken)).toThrow();
  });

  it('run migrations as a Job and the service as non-root replicas probed on /readyz and /healthz', async () => {
    const all = await manifests();
    const [uid, gid] = await imageUser();
    const models = all.map(({ document }) => toModel(document));
    const deployment = models.find((model) => model instanceof Deployment);
    const job = models.find((model) => model instanceof Job);
    const api = deployment?.spec?.template.spec?.containers[0];
    const migrate = job?.spec?.template.spec?.containers[0];
    expect(api?.args).toEqual(['serve']);
    expect(migrate?.args).toEqual(['migrate']);
    expect(api?.env).toContainEqual({ name: 'MIGRATE_ON_START', value: 'false' });
    expect(api?.ports).toContainEqual({ name: 'http', containerPort: 3000 });
    // The probes go to the platform port (METRICS_PORT), which a flood of the API port cannot fill.
    expect(api?.env).toContainEqual({ name: 'METRICS_PORT', value: '9464' });
    expect(api?.ports).toContainEqual({ name: 'platform', containerPort: 9464 });
    expect(api?.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'platform' });
    expect(api?.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'platform' });
    for (const pod of [deployment?.spec?.template.spec, job?.spec?.template.spec]) {
      expect(pod?.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: uid, runAsGroup: gid });
    }
    // Longer than the service's drain (SHUTDOWN_TIMEOUT_MS, 10 s) and the preStop pause.
    expect(deployment?.spec?.template.spec?.terminationGracePeriodSeconds).toBeGreaterThan(15);
  });
});
