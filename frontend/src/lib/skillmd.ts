// SKILL.md text (Agent Skills format): YAML front matter between --- lines with
// `name` and `description`, then a markdown body. The Skills tab edits name,
// description and body; every other front-matter field is kept verbatim.

/** error: the SKILL.md does not parse. */
export type SkillSummary = { name: string; description: string; error?: string };

export type Skill = { name: string; description: string; front_matter: string; body: string; files: string[] };

/** body: the whole SKILL.md of that version. */
export type SkillVersion = { version: number; body: string; created_at: string };

export type SkillParts = {
  name: string;
  description: string;
  body: string;
  /** The skill's front matter as it came (all fields); only its other fields are kept. */
  frontMatter?: string;
};

/** Splits a SKILL.md into its front matter (without the --- lines) and body; null when it has none. */
export function splitSkillMd(text: string): { frontMatter: string; body: string } | null {
  const t = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  const lines = t.split('\n');
  if (lines[0]?.trimEnd() !== '---') return null;
  for (let i = 1; i < lines.length; i++) {
    if (lines[i]!.trimEnd() === '---') {
      const fm = lines.slice(1, i);
      return { frontMatter: fm.length ? fm.join('\n') + '\n' : '', body: lines.slice(i + 1).join('\n') };
    }
  }
  return null;
}

/** Top-level entries of a YAML mapping: each key with its line and the indented lines that continue it. */
function entries(frontMatter: string): { key: string | null; lines: string[] }[] {
  const out: { key: string | null; lines: string[] }[] = [];
  const lines = frontMatter.replace(/\r\n/g, '\n').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const line of lines) {
    const top = /^([A-Za-z0-9_][A-Za-z0-9_.-]*|"[^"]*"|'[^']*')\s*:(\s|$)/.exec(line);
    if (top) out.push({ key: top[1]!.replace(/^["']|["']$/g, ''), lines: [line] });
    else if (out.length && (line === '' || /^[\s#]/.test(line) || /^-\s/.test(line))) out[out.length - 1]!.lines.push(line);
    else out.push({ key: null, lines: [line] });
  }
  return out;
}

/** The front matter without its name and description fields, verbatim otherwise. */
export function otherFields(frontMatter: string): string {
  const kept = entries(frontMatter)
    .filter((e) => e.key !== 'name' && e.key !== 'description')
    .flatMap((e) => e.lines);
  // A trailing blank line of a dropped field's block would otherwise stick to the next one.
  while (kept.length && kept[kept.length - 1]!.trim() === '') kept.pop();
  return kept.length ? kept.join('\n') + '\n' : '';
}

/** Reads a plain or quoted one-line scalar field of the front matter (enough for name and description). */
export function readField(frontMatter: string, key: string): string | undefined {
  const e = entries(frontMatter).find((x) => x.key === key);
  if (!e) return undefined;
  const raw = e.lines[0]!.slice(e.lines[0]!.indexOf(':') + 1).trim();
  if (raw.startsWith('"')) {
    try {
      return JSON.parse(raw) as string;
    } catch {
      return raw.slice(1, -1);
    }
  }
  if (raw.startsWith("'")) return raw.slice(1, -1).replace(/''/g, "'");
  if (raw === '|' || raw === '>' || /^[|>][+-]?$/.test(raw)) {
    const rest = e.lines.slice(1).map((l) => l.trim());
    return raw.startsWith('>') ? rest.filter((l) => l).join(' ') : rest.join('\n').trim();
  }
  return raw.replace(/\s+#.*$/, '');
}

/** True when s reads back as the same string written plain in YAML. */
function plainSafe(s: string): boolean {
  if (s === '' || s !== s.trim()) return false;
  if (/[\n\r\t"\\]/.test(s) || /[\u0000-\u001f\u007f]/.test(s)) return false;
  if (/: |:$| #/.test(s)) return false;
  if (/^[-?:,[\]{}#&*!|>'"%@`]/.test(s)) return false;
  // Words YAML reads as something other than text.
  if (/^(true|false|yes|no|on|off|null|~|y|n)$/i.test(s)) return false;
  if (/^[-+]?(\d[\d_]*)?(\.\d+)?([eE][-+]?\d+)?$/.test(s) || /^0[xo]/i.test(s) || /^[-+]?\.(inf|nan)$/i.test(s)) return false;
  return true;
}

/** A YAML scalar for s: plain when that is safe, else double-quoted (JSON escapes are valid YAML). */
export function yamlString(s: string): string {
  return plainSafe(s) ? s : JSON.stringify(s);
}

/**
 * The SKILL.md for these parts: `---`, name, description, the other fields of
 * frontMatter verbatim, `---`, a blank line and the body.
 */
export function composeSkillMd(p: SkillParts): string {
  const others = p.frontMatter ? otherFields(p.frontMatter) : '';
  const desc = p.description.replace(/\s*\n\s*/g, ' ').trim();
  return `---\nname: ${yamlString(p.name.trim())}\ndescription: ${yamlString(desc)}\n${others}---\n\n${bodyForEditing(p.body)}`;
}

/** The body as the editor shows it: without the blank lines composeSkillMd puts after the front matter. */
export function bodyForEditing(body: string): string {
  return body.replace(/^(?:[ \t]*\r?\n)+/, '');
}

/** Reads a whole SKILL.md (e.g. an old version) into parts; null without front matter. */
export function parseSkillMd(text: string): SkillParts | null {
  const s = splitSkillMd(text);
  if (!s) return null;
  return {
    name: readField(s.frontMatter, 'name') ?? '',
    description: readField(s.frontMatter, 'description') ?? '',
    body: bodyForEditing(s.body),
    frontMatter: s.frontMatter,
  };
}

/** The server's rule for skill names: lowercase letters, digits and single hyphens between them, ≤ 64. */
export function skillNameProblem(name: string): string {
  if (name === '') return 'A skill needs a name.';
  if (name.length > 64) return 'At most 64 characters.';
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name)) return 'Lowercase letters, digits and single hyphens between them (like pdf-forms).';
  return '';
}

/**
 * The skill name a typed name is saved as, by the server's rule: "Weekly Report"
 * becomes "weekly-report" (lowercase letters and digits, every other run one
 * hyphen, at most 64). '' when nothing usable is left.
 */
export function skillSlug(typed: string): string {
  const words = typed.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  return words.join('-').slice(0, 64).replace(/-+$/, '');
}
