// Workspace variables (pure): the names Settings → Variables accepts.

export const NAME_RULE = 'A–Z, 0–9 and _, starting with a letter, up to 64 characters';

/** What a person types, as a variable name: upper case, spaces and dashes as "_". */
export const normalizeName = (typed: string): string => typed.toUpperCase().replace(/[\s-]+/g, '_');

/** What is wrong with a name; '' when it is fine. */
export function nameError(name: string): string {
  if (!name) return 'Name the variable.';
  if (name.length > 64) return 'Names are at most 64 characters.';
  if (!/^[A-Z]/.test(name)) return 'Start the name with a letter.';
  if (!/^[A-Z][A-Z0-9_]*$/.test(name)) return `Use ${NAME_RULE}.`;
  return '';
}

/** What is wrong with a value; '' when it is fine (4 bytes to 64 KiB). */
export function valueError(value: string): string {
  const bytes = new TextEncoder().encode(value).length;
  if (bytes === 0) return 'Enter the value.';
  if (bytes < 4) return 'Values are at least 4 characters.';
  if (bytes > 64 * 1024) return 'Values are at most 64 KiB.';
  return '';
}

/** How a variable is referenced in commands, headers and connector settings. */
export const reference = (name: string) => `\${${name}}`;
