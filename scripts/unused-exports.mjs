// Exports of src/ that no other file imports: each one is either a name only its own file uses (drop
// the `export`) or dead code (delete it). Importers are every file under src/, test/ and scripts/; an
// export only a test imports stays. The files are parsed, not type-checked (the compiler's parser
// from the `typescript` dev dependency), so this runs in a second or two: an import names what it
// uses (`import { a }`, `export { a } from`, `import('./x.js').A`), and a namespace import
// (`import * as x`, `typeof import('./x.js')`) uses the names read from it (`x.a`).
//   node scripts/unused-exports.mjs        lists them, exits 1 when there are any
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

const SCANNED = ['src', 'test', 'scripts'];
const SOURCE = /\.(ts|mts|mjs)$/;

/** Every source file under `dirs` of the repository at `root`, as paths from the root, sorted. */
function filesUnder(root, dirs) {
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(path);
      return SOURCE.test(entry.name) ? [relative(root, path).split('\\').join('/')] : [];
    });
  return dirs.flatMap((dir) => walk(join(root, dir))).sort();
}

/** The file a relative specifier names (`./x.js` is written for `./x.ts`, or `./x.d.ts` for a built one), or undefined. */
function resolve(from, specifier, known) {
  if (!specifier.startsWith('.')) return undefined;
  const bare = specifier.replace(/[?#].*$/, '');
  const path = join(dirname(from), bare).split('\\').join('/');
  const candidates = [path, path.replace(/\.js$/, '.ts'), path.replace(/\.js$/, '.d.ts'), path.replace(/\.mjs$/, '.mts'), path.replace(/\.mjs$/, '.d.mts')];
  return candidates.find((candidate) => known.has(candidate));
}

const hasExport = (node) => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

function bindingNames(name) {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((element) => (ts.isOmittedExpression(element) ? [] : bindingNames(element.name)));
}

/** The names a file exports, each with its line (1-based). */
function exportsOf(source) {
  const found = [];
  const add = (name, node) => found.push({ name, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) add(element.name.text, element);
    } else if (ts.isExportAssignment(statement)) {
      add('default', statement);
    } else if (hasExport(statement)) {
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) for (const name of bindingNames(declaration.name)) add(name, declaration);
      } else if (statement.name && ts.isIdentifier(statement.name)) {
        const isDefault = (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
        add(isDefault ? 'default' : statement.name.text, statement);
      }
    }
  }
  return found;
}

/**
 * What `source` (at path `file`) uses of other files: a map from file to the names it uses, where
 * the name '*' stands for all of them (`export * from`).
 */
function usesOf(source, file, known) {
  const uses = new Map();
  const use = (target, name) => {
    if (target === undefined || target === file) return;
    if (!uses.has(target)) uses.set(target, new Set());
    uses.get(target).add(name);
  };
  const namespaces = new Map(); // local name -> file whose names `local.name` reads
  const specifierOf = (node) => (node && ts.isStringLiteralLike(node) ? node.text : undefined);
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const target = resolve(file, specifierOf(node.moduleSpecifier) ?? '', known);
      const clause = node.importClause;
      if (clause?.name) use(target, 'default');
      const bindings = clause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) use(target, (element.propertyName ?? element.name).text);
      if (bindings && ts.isNamespaceImport(bindings) && target) namespaces.set(bindings.name.text, target);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const target = resolve(file, specifierOf(node.moduleSpecifier) ?? '', known);
      if (node.exportClause && ts.isNamedExports(node.exportClause)) {
        for (const element of node.exportClause.elements) use(target, (element.propertyName ?? element.name).text);
      } else use(target, '*');
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      const literal = ts.isLiteralTypeNode(argument) ? specifierOf(argument.literal) : undefined;
      const target = resolve(file, literal ?? '', known);
      if (node.qualifier) use(target, ts.isIdentifier(node.qualifier) ? node.qualifier.text : leftmost(node.qualifier).text);
      else if (target) typeofImports.push({ node, target });
    } else if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && namespaces.has(node.expression.text)) {
      use(namespaces.get(node.expression.text), node.name.text);
    } else if (ts.isQualifiedName(node) && ts.isIdentifier(node.left) && namespaces.has(node.left.text)) {
      use(namespaces.get(node.left.text), node.right.text);
    }
    ts.forEachChild(node, visit);
  };
  const typeofImports = [];
  // Namespace imports come first in a file, but a `typeof import()` names its namespace where it is
  // used: a variable cast to it (`const x = ... as typeof import('./y.js')`) reads from `./y`.
  ts.forEachChild(source, visit);
  for (const { node, target } of typeofImports) {
    const variable = ts.findAncestor(node, ts.isVariableDeclaration);
    if (variable && ts.isIdentifier(variable.name)) {
      namespaces.set(variable.name.text, target);
    } else use(target, '*');
  }
  if (typeofImports.length > 0) ts.forEachChild(source, visit);
  return uses;
}

const leftmost = (name) => (ts.isIdentifier(name) ? name : leftmost(name.left));

/** How many times `name` appears as an identifier in `source`, its declaration included. */
function mentions(source, name) {
  let count = 0;
  const visit = (node) => {
    if (ts.isIdentifier(node) && node.text === name) count += 1;
    ts.forEachChild(node, visit);
  };
  visit(source);
  return count;
}

/**
 * The exports of src/ in the repository at `root` that no other file under src/, test/ or scripts/
 * imports, sorted by file and line. `local` is true when the export's own file uses the name (drop
 * the `export`), false when nothing does (delete the code).
 */
export function unusedExports(root) {
  const files = filesUnder(root, SCANNED);
  const known = new Set(files);
  const sources = new Map(files.map((file) => [file, ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true)]));
  const used = new Map();
  for (const [file, source] of sources) {
    for (const [target, names] of usesOf(source, file, known)) {
      if (!used.has(target)) used.set(target, new Set());
      for (const name of names) used.get(target).add(name);
    }
  }
  const unused = [];
  for (const [file, source] of sources) {
    if (!file.startsWith('src/')) continue;
    const names = used.get(file) ?? new Set();
    if (names.has('*')) continue;
    for (const { name, line } of exportsOf(source)) {
      if (!names.has(name)) unused.push({ file, line, name, local: name !== 'default' && mentions(source, name) > 1 });
    }
  }
  return unused;
}

/** One line per unused export, as the command line prints them. */
export function describeUnused(unused) {
  return unused.map(({ file, line, name, local }) => `${file}:${line} ${name} (${local ? 'used in its own file only: drop `export`' : 'used nowhere: delete it'})`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const unused = unusedExports(join(dirname(new URL(import.meta.url).pathname), '..'));
  for (const line of describeUnused(unused)) console.log(line);
  console.log(`${unused.length} unused exports (${unused.filter(({ local }) => !local).length} used nowhere)`);
  process.exitCode = unused.length > 0 ? 1 : 0;
}
