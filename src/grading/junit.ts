import { existsSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { SchoolError } from '../errors.js';

/**
 * A small, strict reader of JUnit XML test reports (what `node --test --test-reporter=junit`,
 * pytest `--junitxml`, vitest, jest-junit, go-junit-report and most other runners write): the
 * `<testcase>` elements with the `<testsuite>`s around them, and whether each holds a `<failure>`,
 * an `<error>` or a `<skipped>`. It is not a general XML parser: no DTD (a `<!DOCTYPE` is refused,
 * so no entity can expand), only the predefined and numeric character references, and a report
 * that is not well formed — cut short, tags that do not match — is an error, never a partial list.
 */
export class JUnitError extends SchoolError {
  override readonly code = 'junit';
  constructor(message: string) {
    super(message);
    this.name = 'JUnitError';
  }
}

export type TestStatus = 'passed' | 'failed' | 'skipped';

export interface TestCase {
  name: string;
  /** Names of the enclosing `<testsuite>`s, outermost first. */
  suites: string[];
  classname?: string;
  file?: string;
  status: TestStatus;
  /** The failure's or error's message. */
  message?: string;
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-z]+);/g, (all, ref: string) => {
    if (ref[0] !== '#') return ENTITIES[ref] ?? all;
    const code = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : all;
  });
}

const NAME = /[A-Za-z_:][-A-Za-z0-9_:.]*/y;
const SPACE = /\s*/y;

interface Element {
  tag: string;
  attrs: Record<string, string>;
}

/** Start and end tags, in document order; text, comments, CDATA and processing instructions skipped. */
function* tags(xml: string): Generator<{ open?: Element; close?: string; selfClosing?: boolean }> {
  let i = 0;
  const fail = (what: string): never => {
    throw new JUnitError(`not a well-formed JUnit report: ${what} at offset ${i}`);
  };
  const skipTo = (end: string) => {
    const j = xml.indexOf(end, i);
    if (j === -1) fail(`unterminated ${xml.slice(i, i + 9)}`);
    i = j + end.length;
  };
  const name = (): string => {
    NAME.lastIndex = i;
    const m = NAME.exec(xml);
    if (!m) fail('a tag or attribute name expected');
    i += m![0].length;
    return m![0];
  };
  const space = () => {
    SPACE.lastIndex = i;
    i += SPACE.exec(xml)![0].length;
  };
  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    if (lt === -1) break;
    i = lt;
    if (xml.startsWith('<!--', i)) skipTo('-->');
    else if (xml.startsWith('<![CDATA[', i)) skipTo(']]>');
    else if (xml.startsWith('<?', i)) skipTo('?>');
    else if (xml.startsWith('<!', i)) fail('a DTD or declaration (not accepted)');
    else if (xml.startsWith('</', i)) {
      i += 2;
      const tag = name();
      space();
      if (xml[i] !== '>') fail(`">" expected after </${tag}`);
      i++;
      yield { close: tag };
    } else {
      i++;
      const tag = name();
      const attrs: Record<string, string> = {};
      for (;;) {
        space();
        if (xml.startsWith('/>', i)) {
          i += 2;
          yield { open: { tag, attrs }, selfClosing: true };
          break;
        }
        if (xml[i] === '>') {
          i++;
          yield { open: { tag, attrs } };
          break;
        }
        if (i >= xml.length) fail(`unterminated <${tag}`);
        const key = name();
        space();
        if (xml[i] !== '=') fail(`"=" expected after attribute ${key}`);
        i++;
        space();
        const quote = xml[i];
        if (quote !== '"' && quote !== "'") fail(`a quoted value expected for attribute ${key}`);
        const end = xml.indexOf(quote!, i + 1);
        if (end === -1) fail(`unterminated value of attribute ${key}`);
        const raw = xml.slice(i + 1, end);
        if (raw.includes('<')) fail(`"<" in the value of attribute ${key}`);
        attrs[key] = decode(raw);
        i = end + 1;
      }
    }
  }
}

/** Every test case of a JUnit XML report; throws JUnitError when the report is not well formed. */
export function parseJUnit(xml: string): TestCase[] {
  const cases: TestCase[] = [];
  const stack: string[] = [];
  const suites: string[] = [];
  let current: TestCase | undefined;
  let roots = 0;
  const mark = (el: Element) => {
    const failed = el.tag === 'failure' || el.tag === 'error';
    if (!failed && el.tag !== 'skipped') return;
    if (current) {
      if (failed) {
        current.status = 'failed';
        current.message ??= el.attrs.message ?? el.attrs.type ?? el.tag;
      } else if (current.status === 'passed') current.status = 'skipped';
    } else if (failed) {
      // A failure outside any test case (a suite that could not load): a failed test of its own.
      const name = suites.at(-1) ?? '(report)';
      cases.push({
        name,
        suites: suites.slice(0, -1),
        status: 'failed',
        message: el.attrs.message ?? el.attrs.type ?? el.tag,
      });
    }
  };
  for (const t of tags(xml)) {
    if (t.open) {
      const el = t.open;
      if (!stack.length) roots++;
      if (roots > 1) throw new JUnitError('not a well-formed JUnit report: more than one root element');
      if (el.tag === 'testcase') {
        if (current) throw new JUnitError('not a well-formed JUnit report: a testcase inside a testcase');
        current = {
          name: el.attrs.name ?? '',
          suites: [...suites],
          classname: el.attrs.classname,
          file: el.attrs.file,
          status: 'passed',
        };
        if (t.selfClosing) {
          cases.push(current);
          current = undefined;
        }
      } else if (el.tag === 'testsuite' && !t.selfClosing) suites.push(el.attrs.name ?? '');
      else mark(el);
      if (!t.selfClosing) stack.push(el.tag);
    } else if (t.close) {
      const open = stack.pop();
      if (open !== t.close)
        throw new JUnitError(
          `not a well-formed JUnit report: </${t.close}> closes ${open ? `<${open}>` : 'nothing'}`,
        );
      if (t.close === 'testcase' && current) {
        cases.push(current);
        current = undefined;
      } else if (t.close === 'testsuite') suites.pop();
    }
  }
  if (stack.length)
    throw new JUnitError(`not a well-formed JUnit report: <${stack.at(-1)}> is never closed (cut short?)`);
  if (!roots) throw new JUnitError('not a JUnit report: no element');
  return cases;
}

