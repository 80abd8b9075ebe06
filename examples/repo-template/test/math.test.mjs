import { test } from 'node:test';
import assert from 'node:assert/strict';
import { add, range } from '../src/math.mjs';

test('add sums two numbers', () => {
  assert.equal(add(2, 3), 5);
});

test('range excludes its end', () => {
  assert.deepEqual(range(1, 4), [1, 2, 3]);
  assert.deepEqual(range(3, 3), []);
});
