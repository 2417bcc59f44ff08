import type { Db } from 'mongodb';
import type { Caller } from '../../premium/caller.ts';
import type { ReportInput } from '../input.ts';
import { gatherReport } from '../report/gather-report.ts';
import { renderHtml } from '../report/render-html.ts';
import { renderMarkdown } from '../report/render-markdown.ts';
import type { ProjectReport } from '../report/report.types.ts';

export type ReportAnswer = { format: 'json'; body: ProjectReport } | { format: 'markdown' | 'html'; body: string; contentType: string };

export const MARKDOWN_TYPE = 'text/markdown; charset=utf-8';
export const HTML_TYPE = 'text/html; charset=utf-8';

/**
 * POST /api/integration/report and the integration_report tool: the caller's own figures, in the
 * format asked for. Not metered: reading what one's key already paid for costs no quota.
 */
export async function projectReport(deps: { db: Db }, caller: Caller, input: ReportInput): Promise<ReportAnswer> {
  const report = await gatherReport(deps.db, caller, input);
  switch (input.format) {
    case 'json':
      return { format: 'json', body: report };
    case 'markdown':
      return { format: 'markdown', body: renderMarkdown(report), contentType: MARKDOWN_TYPE };
    case 'html':
      return { format: 'html', body: renderHtml(report), contentType: HTML_TYPE };
    default: {
      const unknown: never = input.format;
      throw new Error(`project report: unknown format ${String(unknown)}`);
    }
  }
}
