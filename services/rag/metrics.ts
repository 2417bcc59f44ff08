import { BoundedCounter } from '../platform/metrics.ts';

/** What rag counts for the dashboard and alerts (deploy/grafana, deploy/prometheus). */
export const ragMetrics = {
  indexJobs: new BoundedCounter({
    name: 'svc_rag_index_jobs_total',
    help: 'Index job runs by how they ended: completed, failed (for good, its reason in rag.index-failed), interrupted (stopped or an outage: the job resumes)',
    labels: { outcome: ['completed', 'failed', 'interrupted'] as const },
  }),
};
