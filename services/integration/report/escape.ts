/**
 * Every string a customer chose (project, collection, suite and component names, URLs, paths) goes
 * through one of these before it is written into a rendered report: the report may be opened in a
 * browser or a markdown viewer by someone other than whoever named things.
 */

import { escapeHtml } from '../../platform/html-escape.ts';

export { escapeHtml };

/**
 * Text for one line of markdown, a table cell included: line breaks would end a table row or start
 * a block, so they become spaces; HTML-significant characters become entities (a raw `<script>`
 * would pass through most renderers); and every character markdown gives a meaning inline
 * (emphasis, links, code, tables, a heading's closing `#`) is backslash-escaped.
 */
export function escapeMarkdown(text: string): string {
  return text
    .replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ')
    .replace(/[&<>"]/g, escapeHtml)
    .replace(/[\\`*_{}[\]()#+!|~]/g, (c) => `\\${c}`);
}
