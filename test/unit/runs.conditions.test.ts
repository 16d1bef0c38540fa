import { expect } from 'chai';
import type { Condition } from '../../domain/flows/index.js';
import {
  MAX_QUESTION_OUTPUT_LENGTH,
  RunInputError,
  conditionLabel,
  conditionQuestion,
  conditionalResultOf,
  evaluateCondition,
  outputText,
  parseYesNo,
} from '../../domain/runs/index.js';

const op = (operator: Condition['operator'], value?: Condition['value']): Condition => ({ operator, value, targetNodeId: 't' });
type Row = [Condition['operator'], Condition['value'] | undefined, unknown, boolean];

function check(rows: Row[]) {
  for (const [operator, value, output, expected] of rows) {
    expect(evaluateCondition(op(operator, value), output), `${operator} ${JSON.stringify(value)} on ${JSON.stringify(output)}`).to.equal(expected);
  }
}

describe('conditions: operators', () => {
  it('contains / not_contains, case-sensitive, on text, numbers and JSON', () => {
    check([
      ['contains', 'yes', 'oh yes indeed', true],
      ['contains', 'Yes', 'oh yes', false],
      ['contains', '', 'anything', true],
      ['contains', 'x', null, false],
      ['contains', '42', 1420, true],
      ['contains', '"status":"ok"', { status: 'ok' }, true],
      ['contains', 'b', ['a', 'b'], true],
      ['not_contains', 'yes', 'no way', true],
      ['not_contains', 'way', 'no way', false],
      ['not_contains', 'x', undefined, true],
    ]);
  });

  it('starts_with / ends_with', () => {
    check([
      ['starts_with', 'Hello', 'Hello world', true],
      ['starts_with', 'world', 'Hello world', false],
      ['starts_with', 'tr', true, true],
      ['ends_with', 'world', 'Hello world', true],
      ['ends_with', 'world', 'Hello world\n', false],
      ['ends_with', '}', { a: 1 }, true],
    ]);
  });

  it('equals / not_equals: numbers numerically, text trimmed', () => {
    check([
      ['equals', 'positive', 'positive\n', true],
      ['equals', 'positive', 'Positive', false],
      ['equals', 5, '5.0', true],
      ['equals', '5', 5, true],
      ['equals', 5, '5 apples', false],
      ['equals', true, true, true],
      ['equals', 'true', false, false],
      ['equals', '', null, true],
      ['equals', '{"a":1}', { a: 1 }, true],
      ['not_equals', 'a', 'b', true],
      ['not_equals', 3, ' 3 ', false],
    ]);
  });

  it('gt / lt: numeric only, false when either side is not a number', () => {
    check([
      ['gt', 5, 7, true],
      ['gt', 5, '7.5', true],
      ['gt', 5, 5, false],
      ['gt', '10', '9', false],
      ['gt', 5, 'seven', false],
      ['gt', 5, null, false],
      ['gt', 'abc', 7, false],
      ['lt', 5, -1, true],
      ['lt', 5, 5, false],
      ['lt', 0.5, '0.25', true],
      ['lt', 5, '', false],
      ['lt', 5, Number.NaN, false],
    ]);
  });

  it('is_empty / is_not_empty', () => {
    check([
      ['is_empty', undefined, null, true],
      ['is_empty', undefined, undefined, true],
      ['is_empty', undefined, '  \n', true],
      ['is_empty', undefined, [], true],
      ['is_empty', undefined, {}, true],
      ['is_empty', undefined, 0, false],
      ['is_empty', undefined, false, false],
      ['is_empty', undefined, 'x', false],
      ['is_not_empty', undefined, [0], true],
      ['is_not_empty', undefined, '', false],
    ]);
  });

  it('regex: anywhere in the text, JavaScript syntax', () => {
    check([
      ['regex', '^\\d{3}-\\d{4}$', '555-1234', true],
      ['regex', '^\\d{3}-\\d{4}$', '555-12345', false],
      ['regex', 'error|fail', 'it failed', true],
      ['regex', '"score":\\s*9', { score: 9 }, true],
      ['regex', '[A-Z]', 'lower', false],
    ]);
  });

  it('refuses to evaluate a usePrompt condition or a bad regex, with codes the consumer records', () => {
    const codeOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        expect(err).to.be.instanceOf(RunInputError);
        return (err as RunInputError).code;
      }
      return 'no error';
    };
    expect(codeOf(() => evaluateCondition({ usePrompt: true, prompt: 'Is it positive?' }, 'x'))).to.equal('CONDITION_NEEDS_MODEL');
    expect(codeOf(() => evaluateCondition(op('regex', '(unclosed'), 'x'))).to.equal('CONDITION_INVALID_REGEX');
    expect(codeOf(() => evaluateCondition(op('regex', '(a)\\1'), 'aa'))).to.equal('CONDITION_REGEX_UNSUPPORTED');
    expect(codeOf(() => evaluateCondition({ operator: 'bogus' as never, value: 'x' }, 'x'))).to.equal('CONDITION_INVALID');
  });

  it('turns outputs into text as documented', () => {
    expect([outputText('s'), outputText(null), outputText(undefined), outputText(3.5), outputText(false), outputText({ a: [1] })]).to.deep.equal(['s', '', '', '3.5', 'false', '{"a":[1]}']);
  });
});

