import { describe, expect, it } from 'vitest';
import { fullName, parseJUnit, testId } from '../../src/grading/junit.js';

describe('JUnit XML reports', () => {
  it("reads node's junit reporter: suites, failures, skips, todos, comments", () => {
    const xml = [
      '<?xml version="1.0" encoding="utf-8"?>',
      '<testsuites>',
      '\t<testcase name="fails &lt;&amp;> &amp;quot;q&amp;quot;" time="0.001" classname="test" failure="1 == 2">',
      '\t\t<failure type="testCodeFailure" message="1 == 2">',
      'Error [ERR_TEST_FAILURE]: 1 == 2 at TestContext.&lt;anonymous> (file:///t.mjs:3:38)',
      '\t\t</failure>',
      '\t</testcase>',
      '\t<testcase name="skipped one" time="0.0001" classname="test">',
      '\t\t<skipped type="skipped" message="true"/>',
      '\t</testcase>',
      '\t<testcase name="todo one" classname="test"><skipped type="todo" message="true"/></testcase>',
      '\t<testsuite name="outer" tests="2" failures="0">',
      '\t\t<testsuite name="inner" tests="1"><testcase name="deep" classname="test"/></testsuite>',
      '\t\t<testcase name="line&#10;two" classname="test"/>',
      '\t</testsuite>',
      '\t<!-- tests 5 -->',
      '</testsuites>',
      '',
    ].join('\n');
    const cases = parseJUnit(xml);
    expect(cases.map((c) => [fullName(c), c.status])).toEqual([
      ['fails <&> &quot;q&quot;', 'failed'],
      ['skipped one', 'skipped'],
      ['todo one', 'skipped'],
      ['outer > inner > deep', 'passed'],
      ['outer > line\ntwo', 'passed'],
    ]);
    expect(cases[0]!.message).toBe('1 == 2');
  });

  it('reads pytest-style reports: classname, errors, CDATA, single quotes', () => {
    const xml =
      "<?xml version='1.0' encoding='utf-8'?><testsuites><testsuite name='pytest' errors='1'>" +
      "<testcase classname='tests.test_sum' name='test_add' time='0.01'/>" +
      "<testcase classname='tests.test_sum' name='test_neg'><error message='boom'><![CDATA[<trace> & more]]></error></testcase>" +
      '<testcase classname="tests.test_sum" name="test_skip"><skipped message="later"/></testcase>' +
      '</testsuite></testsuites>';
    expect(parseJUnit(xml)).toEqual([
      { name: 'test_add', suites: ['pytest'], classname: 'tests.test_sum', status: 'passed' },
      {
        name: 'test_neg',
        suites: ['pytest'],
        classname: 'tests.test_sum',
        status: 'failed',
        message: 'boom',
      },
      { name: 'test_skip', suites: ['pytest'], classname: 'tests.test_sum', status: 'skipped' },
    ]);
  });

  it('a failure outside any test case is a failed test named by its suite', () => {
    const xml = '<testsuite name="loader"><error message="cannot import"/></testsuite>';
    expect(parseJUnit(xml)).toEqual([
      { name: 'loader', suites: [], status: 'failed', message: 'cannot import' },
    ]);
  });

  it('refuses what is not a whole, plain report: cut short, mismatched, a DTD, two roots, nothing', () => {
    const ok = '<testsuites><testcase name="a"/></testsuites>';
    for (const bad of [
      ok.slice(0, -5),
      '<testsuites><testcase name="a"></testsuite></testsuites>',
      '<!DOCTYPE x [<!ENTITY a "b">]><testsuites/>',
      '<testsuites/><testsuites/>',
      '',
      'passed',
      '<testsuites><testcase name="a></testsuites>',
      '<testsuites><testcase name=a/></testsuites>',
    ])
      expect(() => parseJUnit(bad), JSON.stringify(bad)).toThrow(/JUnit report/);
    expect(parseJUnit(ok)).toHaveLength(1);
  });

  describe('full test ids', () => {
    // A file system of a few paths: the checkout at /co, the suite's copy beside it at /suite.
    const paths = new Set(['/co/tests/test_split.py', '/co/tests/sub/test_split.py', '/co/test/a.test.js']);
    const exists = (p: string) => paths.has(p);
    const roots = { cwd: '/co', roots: ['/suite'] };
    const id = (xml: string) => parseJUnit(xml).map((c) => testId(c, roots, exists));

    it("pytest: the node id, from the classname's module path (or the file attribute)", () => {
      expect(
        id(
          '<testsuites><testsuite name="pytest">' +
            '<testcase classname="tests.test_split.TestSplit" name="test_begin_end"/>' +
            '<testcase classname="tests.test_split" name="test_same[1-2]"/>' +
            '<testcase classname="tests.sub.test_split" name="test_same[1-2]"/>' +
            '<testcase classname="tests.sub.test_split.TestA.TestB" name="test_x" file="tests/sub/test_split.py"/>' +
            '</testsuite></testsuites>',
        ),
      ).toEqual([
        'tests/test_split.py::TestSplit::test_begin_end',
        'tests/test_split.py::test_same[1-2]',
        // The same name in another file is another test.
        'tests/sub/test_split.py::test_same[1-2]',
        'tests/sub/test_split.py::TestA::TestB::test_x',
      ]);
    });

    it('mocha (xunit: classname is the suite path, file absolute), vitest, node:test, go', () => {
      expect(
        id(
          '<testsuites name="Mocha Tests"><testsuite name="Mocha Tests">' +
            '<testcase classname="answer nested" name="is right" file="/co/test/a.test.js"/>' +
            '<testcase classname="" name="top level" file="/co/test/a.test.js"/>' +
            '</testsuite>' +
            // vitest: the file is the classname and the suite, the name holds the describe path.
            '<testsuite name="test/a.test.js"><testcase classname="test/a.test.js" name="answer &gt; is right"/></testsuite>' +
            // The judge's node:test reporter: nested suites, the file; a copy beside the checkout.
            '<testsuite name="answer"><testcase name="is right" file="/suite/answer.test.mjs"/></testsuite>' +
            // go-junit-report: the package is the suite (and the classname).
            '<testsuite name="example.com/m/split"><testcase classname="split" name="TestSplit"/></testsuite>' +
            '</testsuites>',
        ),
      ).toEqual([
        'test/a.test.js > answer nested > is right',
        'test/a.test.js > top level',
        'test/a.test.js > answer > is right',
        'answer.test.mjs > answer > is right',
        'example.com/m/split > TestSplit',
      ]);
    });
  });
});
