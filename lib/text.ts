// Text shown to people that may be arbitrarily long (a data value, a line an
// adapter program wrote): cut to a length a line of a report or a log can hold.

/** At most `max` characters, marking the cut. */
export function clip(text: string, max = 160): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
