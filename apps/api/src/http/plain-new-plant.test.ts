import { NewPlantSchema, parseJson } from '@plant-store/schema';
import { describe, expect, it } from 'vitest';
import { plainNewPlant } from './plain-new-plant.js';
import { checkInput } from './validate.js';

/** What the codec and the schema make of a line: the value, or the issue. */
function judged(text: string): unknown {
  const checked = checkInput(NewPlantSchema, parseJson(text));
  return 'issue' in checked ? { issue: checked.issue } : checked.output;
}

describe('plainNewPlant', () => {
  it.each([
    '{"id":1,"name":"Fern"}',
    '{"id":0,"name":"x","tag":""}',
    '{"id":-9223372036854775808,"name":"Bottom","tag":"edge"}',
    '{"id":9223372036854775807,"name":"Top"}',
    '{"id":42,"name":"Ünïcödé 🌿 𝔉ern","tag":"日本"}',
    `{"id":7,"name":"${'n'.repeat(255)}","tag":"${'t'.repeat(255)}"}`,
    `{"id":8,"name":"${'🌿'.repeat(127)}"}`,
  ])('reads %s as the codec and the schema do', (line) => {
    expect(plainNewPlant(line)).toEqual(judged(line));
    expect(Object.keys(plainNewPlant(line) ?? {})).toEqual(Object.keys(judged(line) as object));
  });

  it.each([
    ['an id past int64', '{"id":9223372036854775808,"name":"x"}'],
    ['an id below int64', '{"id":-9223372036854775809,"name":"x"}'],
    ['a fraction', '{"id":1.5,"name":"x"}'],
    ['an exponent', '{"id":1e3,"name":"x"}'],
    ['a leading zero', '{"id":01,"name":"x"}'],
    ['minus zero', '{"id":-0,"name":"x"}'],
    ['an id as a string', '{"id":"1","name":"x"}'],
    ['an empty name', '{"id":1,"name":""}'],
    ['a name too long in code units', `{"id":1,"name":"${'🌿'.repeat(128)}"}`],
    ['a name of 256', `{"id":1,"name":"${'n'.repeat(256)}"}`],
    ['an escape', '{"id":1,"name":"a\\"b"}'],
    ['a NUL escape', '{"id":1,"name":"a\\u0000"}'],
    ['a lone surrogate escape', '{"id":1,"name":"\\ud800"}'],
    ['a raw control character', '{"id":1,"name":"a\tb"}'],
    ['a null tag', '{"id":1,"name":"x","tag":null}'],
    ['another key', '{"id":1,"name":"x","color":"green"}'],
    ['a repeated key', '{"id":1,"name":"x","name":"y"}'],
    ['keys in another order', '{"name":"x","id":1}'],
    ['spaces', '{"id": 1, "name": "x"}'],
    ['trailing text', '{"id":1,"name":"x"} '],
  ])('leaves %s to the codec and the schema', (_case, line) => {
    expect(plainNewPlant(line)).toBeUndefined();
  });
});
