/**
 * The one HTML escape. `escapeHtml` for element content and quoted attribute values;
 * `escapeMarkdownHtml` also turns every character Markdown could act on into an entity, for text a
 * job summary shows inside a Markdown table (an issue title cannot open a tag, a link, an image or a
 * table cell).
 */
const HTML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!);
}

const MARKDOWN_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '|': '&#124;',
  '`': '&#96;',
  '*': '&#42;',
  _: '&#95;',
  '[': '&#91;',
  ']': '&#93;',
  '(': '&#40;',
  ')': '&#41;',
  '!': '&#33;',
  '#': '&#35;',
  '~': '&#126;',
  '\\': '&#92;',
  '@': '&#64;',
};

export function escapeMarkdownHtml(text: string): string {
  return text.replace(/[&<>"'|`*_[\]()!#~\\@]/g, (c) => MARKDOWN_ENTITIES[c]!);
}
