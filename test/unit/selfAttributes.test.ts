import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assignsSelf, mentionsSelf } from '../../server/analysis/selfAttributes';

test('self attributes are found by name, with no regex built from the name', () => {
  const text =
    'class M:\n  def __init__(self):\n    self.conv1 = nn.Conv2d(1, 2, 3)\n    self.fc2x = 1\n    myself.relu = 2\n  def forward(self, x):\n    return self.bn(x)\n';
  assert.equal(assignsSelf(text, 'conv1'), true);
  assert.equal(assignsSelf(text, 'bn'), false);
  assert.equal(mentionsSelf(text, 'bn'), true);
  assert.equal(mentionsSelf(text, 'fc2'), false, 'a longer attribute is not this one');
  assert.equal(mentionsSelf(text, 'relu'), false, 'myself.relu is not self.relu');
  // A name carrying regex syntax is a plain string here: no match, no throw.
  assert.equal(assignsSelf(text, '.*'), false);
  assert.equal(mentionsSelf(text, '(a+)+$'), false);
  assert.equal(assignsSelf('self.ℓayer = 1', 'ℓayer'), true);
});
