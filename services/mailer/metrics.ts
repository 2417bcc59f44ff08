import { BoundedCounter } from '../platform/metrics.ts';
import { MAIL_EVENT_TYPES } from './owed-mail.ts';

/** What the mailer counts for the dashboard and alerts (deploy/grafana, deploy/prometheus), by the event that owed the e-mail. */
export const mailMetrics = {
  sent: new BoundedCounter({
    name: 'svc_emails_sent_total',
    help: 'E-mails the SMTP server accepted, by the event that owed them',
    labels: { event_type: MAIL_EVENT_TYPES },
  }),
  failed: new BoundedCounter({
    name: 'svc_emails_failed_total',
    help: 'E-mail sends that failed, by the event that owed them and the failure: transient and unknown are retried, permanent is dead-lettered',
    labels: { event_type: MAIL_EVENT_TYPES, failure: ['transient', 'permanent', 'unknown'] as const },
  }),
};
