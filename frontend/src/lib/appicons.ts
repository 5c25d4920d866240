// App icons (pure): what the tile of an app shows. A registry app's own image
// when it gave a safe one, a built-in app's brand mark bundled from
// simple-icons, else its initial. Named imports only, so the build keeps just
// these few marks out of the thousands in the package.
import {
  siAirtable,
  siAtlassian,
  siBrave,
  siCircleci,
  siCloudflare,
  siFigma,
  siGit,
  siGithub,
  siGmail,
  siGooglecalendar,
  siHubspot,
  siHuggingface,
  siLinear,
  siModelcontextprotocol,
  siMongodb,
  siNotion,
  siObsidian,
  siPerplexity,
  siPostgresql,
  siSentry,
  siStripe,
  siSupabase,
  siTodoist,
  siUpstash,
  siVercel,
  siZapier,
  type SimpleIcon,
} from 'simple-icons';
import type { AppSource } from './apps';

/**
 * The bundled mark of each built-in app, by catalog id
 * (backend/connector/catalog.yaml). The reference servers of the MCP project
 * wear its mark; an app whose brand simple-icons does not carry (Slack,
 * Playwright, Exa…) keeps its letter.
 */
export const BUILTIN_ICONS: Readonly<Record<string, SimpleIcon>> = {
  filesystem: siModelcontextprotocol,
  fetch: siModelcontextprotocol,
  git: siGit,
  github: siGithub,
  postgres: siPostgresql,
  'brave-search': siBrave,
  memory: siModelcontextprotocol,
  'sequential-thinking': siModelcontextprotocol,
  time: siModelcontextprotocol,
  everything: siModelcontextprotocol,
  stripe: siStripe,
  notion: siNotion,
  linear: siLinear,
  sentry: siSentry,
  atlassian: siAtlassian,
  'cloudflare-docs': siCloudflare,
  cloudflare: siCloudflare,
  supabase: siSupabase,
  vercel: siVercel,
  figma: siFigma,
  airtable: siAirtable,
  hubspot: siHubspot,
  zapier: siZapier,
  todoist: siTodoist,
  obsidian: siObsidian,
  perplexity: siPerplexity,
  context7: siUpstash,
  'hugging-face': siHuggingface,
  circleci: siCircleci,
  mongodb: siMongodb,
  gmail: siGmail,
  'google-calendar': siGooglecalendar,
};

/** The tile backgrounds the marks sit on (app.css --surface-2, light and dark). */
const TILE = { light: '#f6f7f9', dark: '#22252c' } as const;

/** Below this contrast with its tile a brand colour all but vanishes: the text colour stands in. */
const MIN_CONTRAST = 1.6;

export type AppIconView =
  | { kind: 'image'; src: string }
  /** A bundled mark: its 24×24 path, and its colour on the light and dark tile ('currentColor' where the brand's is too faint). */
  | { kind: 'brand'; title: string; path: string; light: string; dark: string }
  | { kind: 'letter'; letter: string };

/**
 * Whether an image URL from the registry may go in an <img>: https with a
 * host, or an inline image. Anything else (http, javascript:, a data: URL
 * that is no image) is dropped for the letter.
 */
export function safeIconUrl(src: string | undefined): boolean {
  if (!src) return false;
  if (/^data:image\/(png|jpeg|gif|webp|svg\+xml);base64,[a-z0-9+/=\s]+$/i.test(src)) return true;
  try {
    const u = new URL(src);
    return u.protocol === 'https:' && u.hostname !== '';
  } catch {
    return false;
  }
}

/** What the tile of an app shows. */
export function appIcon(app: { id: string; name: string; source?: AppSource | string; icon?: string }): AppIconView {
  if (app.source === 'registry' && safeIconUrl(app.icon)) return { kind: 'image', src: app.icon! };
  const mark = app.source === 'builtin' ? BUILTIN_ICONS[app.id] : undefined;
  if (mark) return { kind: 'brand', title: mark.title, path: mark.path, light: brandColor(mark.hex, TILE.light), dark: brandColor(mark.hex, TILE.dark) };
  return { kind: 'letter', letter: letterOf(app.name) };
}

/** The first letter of a name, capitalised ('?' for none). */
export function letterOf(name: string): string {
  const first = [...name.trim()][0];
  return first ? first.toUpperCase() : '?';
}

/** The brand colour (#RRGGBB) on a tile, or currentColor when the two nearly match. */
export function brandColor(hex: string, tile: string): string {
  return contrast(hex, tile) < MIN_CONTRAST ? 'currentColor' : `#${hex.replace(/^#/, '').toLowerCase()}`;
}

/** The WCAG contrast ratio of two #RRGGBB colours (1 to 21). */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

function luminance(hex: string): number {
  const h = hex.replace(/^#/, '');
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(h.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
