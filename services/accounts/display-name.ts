/**
 * A person's name as they typed it at sign-up, made safe to store and to put into e-mails (pure).
 * Names are attacker-chosen and end up in the subject and body of a mail sent to any address, so a
 * name must not add headers or lines, hide text behind direction overrides, or carry a link.
 */

export const NAME_MAX_LENGTH = 100;

// Line and paragraph separators become spaces (they separated words); every other control, format
// (bidi overrides, zero-width), private-use or lone-surrogate character is dropped.
const LINE_BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]/g;
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}]/gu;

/** Control and invisible characters removed, whitespace runs collapsed, trimmed; not capped. */
export function cleanName(raw: string): string {
  return raw.replace(LINE_BREAKS, ' ').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();
}

// Mail clients turn a scheme, a www. or a bare domain (an e-mail address has one) into a live link.
// A dotted word like "Jr.Smith" is caught too; its owner can write "Jr. Smith".
const LINK = /[a-z][a-z0-9+.-]*:\/\/|www\.|[\p{L}\p{N}-]\.\p{L}{2,}/iu;

export function containsLink(name: string): boolean {
  return LINK.test(name);
}

/** The name to greet someone with in a mail, or null to greet them without one. */
export function nameForMail(raw: string | null): string | null {
  if (raw === null) return null;
  const name = Array.from(cleanName(raw)).slice(0, NAME_MAX_LENGTH).join('').trim();
  return name.length > 0 && !containsLink(name) ? name : null;
}