describe('conditions: labels, questions and answers', () => {
  it('labels conditions for conditionalResults', () => {
    expect(conditionLabel(op('contains', 'yes'))).to.equal('contains "yes"');
    expect(conditionLabel(op('gt', 3))).to.equal('gt 3');
    expect(conditionLabel(op('is_empty'))).to.equal('is_empty');
    expect(conditionLabel({ usePrompt: true, prompt: 'Is the tone angry?' })).to.equal('Is the tone angry?');
    expect(conditionalResultOf({ operator: 'equals', value: 'a', targetNodeId: '' }, 2, true)).to.deep.equal({ condition: 'equals "a"', result: true, targetNodeId: null, index: 2 });
    expect(conditionalResultOf(op('equals', 'a'), 0, false)).to.deep.equal({ condition: 'equals "a"', result: false, targetNodeId: 't', index: 0 });
  });

  it('builds the yes/no question with the output fenced, and cuts long outputs', () => {
    const q = conditionQuestion({ usePrompt: true, prompt: '  Is the customer angry? ' }, { text: 'I want a refund NOW' });
    expect(q).to.equal(
      [
        'Answer the question about the text below with a single word: yes or no.',
        '',
        'Question: Is the customer angry?',
        '',
        'Text:',
        '<<<',
        '{"text":"I want a refund NOW"}',
        '>>>',
        '',
        'Answer (yes or no):',
      ].join('\n'),
    );
    const long = conditionQuestion({ usePrompt: true, prompt: 'Long?' }, 'x'.repeat(MAX_QUESTION_OUTPUT_LENGTH + 10));
    expect(long).to.include(`${'x'.repeat(MAX_QUESTION_OUTPUT_LENGTH)}\n[… 10 more characters cut]`);
    expect(long).not.to.include('x'.repeat(MAX_QUESTION_OUTPUT_LENGTH + 1));
  });

  it('reads yes/no answers the way models write them', () => {
    const rows: Array<[string, boolean | null]> = [
      ['Yes', true],
      ['yes.', true],
      ['**Yes**', true],
      ['  YES!\n', true],
      ['Yes, because the text says so.', true],
      ['Answer: yes', true],
      ['"No."', false],
      ['no', false],
      ['No, it is not.', false],
      ['NO', false],
      ['true', true],
      ['False', false],
      ['Final answer: no', false],
      ['I think the answer is yes.', true],
      ['Clearly no.', false],
      ['yes or no? hard to say', true],
      ['Hard to say: yes or no.', null],
      ['maybe', null],
      ['', null],
      ['nobody knows', null],
      ['yesterday', null],
    ];
    for (const [text, expected] of rows) expect(parseYesNo(text), JSON.stringify(text)).to.equal(expected);
  });
});
