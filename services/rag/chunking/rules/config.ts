/** CSS and INI: CSS rules are packed into module chunks; INI sections are named sections. */

import { childOfType } from '../syntax-rules.ts';
import type { SyntaxRules } from '../syntax-rules.ts';

export const cssRules: SyntaxRules = {
  declaration: () => undefined,
  isLeading: () => false,
};

export const iniRules: SyntaxRules = {
  declaration: (node) =>
    node.type === 'section'
      ? {
          kind: 'section',
          name: childOfType(node, ['section_name'])
            ?.text.trim()
            .replace(/^\[|\]$/g, ''),
          node,
        }
      : undefined,
  isLeading: (node) => node.type === 'comment',
};
