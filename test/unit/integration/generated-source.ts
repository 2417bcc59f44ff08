import ts from 'typescript';

/**
 * A generated test file as a JavaScript parser sees it (TypeScript's, which reads JavaScript too):
 * its statements, the calls anywhere in it, its comments, and its syntax errors. What a customer's
 * runner would execute is the statements and calls; the comments are where untrusted text may sit.
 */
export interface GeneratedSource {
  /** SyntaxKind names of the top-level statements */
  statements: string[];
  /** the callee of every call expression, as written */
  callees: string[];
  /** the text of every comment, delimiters included */
  comments: string[];
  syntaxErrors: string[];
  sourceFile: ts.SourceFile;
}

export function readGenerated(code: string, fileName = 'generated.spec.ts'): GeneratedSource {
  const sourceFile = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true);
  const callees: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) callees.push(node.expression.getText(sourceFile));
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  const comments: string[] = [];
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, code);
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (token === ts.SyntaxKind.SingleLineCommentTrivia || token === ts.SyntaxKind.MultiLineCommentTrivia)
      comments.push(scanner.getTokenText());
  }
  const { diagnostics = [] } = ts.transpileModule(code, {
    fileName,
    reportDiagnostics: true,
    compilerOptions: { target: ts.ScriptTarget.ESNext, module: ts.ModuleKind.ESNext },
  });
  return {
    statements: sourceFile.statements.map(statementKind),
    callees,
    comments,
    syntaxErrors: diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
    sourceFile,
  };
}

/** SyntaxKind's reverse mapping names VariableStatement by its alias FirstStatement. */
function statementKind(node: ts.Statement): string {
  return ts.isVariableStatement(node) ? 'VariableStatement' : ts.SyntaxKind[node.kind];
}

/** The module specifiers of the file's imports and requires, as the parser reads their values. */
export function specifiersOf(source: GeneratedSource): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) out.push(node.moduleSpecifier.text);
    if (
      ts.isCallExpression(node) &&
      node.expression.getText(source.sourceFile) === 'require' &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    )
      out.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source.sourceFile);
  return out;
}

/** Every string literal's value, in order. */
export function stringsOf(source: GeneratedSource): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node)) out.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source.sourceFile);
  return out;
}

/** Line terminators JavaScript recognises, and the direction controls of "Trojan Source". */
export const LINE_TERMINATOR = /[\n\r\u2028\u2029]/;
export const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
