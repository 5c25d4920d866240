// Templates, pure: what a template needs from the person installing it and
// what it comes with, the "Save as template" preview grouped by kind, what an
// install raised.
import { reference } from './variables';
import type { Schedule } from './automations';
import type { BudgetLimits } from './budgets';
import type { Agent } from './workspace';

/** A packaged coworker setup (a .rerun-template file): never memories, variable values, tokens or keys. */
export type Template = {
  id: string;
  name: string;
  /** The spend limits its author suggests; the installer takes, changes or clears them. */
  budget?: BudgetLimits;
  description: string;
  author: string;
  category: string;
  /** Metadata only. */
  price: 'free' | 'paid';
  /** A suggestion; empty parts leave the workspace default. */
  model: { provider: string; model: string };
  capabilities: string[];
  ask_first: Record<string, boolean>;
  soul: string;
  skills: { name: string; description: string; files: string[] }[];
  /** Installed paused. */
  schedules: TemplateSchedule[];
  /** Installed with new URLs (a template holds no tokens). */
  triggers: { name: string; instruction: string; methods: string[] }[];
  /** Apps declared on install: the person finishes the sign-in. */
  connectors: { catalog_id: string; name: string }[];
  /** What the agent needs, asked for through credential cards on install; never values. */
  variables: TemplateVariable[];
  /** Paths under files/. */
  files: string[];
  status: 'draft' | 'submitted';
  schema_version: number;
  created_at: string;
  updated_at: string;
};

/** A schedule as a template carries it: what it does and when, not whose it is or its state. */
export type TemplateSchedule = Pick<Schedule, 'name' | 'instruction' | 'kind' | 'cron' | 'timezone' | 'at' | 'catch_up'>;

export type TemplateVariable = { name: string; help: string; url: string };

/** What "Save as template" would put in and leave out, one line each. */
export type TemplatePreview = { included: string[]; left_out: string[] };

/** POST …/templates: a blank template's metadata, or one made from an agent. */
export type NewTemplate =
  | { from_agent: string; name?: string; description?: string; category?: string }
  | { name: string; description?: string; category?: string };

export type TemplatePatch = Partial<Pick<Template, 'name' | 'description' | 'author' | 'category' | 'price'>>;

/** What installing made: the agent and one line per card it raised. */
export type TemplateInstall = { agent: Agent; cards: string[] };

/** What installing asks of the person: apps to sign in to, variables to fill. */
export type TemplateNeeds = {
  /** Names of the apps it declares; each raises a card to finish the sign-in. */
  apps: string[];
  /** Each raises a credential card. */
  variables: TemplateVariable[];
  /** What comes along, counted: "2 skills", "1 schedule, installed paused", … */
  comes: string[];
};

const n = (count: number, one: string, many = `${one}s`) => `${count} ${count === 1 ? one : many}`;

/** "a", "a and b", "a, b and c". */
export function listed(words: string[]): string {
  return words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

export function templateNeeds(t: Template): TemplateNeeds {
  const comes: string[] = [];
  if (t.skills?.length) comes.push(n(t.skills.length, 'skill'));
  if (t.schedules?.length) comes.push(`${n(t.schedules.length, 'schedule')}, installed paused`);
  if (t.triggers?.length) comes.push(`${n(t.triggers.length, 'webhook trigger')}, installed paused`);
  if (t.files?.length) comes.push(n(t.files.length, 'file'));
  return {
    apps: (t.connectors ?? []).map((c) => c.name || c.catalog_id),
    variables: t.variables ?? [],
    comes,
  };
}

/** One line for a card or a confirmation: what the person will be asked for. */
export function needsSummary(t: Template): string {
  const { apps, variables } = templateNeeds(t);
  const asks = [...apps.map((a) => `a sign-in to ${a}`), ...variables.map((v) => reference(v.name))];
  return asks.length ? `Asks for ${listed(asks)}` : 'Nothing to set up';
}

/** Lines of the "Save as template" preview that go in, under one heading. */
export type PreviewGroup = { label: string; items: string[] };

// The kinds of line the server's preview says, in the order shown; a capture is
// the item under the heading, else the whole line is. Anything else: "Other".
const PREVIEW_KINDS: { label: string; re: RegExp }[] = [
  { label: 'Setup', re: /^(?:Soul|Model suggestion|Capabilities|Approval policy)\b/ },
  { label: 'Skills', re: /^Skill (.+)$/ },
  { label: 'Automations', re: /^(?:Scheduled task|Webhook trigger)\b/ },
  { label: 'Apps', re: /^App (.+)$/ },
  { label: 'Files', re: /^Files?: (.+)$/ },
  { label: 'Variables', re: /^Variable names?: (.+)$/ },
];

/** What goes in, grouped under headings (Setup, Skills, Automations, Apps, Files, Variables, Other). */
export function groupPreview(p: TemplatePreview): PreviewGroup[] {
  const groups = [...PREVIEW_KINDS.map((k) => ({ label: k.label, items: [] as string[] })), { label: 'Other', items: [] as string[] }];
  for (const line of p.included ?? []) {
    const i = PREVIEW_KINDS.findIndex((k) => k.re.test(line));
    const m = i < 0 ? null : PREVIEW_KINDS[i]!.re.exec(line);
    groups[i < 0 ? groups.length - 1 : i]!.items.push(m?.[1] ?? line);
  }
  return groups.filter((g) => g.items.length > 0);
}

/** The toast after an install: the agent, and what waits for the person (the server's lines). */
export function installedMessage(name: string, handle: string, cards: string[]): string {
  const who = `${name} (@${handle}) is on the board`;
  if (cards.length === 0) return `${who}. Nothing to set up.`;
  return `${who}. Waiting for you: ${cards.join('; ')}.`;
}
