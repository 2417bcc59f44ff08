import type { Grammar } from '../languages.ts';
import type { SyntaxRules } from '../syntax-rules.ts';
import { cssRules, iniRules } from './config.ts';
import { cppRules } from './cpp.ts';
import { csharpRules } from './csharp.ts';
import { goRules } from './go.ts';
import { javaRules } from './java.ts';
import { phpRules } from './php.ts';
import { pythonRules } from './python.ts';
import { rubyRules } from './ruby.ts';
import { rustRules } from './rust.ts';
import { bashRules, powershellRules } from './shell.ts';
import { typescriptRules } from './typescript.ts';

export const RULES: Readonly<Record<Grammar, SyntaxRules>> = {
  bash: bashRules,
  'c-sharp': csharpRules,
  cpp: cppRules,
  css: cssRules,
  go: goRules,
  ini: iniRules,
  java: javaRules,
  javascript: typescriptRules,
  php: phpRules,
  powershell: powershellRules,
  python: pythonRules,
  ruby: rubyRules,
  rust: rustRules,
  tsx: typescriptRules,
  typescript: typescriptRules,
};
