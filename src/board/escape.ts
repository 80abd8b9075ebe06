import { redactText } from '../security/redact.js';

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

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
