import { describe, expect, it } from 'vitest';
import { groupPreview, installedMessage, listed, needsSummary, templateNeeds } from './templates';
import type { Template } from './templates';

function template(over: Partial<Template> = {}): Template {
  return {
    id: 'tp_1',
    name: 'Sales scout',
    description: 'Finds leads',
    author: 'Ada',
    category: 'Sales',
    price: 'free',
    model: { provider: '', model: '' },
    capabilities: [],
    ask_first: {},
    soul: '',
    skills: [],
    schedules: [],
    triggers: [],
    connectors: [],
    variables: [],
    files: [],
    status: 'draft',
    schema_version: 1,
    created_at: '',
    updated_at: '',
    ...over,
  };
}

describe('templateNeeds', () => {
  it('lists the apps and variables it asks for and counts what comes along', () => {
    const t = template({
      connectors: [{ catalog_id: 'github', name: 'GitHub' }, { catalog_id: 'linear', name: '' }],
      variables: [{ name: 'HUBSPOT_TOKEN', help: 'A private app token', url: '' }],
      skills: [{ name: 'triage', description: '', files: [] }, { name: 'pdf', description: '', files: [] }],
      schedules: [{ name: 'Morning', instruction: 'go', kind: 'cron', cron: '0 9 * * *', timezone: 'UTC', at: null, catch_up: 'once' }],
      triggers: [{ name: 'New lead', instruction: 'look', methods: ['POST'] }],
      files: ['notes.md'],
    });
    const needs = templateNeeds(t);
    expect(needs.apps).toEqual(['GitHub', 'linear']);
    expect(needs.variables.map((v) => v.name)).toEqual(['HUBSPOT_TOKEN']);
    expect(needs.comes).toEqual(['2 skills', '1 schedule, installed paused', '1 webhook trigger, installed paused', '1 file']);
  });

  it('has nothing to list for a blank template, even with missing lists', () => {
    const t = { ...template(), skills: undefined, connectors: undefined } as unknown as Template;
    expect(templateNeeds(t)).toEqual({ apps: [], variables: [], comes: [] });
  });
});

describe('needsSummary', () => {
  it('names each sign-in and variable reference', () => {
    const t = template({
      connectors: [{ catalog_id: 'github', name: 'GitHub' }],
      variables: [
        { name: 'A_KEY', help: '', url: '' },
        { name: 'B_KEY', help: '', url: '' },
      ],
    });
    expect(needsSummary(t)).toBe('Asks for a sign-in to GitHub, ${A_KEY} and ${B_KEY}');
  });

  it('says when there is nothing to set up', () => {
    expect(needsSummary(template())).toBe('Nothing to set up');
  });
});

describe('listed', () => {
  it.each([
    [[], ''],
    [['a'], 'a'],
    [['a', 'b'], 'a and b'],
    [['a', 'b', 'c'], 'a, b and c'],
  ])('%j → %s', (words, want) => expect(listed(words)).toBe(want));
});

describe('groupPreview', () => {
  it('groups what goes in by kind, in a fixed order, keeping the server\'s words', () => {
    const groups = groupPreview({
      included: [
        'Soul (about 200 words)',
        'Model suggestion: openai / gpt-4o',
        'Capabilities: files, web',
        'Approval policy (ask first): none',
        'Skill lead-triage (+2 files)',
        'Skill pdf-tools',
        'Scheduled task “Morning digest”, every weekday at 09:00 (installed paused)',
        'Webhook trigger “New lead” (its definition; installing makes a new URL)',
        'App GitHub (declared; the person signs in after installing)',
        'Files: 3 (2.0 KiB)',
        'Variable names: HUBSPOT_TOKEN, SLACK_URL (never their values; installing asks for them)',
        'Something new the server says',
      ],
      left_out: ['Memories'],
    });
    expect(groups).toEqual([
      { label: 'Setup', items: ['Soul (about 200 words)', 'Model suggestion: openai / gpt-4o', 'Capabilities: files, web', 'Approval policy (ask first): none'] },
      { label: 'Skills', items: ['lead-triage (+2 files)', 'pdf-tools'] },
      {
        label: 'Automations',
        items: [
          'Scheduled task “Morning digest”, every weekday at 09:00 (installed paused)',
          'Webhook trigger “New lead” (its definition; installing makes a new URL)',
        ],
      },
      { label: 'Apps', items: ['GitHub (declared; the person signs in after installing)'] },
      { label: 'Files', items: ['3 (2.0 KiB)'] },
      { label: 'Variables', items: ['HUBSPOT_TOKEN, SLACK_URL (never their values; installing asks for them)'] },
      { label: 'Other', items: ['Something new the server says'] },
    ]);
  });

  it('leaves out empty groups and reads a missing list as empty', () => {
    expect(groupPreview({ included: ['Soul (0 bytes)'], left_out: [] })).toEqual([{ label: 'Setup', items: ['Soul (0 bytes)'] }]);
    expect(groupPreview({} as never)).toEqual([]);
  });
});

describe('installedMessage', () => {
  it('names the agent and the cards waiting', () => {
    expect(installedMessage('Sales scout', 'sales-scout-2', ['Enter HUBSPOT_TOKEN', '1 scheduled task paused until you turn it on'])).toBe(
      'Sales scout (@sales-scout-2) is on the board. Waiting for you: Enter HUBSPOT_TOKEN; 1 scheduled task paused until you turn it on.',
    );
  });

  it('says when nothing waits', () => {
    expect(installedMessage('Ada', 'ada', [])).toBe('Ada (@ada) is on the board. Nothing to set up.');
  });
});
