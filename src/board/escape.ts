import { escapeHtml } from '../security/html.js';
import { redactText } from '../security/redact.js';

/** Every string the HTML report shows goes through here: redacted first, then escaped. */
export function h(value: string | number | undefined): string {
  if (value === undefined) return '';
  return escapeHtml(redactText(String(value)));
}

/** An attribute-safe identifier fragment (for ids and data-testid): [a-z0-9-] only. */
export function slug(value: string): string {
  return (
    value
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'x'
  );
}
