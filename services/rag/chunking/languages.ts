/**
 * File path (and, for scripts without an extension, the shebang) -> language and chunker.
 * Grammars are the .wasm files shipped in @vscode/tree-sitter-wasm; a language without one there is
 * still named (the index stores it per chunk) and goes to the line-window fallback.
 */

export const GRAMMARS = [
  'bash',
  'c-sharp',
  'cpp',
  'css',
  'go',
  'ini',
  'java',
  'javascript',
  'php',
  'powershell',
  'python',
  'ruby',
  'rust',
  'tsx',
  'typescript',
] as const;

export type Grammar = (typeof GRAMMARS)[number];

export type LanguageInfo = { id: string; chunker: 'code'; grammar: Grammar } | { id: string; chunker: 'markdown' | 'text' };

const code = (id: string, grammar: Grammar): LanguageInfo => ({ id, chunker: 'code', grammar });
const text = (id: string): LanguageInfo => ({ id, chunker: 'text' });

const TYPESCRIPT = code('typescript', 'typescript');
const JAVASCRIPT = code('javascript', 'javascript');
const PYTHON = code('python', 'python');
const RUBY = code('ruby', 'ruby');
const BASH = code('bash', 'bash');
const CPP = code('cpp', 'cpp');
const POWERSHELL = code('powershell', 'powershell');
const MARKDOWN: LanguageInfo = { id: 'markdown', chunker: 'markdown' };

/**
 * C goes through the C++ grammar: the package ships no C grammar, and C++ parses nearly all C.
 * What it does not (K&R definitions, C++ keywords used as names) becomes an ERROR node whose lines
 * still land in a module chunk. JSX goes through the JavaScript grammar, which parses it.
 */
const BY_EXTENSION: Readonly<Record<string, LanguageInfo>> = {
  ts: TYPESCRIPT,
  mts: TYPESCRIPT,
  cts: TYPESCRIPT,
  tsx: code('tsx', 'tsx'),
  js: JAVASCRIPT,
  mjs: JAVASCRIPT,
  cjs: JAVASCRIPT,
  jsx: JAVASCRIPT,
  py: PYTHON,
  pyi: PYTHON,
  pyw: PYTHON,
  go: code('go', 'go'),
  rs: code('rust', 'rust'),
  java: code('java', 'java'),
  cs: code('csharp', 'c-sharp'),
  c: code('c', 'cpp'),
  h: code('c', 'cpp'),
  cc: CPP,
  cpp: CPP,
  cxx: CPP,
  'c++': CPP,
  hh: CPP,
  hpp: CPP,
  hxx: CPP,
  ipp: CPP,
  inl: CPP,
  rb: RUBY,
  rake: RUBY,
  gemspec: RUBY,
  ru: RUBY,
  php: code('php', 'php'),
  sh: BASH,
  bash: BASH,
  zsh: BASH,
  ksh: BASH,
  ps1: POWERSHELL,
  psm1: POWERSHELL,
  psd1: POWERSHELL,
  css: code('css', 'css'),
  ini: code('ini', 'ini'),
  cfg: code('ini', 'ini'),
  md: MARKDOWN,
  markdown: MARKDOWN,
  mdx: MARKDOWN,
  json: text('json'),
  jsonc: text('json'),
  yaml: text('yaml'),
  yml: text('yaml'),
  toml: text('toml'),
  xml: text('xml'),
  html: text('html'),
  htm: text('html'),
  vue: text('vue'),
  svelte: text('svelte'),
  scss: text('scss'),
  less: text('less'),
  sql: text('sql'),
  graphql: text('graphql'),
  proto: text('protobuf'),
  kt: text('kotlin'),
  kts: text('kotlin'),
  swift: text('swift'),
  scala: text('scala'),
  dart: text('dart'),
  lua: text('lua'),
  pl: text('perl'),
  r: text('r'),
  ex: text('elixir'),
  exs: text('elixir'),
  hs: text('haskell'),
  tf: text('terraform'),
  rst: text('restructuredtext'),
  txt: text('text'),
};

const BY_FILE_NAME: Readonly<Record<string, LanguageInfo>> = {
  Dockerfile: text('dockerfile'),
  Makefile: text('makefile'),
  GNUmakefile: text('makefile'),
  Gemfile: RUBY,
  Rakefile: RUBY,
  Vagrantfile: RUBY,
  '.bashrc': BASH,
  '.bash_profile': BASH,
  '.profile': BASH,
  '.zshrc': BASH,
};

const BY_INTERPRETER: Readonly<Record<string, LanguageInfo>> = {
  node: JAVASCRIPT,
  nodejs: JAVASCRIPT,
  deno: TYPESCRIPT,
  bun: TYPESCRIPT,
  'ts-node': TYPESCRIPT,
  tsx: TYPESCRIPT,
  python: PYTHON,
  pypy: PYTHON,
  ruby: RUBY,
  php: code('php', 'php'),
  sh: BASH,
  bash: BASH,
  dash: BASH,
  zsh: BASH,
  ksh: BASH,
  pwsh: POWERSHELL,
  powershell: POWERSHELL,
  perl: text('perl'),
};

const UNKNOWN = text('text');

export function detectLanguage(path: string, content = ''): LanguageInfo {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const byName = BY_FILE_NAME[name];
  if (byName) return byName;
  const dot = name.lastIndexOf('.');
  const byExtension = dot > 0 ? BY_EXTENSION[name.slice(dot + 1).toLowerCase()] : undefined;
  return byExtension ?? fromShebang(content) ?? UNKNOWN;
}

/** `#!/usr/bin/env -S node --flag`, `#!/bin/bash -e`, `#!/usr/bin/python3.12` */
function fromShebang(content: string): LanguageInfo | undefined {
  if (!content.startsWith('#!')) return undefined;
  const newline = content.indexOf('\n');
  const words = content
    .slice(2, newline < 0 ? undefined : newline)
    .trim()
    .split(/\s+/);
  let program = words[0]?.slice(words[0].lastIndexOf('/') + 1);
  if (program === 'env') program = words.slice(1).find((w) => !w.startsWith('-') && !w.includes('='));
  if (!program) return undefined;
  return BY_INTERPRETER[program] ?? BY_INTERPRETER[program.replace(/[\d.]+$/, '')];
}
