import { describe, expect, it } from 'vitest';
import { bodyForEditing, composeSkillMd, otherFields, parseSkillMd, readField, skillNameProblem, skillSlug, splitSkillMd, yamlString } from './skillmd';

describe('composeSkillMd', () => {
  it('writes name, description, a blank line and the body', () => {
    expect(composeSkillMd({ name: 'triage-inbox', description: 'Sorts the inbox', body: '# Steps\n\n1. Read\n' })).toBe(
      '---\nname: triage-inbox\ndescription: Sorts the inbox\n---\n\n# Steps\n\n1. Read\n',
    );
  });

  it('quotes descriptions YAML would misread', () => {
    const md = composeSkillMd({ name: 'a', description: 'Use when: the inbox is full # really', body: '' });
    expect(md).toContain('description: "Use when: the inbox is full # really"\n');
    expect(yamlString('yes')).toBe('"yes"');
    expect(yamlString('12')).toBe('"12"');
    expect(yamlString('- a list?')).toBe('"- a list?"');
    expect(yamlString('say "hi"')).toBe('"say \\"hi\\""');
    expect(yamlString('Fill PDF forms, then check them')).toBe('Fill PDF forms, then check them');
    expect(readField(splitSkillMd(md)!.frontMatter, 'description')).toBe('Use when: the inbox is full # really');
  });

  it('keeps the other front-matter fields verbatim, in order', () => {
    const fm = 'name: pdf-tools\nlicense: MIT\ndescription: >\n  Folded text\n  over lines\nallowed-tools:\n  - read_file\n  - write_file\nmetadata:\n  version: "1.2"\n';
    expect(otherFields(fm)).toBe('license: MIT\nallowed-tools:\n  - read_file\n  - write_file\nmetadata:\n  version: "1.2"\n');
    const md = composeSkillMd({ name: 'pdf-tools', description: 'New: text', body: 'Body', frontMatter: fm });
    expect(md).toBe(
      '---\nname: pdf-tools\ndescription: "New: text"\nlicense: MIT\nallowed-tools:\n  - read_file\n  - write_file\nmetadata:\n  version: "1.2"\n---\n\nBody',
    );
  });

  it('round-trips through parseSkillMd without growing blank lines', () => {
    const parts = { name: 'triage-inbox', description: 'Sorts: mail, chats', body: '# Triage\n\n- one\n', frontMatter: 'name: x\nlicense: Apache-2.0\n' };
    const once = composeSkillMd(parts);
    const back = parseSkillMd(once)!;
    expect(back.name).toBe('triage-inbox');
    expect(back.description).toBe('Sorts: mail, chats');
    expect(back.body).toBe('# Triage\n\n- one\n');
    expect(composeSkillMd(back)).toBe(once);
    expect(readField(back.frontMatter!, 'license')).toBe('Apache-2.0');
  });

  it('folds a multi-line description onto one line', () => {
    expect(composeSkillMd({ name: 'a', description: 'one\ntwo ', body: '' })).toContain('description: one two\n');
  });
});

describe('reading SKILL.md', () => {
  it('splits front matter and body, or says there is none', () => {
    expect(splitSkillMd('---\r\nname: a\r\n---\r\nhi')).toEqual({ frontMatter: 'name: a\n', body: 'hi' });
    expect(splitSkillMd('# no front matter')).toBeNull();
    expect(splitSkillMd('---\nname: a\n')).toBeNull();
    expect(parseSkillMd('nope')).toBeNull();
  });

  it('reads plain, quoted and block fields', () => {
    expect(readField("name: a\ndescription: 'it''s ok'\n", 'description')).toBe("it's ok");
    expect(readField('description: plain # comment\n', 'description')).toBe('plain');
    expect(readField('description: |\n  line one\n  line two\n', 'description')).toBe('line one\nline two');
    expect(readField('name: a\n', 'description')).toBeUndefined();
  });

  it('drops only the leading blank lines of a body', () => {
    expect(bodyForEditing('\n\n# T\n\nx\n')).toBe('# T\n\nx\n');
  });
});

describe('skillNameProblem', () => {
  it('follows the server rule', () => {
    expect(skillNameProblem('pdf-forms')).toBe('');
    expect(skillNameProblem('')).toMatch(/needs a name/);
    expect(skillNameProblem('PDF')).toMatch(/Lowercase/);
    expect(skillNameProblem('a--b')).toMatch(/Lowercase/);
    expect(skillNameProblem('a'.repeat(65))).toMatch(/64/);
  });
});

describe('skillSlug', () => {
  it('turns a typed name into a valid skill name', () => {
    expect(skillSlug('Weekly Report')).toBe('weekly-report');
    expect(skillSlug('pdf-forms')).toBe('pdf-forms');
    expect(skillSlug('  Q3 -- sales: numbers!  ')).toBe('q3-sales-numbers');
    expect(skillSlug('db_backup_v2')).toBe('db-backup-v2');
    expect(skillSlug('¡¿?!')).toBe('');
    expect(skillNameProblem(skillSlug('ab '.repeat(40)))).toBe('');
  });
});
