import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';

/** A YAML document of the deploy files, before anything is known of it. */
export type Manifest = Record<string, unknown>;

type Model = { validate(): void };

/**
 * The kinds the deploy files may hold, by apiVersion and kind. A kind not listed is a problem, not
 * a pass: an object this check cannot validate must not slip through unchecked.
 */
const MODELS: Readonly<Record<string, new (data: never) => Model>> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'apps/v1/Deployment': Deployment,
  'apps/v1/DaemonSet': DaemonSet,
  'apps/v1/StatefulSet': StatefulSet,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/Ingress': Ingress,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

export const describeManifest = (m: Manifest): string => {
  const metadata = m.metadata as { name?: unknown } | undefined;
  return `${String(m.kind)}/${String(metadata?.name ?? '(unnamed)')}`;
};

/** What the Kubernetes OpenAPI schema (bundled in kubernetes-models) finds wrong with one object. */
export function schemaProblems(m: Manifest): string[] {
  const key = `${String(m.apiVersion)}/${String(m.kind)}`;
  const model = MODELS[key];
  if (!model) return [`${describeManifest(m)}: no schema known here for ${key}`];
  try {
    new model(m as never).validate();
    return [];
  } catch (err) {
    return [`${describeManifest(m)}: ${(err as Error).message}`];
  }
}
