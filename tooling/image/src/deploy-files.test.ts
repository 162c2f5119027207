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
import { type INetworkPolicy, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
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
    });
    expect(compose.services.api.ports).toContain('3000:3000');
  });

  it('serves /metrics on the platform port, published on loopback only, and shares rate limits through its Redis', async () => {
    const compose = parse(await read('compose.yaml'));
    const api = compose.services.api;
    expect(api.environment).toMatchObject({ METRICS_PORT: '9464', REDIS_URL: 'redis://redis:6379' });
    // Every published port: the API's on any address, the platform's on loopback alone.
    expect(api.ports).toEqual(['3000:3000', '127.0.0.1:9464:9464']);
    expect(compose.services.redis.image).toMatch(/^docker\.io\/library\/redis:/);
    expect(compose.services.redis.ports).toBeUndefined();
    expect(api.depends_on.redis).toEqual({ condition: 'service_healthy' });
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
  function toModel(document: Record<string, unknown>): Deployment | Job | Service | NetworkPolicy | undefined {
    let model: Deployment | Job | Service | NetworkPolicy;
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
      case 'networking.k8s.io/v1/NetworkPolicy':
        model = new NetworkPolicy(document as unknown as INetworkPolicy);
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
    // Each file once, however many documents it holds.
    const resources = [
      ...new Set(all.filter(({ document }) => document.kind !== 'Kustomization').map(({ file }) => file)),
    ];
    expect([...((kustomization?.resources as string[] | undefined) ?? [])].sort()).toEqual([...resources].sort());
  });

  /** Every validated model of the manifests. */
  async function models() {
    return (await manifests()).flatMap(({ document }) => {
      const model = toModel(document);
      return model === undefined ? [] : [model];
    });
  }

  /** Whether `labels` has every pair `selector` asks for. */
  const selects = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
    selector !== undefined && Object.entries(selector).every(([key, value]) => labels?.[key] === value);

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
  it('share the rate limits of the replicas through the Redis they ship, which only the API reaches', async () => {
    const all = await models();
    const deployments = all.filter((model) => model instanceof Deployment);
    const api = deployments.find((model) => model.metadata?.name === 'plant-store');
    const redis = deployments.find((model) => model.metadata?.name === 'plant-store-redis');
    const container = api?.spec?.template.spec?.containers[0];
    expect(api?.spec?.replicas).toBeGreaterThan(1);
    // The password from a Secret that must exist (no `optional`), the URL built from it.
    expect(container?.env).toContainEqual({
      name: 'REDIS_PASSWORD',
      valueFrom: { secretKeyRef: { name: 'plant-store-redis', key: 'password' } },
    });
    const url = new URL(container?.env?.find((variable) => variable.name === 'REDIS_URL')?.value ?? '');
    expect(url.protocol).toBe('redis:');
    expect(url.password).toBe('$(REDIS_PASSWORD)');
    // Its host is a Service of the manifests whose selector picks the Redis pods, on Redis's port.
    const service = all.find((model) => model instanceof Service && model.metadata?.name === url.hostname) as
      | Service
      | undefined;
    expect(selects(service?.spec?.selector, redis?.spec?.template.metadata?.labels)).toBe(true);
    expect(service?.spec?.ports?.[0]?.port).toBe(Number(url.port));
    const redisContainer = redis?.spec?.template.spec?.containers[0];
    expect(redisContainer?.args).toEqual(expect.arrayContaining(['--requirepass', '$(REDIS_PASSWORD)']));
    expect(redis?.spec?.template.spec?.securityContext).toMatchObject({ runAsNonRoot: true });

    // Only the API's pods may reach it.
    const policies = all.filter((model) => model instanceof NetworkPolicy);
    const redisPolicy = policies.find((policy) =>
      selects(policy.spec?.podSelector?.matchLabels, redis?.spec?.template.metadata?.labels),
    );
    expect(redisPolicy?.spec?.policyTypes).toEqual(['Ingress']);
    expect(redisPolicy?.spec?.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/component': 'api' } } }],
        ports: [{ protocol: 'TCP', port: 'redis' }],
      },
    ]);
  });

  it('admit anyone to the API port and only the scraper to the platform port (/metrics)', async () => {
    const all = await models();
    const api = all.find((model) => model instanceof Deployment && model.metadata?.name === 'plant-store') as
      | Deployment
      | undefined;
    const podLabels = api?.spec?.template.metadata?.labels;
    const policy = all.find(
      (model) => model instanceof NetworkPolicy && selects(model.spec?.podSelector?.matchLabels, podLabels),
    ) as NetworkPolicy | undefined;
    expect(policy?.spec?.policyTypes).toEqual(['Ingress']);
    const rules = policy?.spec?.ingress ?? [];
    // Every rule names its ports: a rule without ports would open every port to its sources.
    expect(rules.every((rule) => (rule.ports?.length ?? 0) > 0)).toBe(true);
    const rulesFor = (port: string) => rules.filter((rule) => rule.ports?.some((entry) => entry.port === port));
    expect(rulesFor('http')).toEqual([{ ports: [{ protocol: 'TCP', port: 'http' }] }]);
    const platform = rulesFor('platform');
    expect(platform).toHaveLength(1);
    const sources = platform[0]?.from ?? [];
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      // A namespace and the scraper's pods in it, never an open source.
      expect(source.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name']).toBeTruthy();
      expect(source.podSelector?.matchExpressions?.length).toBeGreaterThan(0);
      // kustomize adds the kustomization's selector labels to every matchLabels of a NetworkPolicy's
      // peers: the scraper's pods would then have to carry app.kubernetes.io/name=plant-store.
      expect(source.podSelector?.matchLabels).toBeUndefined();
    }
    // The ports the rules name are the container's.
    const ports = api?.spec?.template.spec?.containers[0]?.ports?.map((port) => port.name);
    expect(ports).toEqual(expect.arrayContaining(['http', 'platform']));
  });
});