/** `outer > inner > name`: a test's name with its suites. */
export function fullName(c: Pick<TestCase, 'suites' | 'name'>): string {
  return [...c.suites, c.name].join(' > ');
}

/** Where a report's paths are read from: the checkout (the cwd of the run), and the suite's copy. */
export interface IdRoots {
  /** The directory the command ran in; `file` attributes and pytest modules are relative to it. */
  cwd: string;
  /** More directories a test file may live in (the suite's copy beside the checkout), tried first. */
  roots?: readonly string[];
}

const SEP = ' > ';

/** `path` relative to the first root holding it, `/`-separated; as given when none does. */
function relativeTo(path: string, r: IdRoots, exists: (p: string) => boolean): string {
  const abs = isAbsolute(path) ? path : resolve(r.cwd, path);
  for (const root of [...(r.roots ?? []), r.cwd]) {
    const rel = relative(resolve(root), abs);
    if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return rel.split(sep).join('/');
  }
  return exists(abs) ? abs : path;
}

/**
 * pytest's node id (`tests/test_split.py::TestSplit::test_begin_end`) from a JUnit classname
 * (`tests.test_split.TestSplit`): the longest dotted prefix that names a module file under the
 * checkout is the file, the rest are its classes. `file` (pytest's xunit1 family) names the file
 * directly. Undefined when no prefix names a `.py` file.
 */
function pytestId(c: TestCase, r: IdRoots, exists: (p: string) => boolean): string | undefined {
  const parts = (c.classname ?? '').split('.').filter(Boolean);
  if (!parts.length) return undefined;
  for (let n = parts.length; n >= 1; n--) {
    const module = parts.slice(0, n).join('/') + '.py';
    const file = c.file?.endsWith('.py') ? relativeTo(c.file, r, exists) : undefined;
    if (
      file !== undefined
        ? file.replace(/\.py$/, '').split('/').join('.') === parts.slice(0, n).join('.')
        : false
    )
      return [file, ...parts.slice(n), c.name].join('::');
    for (const root of [r.cwd, ...(r.roots ?? [])]) {
      if (exists(join(root, module))) return [module, ...parts.slice(n), c.name].join('::');
    }
  }
  return c.file?.endsWith('.py') ? [relativeTo(c.file, r, exists), c.name].join('::') : undefined;
}

/**
 * A test's full id, the way its runner names it, so two tests of one name in two files are told
 * apart (docs/grading.md, "Test names"):
 * - pytest: the node id, `tests/test_split.py::TestSplit::test_begin_end`;
 * - a report with a `file` attribute (the judge's node:test reporter, mocha's xunit, jest-junit with
 *   its file attribute): `test/a.test.js > suite > name`, the file relative to the checkout (or to
 *   the suite's copy), then the suites, then the name; mocha's classname (its suite titles joined by
 *   spaces) stands for the suites;
 * - vitest (its classname is the file, its name already `suite > name`): `file > suite > name`;
 * - anything else (`go test` through go-junit-report: the package is the suite): `suite > name`,
 *   what `fullName` gives.
 */
export function testId(c: TestCase, r: IdRoots, exists: (p: string) => boolean = existsSync): string {
  const py = pytestId(c, r, exists);
  if (py) return py;
  const suites = c.suites.filter((s) => s !== '' && s !== 'root');
  const looksLikeFile = (s: string | undefined) => !!s && /\.[cm]?[jt]sx?$/.test(s) && !s.includes(' ');
  const file = c.file ?? (looksLikeFile(c.classname) ? c.classname : undefined);
  if (file === undefined) return fullName(c);
  const rel = relativeTo(file, r, exists);
  const isFile = (s: string) => s === file || relativeTo(s, r, exists) === rel;
  // node reports a file that ended before its tests as one test named by the file: the file alone.
  if (isFile(c.name)) return rel;
  // A runner's classname is its suite path when it has one (mocha: the suite titles joined by
  // spaces, under a single report-wide <testsuite>); else the report's own suites, the file's
  // suite (vitest, jest-junit) left out.
  const classname = c.classname !== undefined && c.classname !== 'test' && !isFile(c.classname);
  const path = classname ? [c.classname!].filter(Boolean) : suites.filter((s) => !isFile(s));
  return [rel, ...path, c.name].join(SEP);
}
