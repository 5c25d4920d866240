// The light / dark theme: "system" follows the computer's setting, "light" and
// "dark" hold whatever it says. The choice is this computer's (localStorage);
// the page carries the resolved theme as <html data-theme="light|dark">, which
// app.css reads.

export type ThemeChoice = 'system' | 'light' | 'dark';
export const THEME_CHOICES: { id: ThemeChoice; label: string }[] = [
  { id: 'system', label: 'Same as the computer' },
  { id: 'light', label: 'Light' },
  { id: 'dark', label: 'Dark' },
];

const KEY = 'rerun.theme';

/** The theme the page shows for a choice, given whether the computer prefers dark. */
export function resolveTheme(choice: ThemeChoice, prefersDark: boolean): 'light' | 'dark' {
  if (choice === 'light' || choice === 'dark') return choice;
  return prefersDark ? 'dark' : 'light';
}

/** A stored value read back as a choice; anything unknown is "system". */
export function parseThemeChoice(v: string | null | undefined): ThemeChoice {
  return v === 'light' || v === 'dark' ? v : 'system';
}

function stored(): ThemeChoice {
  try {
    return parseThemeChoice(localStorage.getItem(KEY));
  } catch {
    return 'system';
  }
}

let current: ThemeChoice = 'system';
let media: MediaQueryList | null = null;

function paint() {
  const dark = media?.matches ?? false;
  document.documentElement.dataset.theme = resolveTheme(current, dark);
}

/** Applies the stored choice and follows the computer's setting from now on; call once at start. */
export function startTheme() {
  current = stored();
  media = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
  media?.addEventListener('change', paint);
  paint();
}

export function themeChoice(): ThemeChoice {
  return current;
}

export function setThemeChoice(choice: ThemeChoice) {
  current = choice;
  try {
    if (choice === 'system') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, choice);
  } catch {
    // Private windows may refuse storage: the choice still holds until reload.
  }
  paint();
}
